//! `docs/clients/NAME.md` is in sync with `clients/NAME.toml`: its known-failure list is the
//! profile's, entry for entry (regenerate with `make client CLIENT=NAME DOCS=1`); every profile
//! loads, names a driver that exists, and the reference profile has no known failure. The
//! command: JSON records in gateway mode's shape; a driver that cannot start is a broken run.

use crate::scratch::{Scratch, bin, repo};

#[test]
fn every_client_profile_loads_and_its_document_lists_its_known_failures() {
    let mut seen = 0;
    for entry in std::fs::read_dir(repo().join("clients")).expect("clients/ exists") {
        let path = entry.expect("readable").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        seen += 1;
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let profile =
            tooltape::client::load_client(repo(), &name).unwrap_or_else(|e| panic!("{e}"));
        if name == "tooltape" {
            assert!(
                profile.profile.known_failure.is_empty(),
                "{}: the reference driver may have no known failure",
                path.display()
            );
            continue;
        }
        let driver = repo().join("clients").join(&name);
        assert!(
            driver.is_dir(),
            "{}: no driver folder {}",
            path.display(),
            driver.display()
        );
        let doc_path = repo().join("docs/clients").join(format!("{name}.md"));
        let doc = std::fs::read_to_string(&doc_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}\nrun: make client CLIENT={name} DOCS=1",
                doc_path.display()
            )
        });
        let section = doc
            .split("\n## Known failures\n")
            .nth(1)
            .map(|s| s.split("\n## ").next().unwrap_or(""))
            .unwrap_or_else(|| panic!("{}: no `## Known failures` section", doc_path.display()));
        let in_doc: Vec<(String, String)> = section
            .lines()
            .filter_map(|l| l.strip_prefix("- `"))
            .filter_map(|l| l.split_once("` ("))
            .filter_map(|(t, rest)| {
                rest.split_once(" trials): ")
                    .map(|(_, r)| (t.to_string(), r.to_string()))
            })
            .collect();
        let in_profile: Vec<(String, String)> = profile
            .profile
            .known_failure
            .iter()
            .map(|k| {
                let k = k.get_ref();
                (
                    k.failure.trials.clone(),
                    k.failure.reason.replace('|', "\\|").replace('\n', " "),
                )
            })
            .collect();
        assert_eq!(
            in_doc,
            in_profile,
            "{}:1: the known failures differ from {}\nrun: make client CLIENT={name} DOCS=1",
            doc_path.display(),
            path.display()
        );
        assert!(
            !section.contains(" (0 trials): "),
            "{}: a known failure matched no trial in the run that wrote it\nrun: make client CLIENT={name} DOCS=1",
            doc_path.display()
        );
    }
    assert!(seen >= 9, "only {seen} client profiles under clients/");
}

#[test]
fn a_bad_client_profile_names_file_line_and_column() {
    let dir = Scratch::new("client-profile");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "description = \"x\"\n[driver]\ncommand = [\"x\"]\n[[routes]]\napi = \"openai-chats\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let err = tooltape::client::load_client(&dir, path.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.toml:5:7:"), "{err}");
}

fn client(args: &[&str]) -> std::process::Output {
    std::process::Command::new(bin())
        .arg("client")
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the tooltape binary runs")
}

#[test]
fn client_json_records_have_the_gateway_records_shape() {
    let o = client(&["tooltape", "weather", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["kind"], "client", "{v}");
    assert_eq!(v["target"], "tooltape", "{v}");
    assert!(v["causes"].is_array(), "root causes: {v}");
    let trials = v["trials"].as_array().expect("an array of trial records");
    assert!(trials.len() >= 20, "{} trials", trials.len());
    for t in trials {
        let name = t["name"].as_str().unwrap();
        assert!(name.starts_with("client::tooltape::"), "{name}");
        assert_eq!(name.split("::").count(), 6, "{name}");
        assert!(
            t["findings"].is_array() && t["cell"]["status"].is_string(),
            "{t}"
        );
    }
}

#[test]
fn a_driver_that_cannot_start_is_a_broken_run_not_findings() {
    let dir = Scratch::new("client-broken");
    let path = dir.join("broken.toml");
    std::fs::write(
        &path,
        "description = \"x\"\n[driver]\ncommand = [\"/nonexistent/driver\"]\n[[routes]]\napi = \"openai-chat\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let doc = dir.join("doc.md");
    std::fs::write(&doc, "a good document").unwrap();
    let o = std::process::Command::new(bin())
        .args(["client", path.to_str().unwrap(), "weather", "--md-out"])
        .arg(&doc)
        .current_dir(repo())
        .env("TMPDIR", &*dir)
        .output()
        .expect("the tooltape binary runs");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("every trial broke"));
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), "a good document");
}

/// A library's failures group into root causes as a gateway's do: `--findings` lists them,
/// `--report-bug ID` prints one as an issue with the driver trial as its reproducer, and the JSON
/// document carries them. The run failed, so its work folder is kept and named.
#[test]
fn client_root_causes_findings_and_report_bug() {
    let tmp = Scratch::new("client-causes");
    let profile = std::fs::read_to_string(repo().join("clients/tooltape.toml"))
        .unwrap()
        .replace(
            r#"command = ["{{tooltape}}", "client", "drive"]"#,
            r#"command = ["{{tooltape}}", "client", "drive", "--mutant", "drop-tools"]"#,
        );
    let path = tmp.join("dropper.toml");
    std::fs::write(&path, profile).unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(bin())
            .args(["client", path.to_str().unwrap(), "weather"])
            .args(extra)
            .current_dir(repo())
            .env("TMPDIR", &*tmp)
            .output()
            .expect("the tooltape binary runs")
    };
    let o = run(&["--findings"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("root causes"), "{out}");
    assert!(out.contains("tools dropped"), "the concrete message: {out}");
    assert!(
        err.contains("work folder"),
        "a failed run names its folder: {err}"
    );
    let id = out
        .lines()
        .find_map(|l| {
            l.split_whitespace()
                .next()
                .filter(|w| w.contains('-') && w.len() > 9)
        })
        .expect("a cause id")
        .to_string();
    let o = run(&["--report-bug", &id]);
    let issue = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        issue.contains("Found by tooltape's client suite"),
        "{issue}"
    );
    assert!(
        issue.contains("printf '%s\\n'"),
        "the driver trial as reproducer: {issue}"
    );
    assert!(issue.contains("clients/dropper.toml"), "{issue}");
    let o = run(&["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let causes = v["causes"].as_array().expect("causes");
    assert!(causes.iter().any(|c| c["id"] == id.as_str()), "{v}");
    assert!(
        causes
            .iter()
            .all(|c| c["reproducer"]["command"].is_string()),
        "{v}"
    );
}
