//! The conformance harness: one test per trial (`case::provider::choice::mode`), each replayed
//! from its cassette through a loopback server and snapshotted; plus the suite's own invariants
//! (non-empty discovery, no orphaned cassettes or snapshots). Thin by design: the logic lives in
//! the library (`tooltape::harness::replay_trial`).

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use tooltape::{case::Discovery, discover, harness::orphans, harness::replay_trial, runtime};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn replay(root: &Path, trial: &tooltape::Trial) -> Result<(), Failed> {
    let result = runtime().block_on(replay_trial(root, trial));
    if let Some(failure) = result.failure {
        return Err(failure.into());
    }
    if let Ok((_, snapshot)) = result.status {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(root.join("tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(root.join(&trial.case.path));
        settings.set_description(trial.case.file.description.clone());
        settings.set_omit_expression(true);
        let name = trial.snapshot_name();
        settings.bind(|| insta::assert_yaml_snapshot!(name, snapshot));
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = root();
    let discovery: Discovery = discover(&root);
    let (trials, broken) = (discovery.trials.clone(), discovery.broken.clone());
    let mut tests = Vec::new();
    for (name, err) in broken {
        tests.push(Trial::test(format!("{name}::case-file"), move || {
            Err(format!("{err}\n  fix the case file; see README.md (\"Adding a case\") and cases/case.schema.json").into())
        }));
    }
    let empty = trials.is_empty();
    tests.push(Trial::test("suite::discovery", move || {
        if empty {
            Err(
                "cases/:1: no trials discovered: the suite would pass without testing anything"
                    .into(),
            )
        } else {
            Ok(())
        }
    }));
    let schema_root = root.clone();
    tests.push(Trial::test("suite::case-schema", move || {
        let problems = tooltape::case::schema::problems(&schema_root);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    }));
    let orphans = orphans(&root, &discovery);
    tests.push(Trial::test("suite::orphans", move || {
        if orphans.is_empty() {
            Ok(())
        } else {
            Err(orphans.join("\n").into())
        }
    }));
    for trial in trials {
        let root = root.clone();
        tests.push(Trial::test(trial.name(), move || replay(&root, &trial)));
    }
    libtest_mimic::run(&args, tests).exit();
}
