//! `docs/clients/NAME.md` is in sync with `clients/NAME.toml`: its known-failure list is the
//! profile's, entry for entry (regenerate with `make client CLIENT=NAME DOCS=1`); every profile
//! loads, names a driver that exists, and the reference profile has no known failure.

use crate::scratch::repo;

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
                    k.trials.clone(),
                    k.reason.replace('|', "\\|").replace('\n', " "),
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
    let dir = crate::scratch::folder("client-profile");
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
    std::fs::remove_dir_all(&dir).ok();
}
