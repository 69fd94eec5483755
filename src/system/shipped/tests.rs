//! Unit tests of the shipped targets: every file of `gateways/`, `clients/` and `servers/` is
//! embedded byte for byte, the built-in names are the profiles, and the written-out folder is the same tree.

use std::path::Path;

use super::{SHIPPED, builtin, builtin_names, write_files};

/// Every file under `dir`, as `dir`'s name joined with its path (`clients/openai/driver.py`),
/// leaving out what build.rs leaves out.
fn on_disk(base: &Path, folder: &str) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__pycache__" || name == "node_modules" {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if !name.ends_with(".pyc") {
                let rel = p.strip_prefix(base).unwrap();
                out.push(
                    rel.iter()
                        .map(|c| c.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(&base.join(folder), base, &mut out);
    out
}

#[test]
fn every_file_of_gateways_clients_and_servers_is_built_in() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut want = on_disk(repo, "gateways");
    want.extend(on_disk(repo, "clients"));
    want.extend(on_disk(repo, "servers"));
    want.sort();
    let mut have: Vec<String> = SHIPPED.iter().map(|(p, _)| (*p).to_string()).collect();
    have.sort();
    assert_eq!(have, want);
    for (rel, text) in SHIPPED {
        assert_eq!(
            std::fs::read_to_string(repo.join(rel)).unwrap(),
            *text,
            "{rel}"
        );
    }
    for must in [
        "clients/python/tooltape_driver.py",
        "clients/node/tooltape_driver.mjs",
        "gateways/start-tensorzero.py",
    ] {
        assert!(have.iter().any(|p| p == must), "{must}");
    }
}

#[test]
fn the_built_in_names_are_the_profiles_of_each_folder() {
    let clients = builtin_names("clients");
    assert!(clients.contains(&"openai") && clients.contains(&"vercel-ai"));
    // Helper folders and the drivers under clients/NAME/ are not profiles.
    assert!(!clients.iter().any(|n| n.contains('/') || *n == "python"));
    let gateways = builtin_names("gateways");
    assert!(gateways.contains(&"litellm") && gateways.contains(&"tensorzero"));
    assert!(!gateways.contains(&"start-tensorzero"));
    assert!(
        builtin("gateways", "litellm")
            .unwrap()
            .contains("[[routes]]")
    );
    assert_eq!(builtin("clients", "no-such-library"), None);
}

#[test]
fn the_written_out_folder_is_the_shipped_tree() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(tmp.path()).unwrap();
    for (rel, text) in SHIPPED {
        assert_eq!(
            std::fs::read_to_string(tmp.path().join(rel)).unwrap(),
            *text
        );
    }
    // A driver finds its helper as in the repository: `clients/NAME/../python`.
    assert!(
        tmp.path()
            .join("clients/openai/../python/tooltape_driver.py")
            .is_file()
    );
}
