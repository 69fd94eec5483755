//! `tooltape import-vcr FILE --provider P --out PATH`: converts and writes one cassette.

use std::path::Path;
use tooltape::{Provider, Secrets, import_vcr};

/// `tooltape import-vcr FILE --provider P --out PATH`: converts, redacts, scans, writes.
pub fn run(file: &Path, provider: &str, out: &Path) -> i32 {
    let Some(provider) = Provider::from_slug(provider) else {
        let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
        eprintln!(
            "unknown provider `{provider}`; expected one of {}",
            all.join(", ")
        );
        return 2;
    };
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}:1:1: cannot read: {e}", file.display());
            return 2;
        }
    };
    let cassette = match import_vcr(file, &text, provider) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}\n  is it a vcrpy/pytest-recording YAML cassette?");
            return 1;
        }
    };
    let n = cassette.interactions.len();
    match tooltape::write_cassette(out, out, cassette, &Secrets::from_env()) {
        Ok(()) => {
            outln!(
                "{}: {n} interaction{} imported (provenance: imported)",
                out.display(),
                if n == 1 { "" } else { "s" }
            );
            0
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}
