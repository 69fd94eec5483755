//! The composite GitHub Action (`action.yml`): its run steps' commands, run here in order with
//! the local binary on PATH (`install: none`), as a runner would run them: the report written,
//! tooltape's exit code kept, a bad input refused; the upload step uploads that report.

use std::collections::BTreeMap;
use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use crate::scratch::{Scratch, bin, repo};

fn action() -> Yaml {
    let text = std::fs::read_to_string(repo().join("action.yml")).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

/// `${{ inputs.NAME }}` filled from `inputs`.
fn fill(s: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = s.to_string();
    for (k, v) in inputs {
        out = out.replace(&format!("${{{{ inputs.{k} }}}}"), v);
    }
    out
}

/// Runs the action's run steps with `given` over the inputs' defaults; the exit code of the
/// first step that fails (0 when none does), and the upload step's `path`.
fn run_action(dir: &Path, given: &[(&str, &str)]) -> (i32, String) {
    let a = action();
    let mut inputs = BTreeMap::new();
    for (k, v) in a["inputs"].as_hash().unwrap() {
        let default = v["default"].as_str().unwrap_or_default();
        inputs.insert(k.as_str().unwrap().to_string(), default.to_string());
    }
    for (k, v) in given {
        assert!(inputs.contains_key(*k), "action.yml has no input `{k}`");
        inputs.insert(k.to_string(), v.to_string());
    }
    let path = format!(
        "{}:{}",
        Path::new(bin()).parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let steps = a["runs"]["steps"].as_vec().unwrap();
    let mut upload = String::new();
    for step in steps.iter().filter(|s| s["uses"].as_str().is_some()) {
        let uses = step["uses"].as_str().unwrap();
        assert!(uses.starts_with("actions/upload-artifact@"), "{uses}");
        let always = step["if"].as_str();
        assert_eq!(always, Some("always()"), "uploaded on failure too");
        upload = fill(step["with"]["path"].as_str().unwrap(), &inputs);
    }
    for step in steps.iter().filter(|s| s["uses"].as_str().is_none()) {
        assert_eq!(step["shell"].as_str(), Some("bash"));
        let mut cmd = std::process::Command::new("bash");
        cmd.arg("-c")
            .arg(step["run"].as_str().unwrap())
            .current_dir(repo());
        cmd.env("PATH", &path).env("TMPDIR", dir);
        if let Some(env) = step["env"].as_hash() {
            for (k, v) in env {
                cmd.env(k.as_str().unwrap(), fill(v.as_str().unwrap(), &inputs));
            }
        }
        let code = cmd.status().unwrap().code().unwrap_or(-1);
        if code != 0 {
            return (code, upload);
        }
    }
    (0, upload)
}

#[test]
fn the_actions_steps_run_the_command_and_upload_its_report() {
    let dir = Scratch::new("action");
    let report = dir.join("report.xml");
    let r = report.to_string_lossy();
    let (code, upload) = run_action(
        &dir,
        &[
            ("install", "none"),
            ("command", "gateway"),
            ("args", "tooltape c05 --filter-ignored-below"),
            ("report", &r),
        ],
    );
    assert_eq!(code, 2, "an unknown argument is tooltape's usage error");
    assert_eq!(upload, r);
    let (code, _) = run_action(
        &dir,
        &[
            ("install", "none"),
            ("command", "gateway"),
            ("args", "tooltape c05_no_params"),
            ("report", &r),
        ],
    );
    assert_eq!(code, 0);
    let xml = std::fs::read_to_string(&report).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert!(
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .count()
            > 4,
        "{xml}"
    );
    let m = dir.join("matrix.json");
    let ms = m.to_string_lossy();
    let (code, _) = run_action(
        &dir,
        &[
            ("install", "none"),
            ("command", "matrix"),
            (
                "args",
                "--systems client:tooltape --filter 'c05_no_params_empty_object'",
            ),
            ("report", &ms),
        ],
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    assert_eq!(v["systems"][0]["system"], "client:tooltape");
    let (code, _) = run_action(&dir, &[("install", "nothing"), ("command", "gateway")]);
    assert_eq!(code, 2, "an unknown install is refused");
    let (code, _) = run_action(&dir, &[("install", "none"), ("command", "replay")]);
    assert_eq!(code, 2, "an unknown command is refused");
}
