//! Embeds what tooltape ships into the binary, so `tooltape` runs from a folder that holds no
//! checkout: the case corpus (`cases/`: case files, tools, the provider table, the schema and
//! README; `case::corpus`), and the shipped targets (`gateways/`, `clients/`, `servers/`: every profile
//! with its drivers, driver helpers and launcher scripts; `system::shipped`). Writes
//! `$OUT_DIR/corpus.rs` and `$OUT_DIR/shipped.rs`: one `(path, text)` per file, sorted. The
//! folders are enumerated here, so a profile dropped into `gateways/` or `clients/` is built in
//! without touching Rust; Cargo reruns this when anything under them changes.

use std::path::{Path, PathBuf};

/// Every file under `dir` that `keep` accepts; hidden entries, `__pycache__` and
/// `node_modules` (a driver run's leftovers) are skipped.
fn files(dir: &Path, keep: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "__pycache__" || name == "node_modules" {
            continue;
        }
        if p.is_dir() {
            files(&p, keep, out);
        } else if keep(&name) {
            out.push(p);
        }
    }
}

/// `&[("FOLDER/…", include_str!(…)), …]` for the files of `folders`; `strip` drops the folder
/// name from the paths (the corpus is named under `cases/`).
fn embed(manifest: &Path, folders: &[&str], strip: bool, keep: &dyn Fn(&str) -> bool) -> String {
    let mut found = Vec::new();
    for folder in folders {
        println!("cargo:rerun-if-changed={folder}");
        files(&manifest.join(folder), keep, &mut found);
    }
    found.sort();
    let mut src = String::from("&[\n");
    for p in &found {
        let rel: Vec<_> = (p.strip_prefix(manifest).expect("under the manifest"))
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let shown = if strip { &rel[1..] } else { &rel[..] };
        // Through CARGO_MANIFEST_DIR, not this run's absolute path: Cargo's build-script output
        // is shared by a checkout moved or copied onto the same target folder.
        src.push_str(&format!(
            "    ({:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),\n",
            shown.join("/"),
            format!("/{}", rel.join("/"))
        ));
    }
    src.push_str("]\n");
    src
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-changed=build.rs");
    let case_file = |name: &str| {
        Path::new(name)
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "toml" | "json" | "md"))
    };
    let corpus = embed(&manifest, &["cases"], true, &case_file);
    std::fs::write(out.join("corpus.rs"), corpus).expect("write $OUT_DIR/corpus.rs");
    // Every file of the targets' folders but compiled leftovers: profiles, drivers in any
    // language, their package manifests and launchers.
    let target_file = |name: &str| !name.ends_with(".pyc");
    let shipped = embed(
        &manifest,
        &["gateways", "clients", "servers"],
        false,
        &target_file,
    );
    std::fs::write(out.join("shipped.rs"), shipped).expect("write $OUT_DIR/shipped.rs");
}
