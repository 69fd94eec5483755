//! `tooltape import-vcr FILE --provider P --out PATH`: converts and writes one cassette.

use super::exit;
use std::path::Path;
use tooltape::{Provider, redact::Secrets};

/// Whether `--out` may be written: nothing there, or this file's earlier import (or `--force`
/// over a regular file). A symlink or anything not a regular file is never replaced.
fn check_out(file: &Path, out: &Path, force: bool) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: cannot inspect --out: {e}", out.display())),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        return Err(format!(
            "{}: --out is a symbolic link: refusing to replace it (write to the real path)",
            out.display()
        ));
    }
    if !meta.is_file() {
        return Err(format!(
            "{}: --out exists and is not a regular file: refusing to replace it",
            out.display()
        ));
    }
    if force {
        return Ok(());
    }
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ours = tooltape::cassette::load(out)
        .ok()
        .flatten()
        .is_some_and(|(c, _)| {
            c.provenance.kind == tooltape::cassette::ProvenanceKind::Imported
                && c.provenance.source.as_deref() == Some(&format!("vcrpy cassette {name}"))
        });
    if ours {
        return Ok(());
    }
    Err(format!(
        "{}: --out exists and is not an earlier import of {}: refusing to replace it (pass --force to overwrite it)",
        out.display(),
        file.display()
    ))
}

/// `tooltape import-vcr FILE --provider P --out PATH`: converts, redacts, scans, writes.
pub fn run(file: &Path, provider: &str, out: &Path, force: bool) -> i32 {
    let Some(provider) = Provider::from_slug(provider) else {
        let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
        eprintln!(
            "unknown provider `{provider}`; expected one of {}",
            all.join(", ")
        );
        return exit::ERROR;
    };
    if let Err(e) = check_out(file, out, force) {
        eprintln!("{e}");
        return exit::FAILED;
    }
    // Temporary files a killed import left beside --out.
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
    tooltape::cassette::clean_stale_temps(dir.unwrap_or(Path::new(".")), false);
    let text = match tooltape::input::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}:1:1: {e}", file.display());
            return exit::ERROR;
        }
    };
    let cassette = match tooltape::import_vcr::convert(file, &text, provider) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}\n  is it a vcrpy/pytest-recording YAML cassette?");
            return exit::FAILED;
        }
    };
    let n = cassette.interactions.len();
    match tooltape::record::write_cassette(out, out, cassette, &Secrets::from_env()) {
        Ok(()) => {
            outln!(
                "{}: {n} interaction{} imported (provenance: imported)",
                out.display(),
                if n == 1 { "" } else { "s" }
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("{e}");
            exit::FAILED
        }
    }
}
