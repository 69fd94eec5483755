//! `tooltape matrix`: the field in two shards, merged, equals the unsharded run; the merge
//! refuses a missing shard; a run against itself has no regression; the page names the systems
//! and classes.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::scratch::{Scratch, bin, repo};

fn tooltape(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(bin())
        .current_dir(repo())
        .args(args)
        .env("TMPDIR", dir)
        .output()
        .expect("tooltape runs")
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every trial's name and cell, system by system.
fn cells(doc: &Value) -> Vec<(String, Value)> {
    (doc["systems"].as_array().unwrap().iter())
        .flat_map(|s| s["trials"].as_array().unwrap().iter())
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["cell"].clone()))
        .collect()
}

#[test]
fn two_shards_merged_are_the_unsharded_run_and_diff_against_itself_is_clean() {
    let dir = Scratch::new("matrix");
    let p = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let run = |extra: &[&str], out: &str| {
        let mut args = vec![
            "matrix",
            "--systems",
            "gateway:tooltape,client:tooltape",
            "--filter",
            "c05",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out]);
        let o = tooltape(&dir, &args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(&["--shard", "1/2"], &p("a.json"));
    run(&["--shard", "2/2"], &p("b.json"));
    run(&[], &p("whole.json"));
    let (a, b) = (json(&dir.join("a.json")), json(&dir.join("b.json")));
    assert!(
        !cells(&a).is_empty() && !cells(&b).is_empty(),
        "each shard ran a part"
    );
    let o = tooltape(
        &dir,
        &[
            "matrix",
            "merge",
            &p("a.json"),
            &p("b.json"),
            "--out",
            &p("m.json"),
            "--html",
            &p("m.html"),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (m, whole) = (json(&dir.join("m.json")), json(&dir.join("whole.json")));
    assert_eq!(cells(&m), cells(&whole));
    assert_eq!(m["systems"].as_array().unwrap().len(), 2);
    for (x, y) in m["systems"]
        .as_array()
        .unwrap()
        .iter()
        .zip(whole["systems"].as_array().unwrap())
    {
        assert_eq!(x["causes"], y["causes"]);
        assert_eq!(x["summary"], y["summary"]);
        assert_eq!(x["version"], y["version"]);
    }
    assert_eq!(m["tooltape"], env!("CARGO_PKG_VERSION"));
    assert!(m.get("shard").is_none());
    // The page: both systems and the c05 case's class.
    let page = std::fs::read_to_string(dir.join("m.html")).unwrap();
    let tree = roxmltree::Document::parse(page.trim_start_matches("<!DOCTYPE html>\n")).unwrap();
    let systems: Vec<&str> = tree
        .descendants()
        .filter_map(|n| n.attribute("data-system"))
        .collect();
    assert_eq!(systems, ["gateway:tooltape", "client:tooltape"]);
    let classes: Vec<&str> = tree
        .descendants()
        .filter_map(|n| n.attribute("data-class"))
        .collect();
    assert!(
        classes.contains(&"class 5") && classes.contains(&"class 18"),
        "{classes:?}"
    );
    assert!(
        tree.descendants()
            .any(|n| n.attribute("data-case") == Some("c05_no_params_empty_string"))
    );
    // No regression against itself.
    let o = tooltape(&dir, &["matrix", "diff", &p("m.json"), &p("m.json")]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A missing shard is refused, naming it.
    let o = tooltape(&dir, &["matrix", "merge", &p("a.json")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("shard 2/2 missing"));
}

#[test]
fn diff_exits_1_when_a_root_cause_appeared() {
    let dir = Scratch::new("matrix-diff");
    let doc = |causes: Value| {
        serde_json::json!({"tooltape": "0.1.0", "date": "2026-11-26T00:00:00Z", "filter": null,
            "plan": [{"system": "gateway:x", "trials": 0}],
            "systems": [{"system": "gateway:x", "kind": "gateway", "target": "x", "version": null,
                "routes": [], "summary": "", "status": "passed", "causes": causes, "trials": []}]})
    };
    let old = dir.join("old.json");
    let new = dir.join("new.json");
    std::fs::write(&old, doc(serde_json::json!([])).to_string()).unwrap();
    std::fs::write(&new, doc(serde_json::json!([{"id": "x-1", "title": "t", "routes": ["chat→gemini"], "trials": ["k"]}])).to_string()).unwrap();
    let (o, n) = (old.to_string_lossy(), new.to_string_lossy());
    let r = tooltape(&dir, &["matrix", "diff", &o, &n, "--format", "json"]);
    assert_eq!(r.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["systems"][0]["appeared"][0]["id"], "x-1");
    assert_eq!(
        tooltape(&dir, &["matrix", "diff", &n, &o]).status.code(),
        Some(0)
    );
}
