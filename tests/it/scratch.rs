//! Scratch project roots for tests: an emptied temporary folder, optionally holding
//! `cases/providers.toml`, every tool and the chosen cases copied from the repository.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// An empty folder `tooltape-TAG-PID` in the temporary directory (emptied if it existed).
pub fn folder(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("tooltape-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root
}

/// A scratch root with the provider table, every tool, and `cases` (names without `.toml`).
pub fn root_with_cases(tag: &str, cases: &[&str]) -> PathBuf {
    let root = folder(tag);
    std::fs::create_dir_all(root.join("cases/tools")).unwrap();
    let src = repo().join("cases");
    std::fs::copy(
        src.join("providers.toml"),
        root.join("cases/providers.toml"),
    )
    .unwrap();
    for e in std::fs::read_dir(src.join("tools")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, root.join("cases/tools").join(p.file_name().unwrap())).unwrap();
    }
    for c in cases {
        let f = format!("{c}.toml");
        std::fs::copy(src.join(&f), root.join("cases").join(&f)).unwrap();
    }
    root
}
