//! Support: what a test needs beyond the repository, and what it does when that is missing.
//! Under CI (`CI` set and not empty, as `.ci/run` sets it; the same rule as `record`'s refusal)
//! a missing resource fails the test: `.ci/run` provides every resource of the tests that are not
//! `#[ignore]`d. Elsewhere the test prints what it skipped and how to provide it, and returns.
//! A resource CI does not provide is the `#[ignore = "needs …"]` of its test instead (listed by
//! `cargo test -- --ignored --list`); run with `--ignored`, such a test fails without it.

use std::path::PathBuf;

/// Whether this is a CI run.
pub(crate) fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// `what` is missing: under CI, fails the test with `how` to provide it; elsewhere says so (the
/// caller then returns).
#[track_caller]
pub(crate) fn missing(what: &str, how: &str) {
    assert!(
        !in_ci(),
        "CI is set and {what} is missing (CI provides it: .ci/run): {how}"
    );
    eprintln!("skipped: {what} is missing: {how}");
}

/// `program --version` runs and succeeds.
pub(crate) fn runs(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `program` when `program --version` runs; else [`missing`] (failing under CI) and `None`.
#[track_caller]
pub(crate) fn program(program: &str, how: &str) -> Option<String> {
    if runs(program) {
        return Some(program.to_string());
    }
    missing(&format!("`{program}` (`{program} --version` fails)"), how);
    None
}

/// The folder beside the repository that holds `reference/` and `real-traffic/`: `../shared`, or
/// `TOOLTAPE_SHARED` (for a checkout elsewhere, such as a git worktree).
pub(crate) fn shared() -> PathBuf {
    std::env::var_os("TOOLTAPE_SHARED")
        .map_or_else(|| crate::scratch::repo().join("../shared"), PathBuf::from)
}

/// The real-traffic corpus (`shared()/real-traffic`, recorded by another project), when its
/// `index.jsonl` is there; else [`missing`] (CI has it: a read-only copy of `shared/` sits beside
/// the clone) and `None`.
#[track_caller]
pub(crate) fn real_traffic() -> Option<PathBuf> {
    let dir = shared().join("real-traffic");
    if dir.join("index.jsonl").is_file() {
        return Some(dir);
    }
    missing(
        &format!("the real-traffic corpus {}", dir.display()),
        "it lives beside the project in ../shared (or set TOOLTAPE_SHARED to that folder)",
    );
    None
}

/// The lines of the real-traffic corpus's `index.jsonl`, one record each (see [`real_traffic`]).
#[track_caller]
pub(crate) fn real_traffic_records() -> Option<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(real_traffic()?.join("index.jsonl")).unwrap();
    Some(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}
