//! Embeds the shipped case corpus (`cases/`: case files, tools, the provider table, the schema
//! and README) into the binary, so `tooltape` runs from a folder that holds no `cases/`
//! (`case::corpus`). Writes `$OUT_DIR/corpus.rs`: one `(path under cases/, text)` per file,
//! sorted. Cargo reruns this when anything under `cases/` changes (a new file included).

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "toml" | "json" | "md"))
        {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let cases = manifest.join("cases");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cases");
    let mut found = Vec::new();
    files(&cases, &mut found);
    found.sort();
    let mut src = String::from("&[\n");
    for p in &found {
        let rel = p.strip_prefix(&cases).expect("under cases/");
        let rel: Vec<_> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        // Through CARGO_MANIFEST_DIR, not this run's absolute path: Cargo's build-script output
        // is shared by a checkout moved or copied onto the same target folder.
        src.push_str(&format!(
            "    ({:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),\n",
            rel.join("/"),
            format!("/cases/{}", rel.join("/"))
        ));
    }
    src.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("corpus.rs");
    std::fs::write(out, src).expect("write $OUT_DIR/corpus.rs");
}
