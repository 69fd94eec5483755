//! `docs/gateways/NAME.md` is in sync with `gateways/NAME.toml`: every trial the document lists
//! as known is a known failure of the profile, and every known failure of the profile appears
//! in the document (regenerate with `make gateway GATEWAY=NAME`). Profiles load without error.

use crate::scratch::{Scratch, repo};

#[test]
fn every_profile_loads_and_its_document_lists_its_known_failures() {
    let mut seen = 0;
    for entry in std::fs::read_dir(repo().join("gateways")).expect("gateways/ exists") {
        let path = entry.expect("readable").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        seen += 1;
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let profile =
            tooltape::gateway::load_gateway(repo(), &name).unwrap_or_else(|e| panic!("{e}"));
        let doc_path = repo().join("docs/gateways").join(format!("{name}.md"));
        let doc = std::fs::read_to_string(&doc_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}\nrun: make gateway GATEWAY={name}",
                doc_path.display()
            )
        });
        let known_in_doc: Vec<&str> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("- `"))
            .filter_map(|l| l.split_once("`: known-failure: "))
            .map(|(k, _)| k)
            .collect();
        for k in &known_in_doc {
            assert!(
                profile
                    .profile
                    .known_failure
                    .iter()
                    .any(|e| tooltape::case::pattern_matches(&e.get_ref().failure.trials, k)),
                "{}: `{k}` is listed as known but {} has no known_failure for it\nrun: make gateway GATEWAY={name}",
                doc_path.display(),
                profile.path.display()
            );
        }
        for kf in &profile.profile.known_failure {
            let pattern = &kf.get_ref().failure.trials;
            assert!(
                known_in_doc
                    .iter()
                    .any(|k| tooltape::case::pattern_matches(pattern, k)),
                "{}: known failure `{pattern}` matches no known trial of {}\nrun: make gateway GATEWAY={name}",
                profile.locate(kf.span()),
                doc_path.display()
            );
        }
    }
    assert!(seen > 0, "no gateway profile under gateways/");
}

#[test]
fn a_bad_profile_names_file_line_and_column() {
    let dir = Scratch::new("gw-profile");
    let path = dir.join("bad.toml");
    std::fs::write(&path, "description = \"x\"\n[[routes]]\ninbound = \"chats\"\nupstream = \"anthropic\"\nmodel = \"m\"\n").unwrap();
    let err = tooltape::gateway::load_gateway(&dir, path.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.toml:3:11:") && err.contains("unknown inbound format `chats`"),
        "{err}"
    );
}
