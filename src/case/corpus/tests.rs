//! Unit tests of the corpus: the embedded corpus equals `cases/`, a team's folder adds and
//! replaces, export writes it out and never replaces a differing file without `force`.

use std::path::Path;

use super::super::{Discovery, discover, discover_with};
use super::*;

/// An empty folder `tooltape-corpus-NAME-…`, removed when dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    crate::scratch::folder(&format!("corpus-{name}"))
}

/// (trial name, case hash) of every trial, and the broken files' messages.
fn summary(d: &Discovery) -> (Vec<(String, String)>, Vec<String>) {
    let trials = (d.trials.iter())
        .map(|t| (t.name(), t.case.hash.clone()))
        .collect();
    let broken = d.broken.iter().map(|(_, e)| e.to_string()).collect();
    (trials, broken)
}

#[test]
fn the_embedded_corpus_is_the_shipped_cases_folder() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = scratch("empty");
    let empty = tmp.path();
    let (ours, broken) = summary(&discover(repo));
    let (built_in, built_in_broken) = summary(&discover(empty));
    assert!(
        broken.is_empty() && built_in_broken.is_empty(),
        "{broken:?} {built_in_broken:?}"
    );
    assert!(ours.len() > 100, "{} trials", ours.len());
    assert_eq!(
        ours, built_in,
        "the same trials with the same hashes: cassettes stay fresh"
    );
    let d = discover(empty);
    let shown = d.trials[0].case.path.display().to_string();
    assert!(shown.starts_with("<built-in>/cases/"), "{shown}");
    // Every file of cases/ is embedded, byte for byte.
    let mut on_disk = 0;
    for (rel, text) in EMBEDDED {
        assert_eq!(
            std::fs::read_to_string(repo.join("cases").join(rel)).unwrap(),
            *text,
            "{rel}"
        );
        on_disk += 1;
    }
    let count = |d: &Path| {
        std::fs::read_dir(d)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().is_file())
            .count()
    };
    assert_eq!(
        on_disk,
        count(&repo.join("cases")) + count(&repo.join("cases/tools"))
    );
}

const MINE: &str = "description = \"ours\"\ntools = [\"my_tool\"]\nchoices = [\"auto\"]\nproviders = [\"anthropic\"]\nmodes = [\"buffered\"]\n[[messages]]\nrole = \"user\"\ncontent = \"hi\"\n";
const MY_TOOL: &str = r#"{"name": "my_tool", "description": "d", "parameters": {"type": "object", "properties": {}}}"#;

#[test]
fn a_teams_folder_adds_cases_and_replaces_ours_of_the_same_name() {
    let (tmp_empty, tmp_mine) = (scratch("root"), scratch("mine"));
    let (empty, mine) = (tmp_empty.path(), tmp_mine.path());
    std::fs::create_dir_all(mine.join("tools")).unwrap();
    std::fs::write(mine.join("mine.toml"), MINE).unwrap();
    std::fs::write(mine.join("weather.toml"), MINE).unwrap();
    std::fs::write(mine.join("tools/my_tool.json"), MY_TOOL).unwrap();
    let base = discover(empty);
    let d = discover_with(empty, Some(mine));
    assert!(d.broken.is_empty(), "{:?}", d.broken);
    let of = |d: &Discovery, case: &str| -> Vec<String> {
        (d.trials.iter())
            .filter(|t| t.case.name == case)
            .map(|t| t.name())
            .collect()
    };
    assert_eq!(of(&d, "mine"), ["mine::anthropic::auto::buffered"]);
    assert_eq!(of(&d, "weather"), ["weather::anthropic::auto::buffered"]);
    assert!(of(&base, "weather").len() > 1);
    let weather = d.trials.iter().find(|t| t.case.name == "weather").unwrap();
    assert_eq!(weather.case.path, mine.join("weather.toml"));
    // Every other built-in case is still there.
    assert_eq!(
        d.trials.len(),
        base.trials.len() - of(&base, "weather").len() + 2
    );

    // A case naming a tool nobody has says where it looked.
    std::fs::write(mine.join("broken.toml"), MINE.replace("my_tool", "nope")).unwrap();
    let d = discover_with(empty, Some(mine));
    let msg = d.broken[0].1.to_string();
    assert!(
        msg.starts_with(&format!("{}:2:", mine.join("broken.toml").display())),
        "{msg}"
    );
    assert!(
        msg.contains("<built-in>/cases/tools/nope.json or") && msg.contains("tools/nope.json"),
        "{msg}"
    );
    // A folder that is not there is a broken, incomplete discovery, not an empty one.
    let d = discover_with(empty, Some(&mine.join("absent")));
    assert!(d.incomplete && d.trials.is_empty());
    assert!(
        d.broken[0]
            .1
            .to_string()
            .contains("--cases: no such folder")
    );
}

#[test]
fn export_writes_the_corpus_and_keeps_a_differing_file_without_force() {
    let tmp = scratch("export");
    let dir = tmp.path();
    let out = export(&dir.join("cases"), false).unwrap();
    assert_eq!(out.written.len(), EMBEDDED.len());
    // The exported folder is a project root's cases/: the same trials.
    let (exported, broken) = summary(&discover(dir));
    assert!(broken.is_empty(), "{broken:?}");
    let tmp_empty = scratch("export-empty");
    let empty = tmp_empty.path();
    assert_eq!(exported, summary(&discover(empty)).0);
    // Again: nothing to do.
    let again = export(&dir.join("cases"), false).unwrap();
    assert_eq!(
        (again.written.len(), again.unchanged.len()),
        (0, EMBEDDED.len())
    );
    // An edited file is not replaced, and nothing else is written either.
    let edited = dir.join("cases/weather.toml");
    std::fs::write(&edited, "# mine\n").unwrap();
    std::fs::remove_file(dir.join("cases/no_args.toml")).unwrap();
    let err = export(&dir.join("cases"), false).unwrap_err();
    assert!(
        err.contains(&edited.display().to_string()) && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), "# mine\n");
    assert!(!dir.join("cases/no_args.toml").exists());
    let forced = export(&dir.join("cases"), true).unwrap();
    assert_eq!(forced.written.len(), 2);
    assert_ne!(std::fs::read_to_string(&edited).unwrap(), "# mine\n");
}
