//! `tooltape import-vcr FILE --provider P --out PATH`: converts and writes one cassette.

use super::ImportVcrArgs;
use super::exit::{CliError, CommandResult};
use super::select::provider_arg;
use std::path::Path;
use tooltape::redact::Secrets;

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

/// `tooltape import-vcr FILE --provider P --out PATH`: converts, redacts, scans, writes. Exit 1
/// when `--out` may not be written, the file is not a cassette, or the cassette is refused.
pub fn run(a: &ImportVcrArgs) -> CommandResult {
    let (file, out) = (a.file.as_path(), a.out.as_path());
    let provider = provider_arg(&a.provider)?;
    check_out(file, out, a.force).map_err(CliError::FailedWith)?;
    // Temporary files a killed import left beside --out.
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
    tooltape::cassette::clean_stale_temps(dir.unwrap_or(Path::new(".")), false);
    let text = tooltape::input::read_to_string(file)
        .map_err(|e| format!("{}:1:1: {e}", file.display()))?;
    let cassette = tooltape::import_vcr::convert(file, &text, provider).map_err(|e| {
        CliError::FailedWith(format!(
            "{e}\n  is it a vcrpy/pytest-recording YAML cassette?"
        ))
    })?;
    let n = cassette.interactions.len();
    tooltape::record::write_cassette(out, out, cassette, &Secrets::from_env())
        .map_err(|e| CliError::FailedWith(e.to_string()))?;
    outln!(
        "{}: {n} interaction{} imported (provenance: imported)",
        out.display(),
        if n == 1 { "" } else { "s" }
    );
    Ok(())
}
