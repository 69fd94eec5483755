//! The release table's cells, the registry readers, `between` and the bisection.

use super::*;

fn v(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn between_keeps_the_releases_in_range_oldest_first_without_pre_releases() {
    let listed = v(&[
        "1.0.73",
        "2.0.0",
        "1.0.9",
        "1.0.10",
        "2.0.0-beta.1",
        "0.9.0",
        "1.1.0",
    ]);
    assert_eq!(
        between(&listed, "1.0.9", "2.0.0").unwrap(),
        v(&["1.0.9", "1.0.10", "1.0.73", "1.1.0", "2.0.0"])
    );
    // The ends in either order; a named pre-release end is kept.
    assert_eq!(
        between(&listed, "2.0.0-beta.1", "1.1.0").unwrap(),
        v(&["1.1.0", "2.0.0-beta.1"])
    );
    assert!(
        between(&listed, "1.0.9", "3.0.0")
            .unwrap_err()
            .contains("3.0.0")
    );
}

#[test]
fn the_pinned_package_is_read_from_pip_npm_and_package_json_commands() {
    let install = |command: &str| Install {
        check: "x".into(),
        command: command.into(),
    };
    assert_eq!(
        pinned_package(
            &install("bin/pip install --quiet a==1 langchain-openai==1.7.4 b==2"),
            "1.7.4"
        ),
        Ok(Package::Pypi("langchain-openai".into()))
    );
    assert_eq!(
        pinned_package(
            &install("npm install --silent ai@7.0.173 @ai-sdk/openai@3.0.1"),
            "7.0.173"
        ),
        Ok(Package::Npm("ai".into()))
    );
    let ccr = r#"printf '%s' '{"name":"t","private":true,"dependencies":{"@musistudio/claude-code-router":"2.0.0"}}' > package.json && npm install"#;
    assert_eq!(
        pinned_package(&install(ccr), "2.0.0"),
        Ok(Package::Npm("@musistudio/claude-code-router".into()))
    );
    assert!(pinned_package(&install("make install"), "1.0").is_err());
}

#[test]
fn pip_index_versions_reads_its_available_line() {
    let text =
        "litellm (1.110.2)\nAvailable versions: 1.110.2, 1.110.1, 1.9.0\n  INSTALLED: 1.110.2\n";
    assert_eq!(
        pip_versions(text),
        Some(v(&["1.110.2", "1.110.1", "1.9.0"]))
    );
    assert_eq!(pip_versions("ERROR: no such package"), None);
}

#[test]
fn bisect_finds_the_first_release_where_a_cause_appears() {
    let releases = v(&["1", "2", "3", "4", "5", "6", "7", "8"]);
    let mut probe = |r: &str| {
        if r.parse::<u32>().unwrap() >= 6 {
            Presence::Present
        } else {
            Presence::Absent
        }
    };
    let found = bisect("request-1", &releases, &mut probe).unwrap();
    assert!(found.appears);
    assert_eq!(found.last_before.as_deref(), Some("5"));
    assert_eq!(found.first_after.as_deref(), Some("6"));
    // Both ends, then a binary search: fewer runs than releases.
    assert!(found.tested.len() <= 5, "{:?}", found.tested);
}

#[test]
fn bisect_skips_releases_where_the_cause_does_not_apply_and_reports_no_change() {
    let releases = v(&["1", "2", "3", "4", "5"]);
    let mut probe = |r: &str| match r {
        "1" | "2" => Presence::Present,
        "3" => Presence::NotApplicable,
        _ => Presence::Absent,
    };
    let found = bisect("answer-1", &releases, &mut probe).unwrap();
    assert!(!found.appears);
    assert_eq!(found.first_after.as_deref(), Some("4"));
    assert_eq!(found.last_before.as_deref(), Some("2"));
    let mut same = |_: &str| Presence::Present;
    let none = bisect("answer-1", &releases, &mut same).unwrap();
    assert_eq!(none.first_after, None);
    assert!(none.terminal().contains("present at both ends"));
    let mut na = |_: &str| Presence::NotApplicable;
    assert!(bisect("answer-1", &releases, &mut na).is_err());
}

#[test]
fn a_cause_is_absent_where_its_trials_were_judged_and_not_applicable_elsewhere() {
    use crate::engine::{Cell, TrialResult};
    let result = |key: &str, cell: Cell| {
        let p: Vec<&str> = key.split("::").collect();
        let id = crate::engine::RoutedTrialId {
            case: p[0].to_string(),
            route: p[1].to_string(),
            choice: p[2].to_string(),
            mode: crate::case::Mode::from_slug(p[3]).unwrap(),
        };
        TrialResult::unjudged(format!("client::x::{key}"), id, cell)
    };
    let trials: BTreeSet<String> = ["a::chat::auto::stream".to_string()].into();
    let passed = [result("a::chat::auto::stream", Cell::Pass)];
    assert_eq!(presence_in(&[], &passed, "x-1", &trials), Presence::Absent);
    let refused = [
        result(
            "a::chat::auto::stream",
            Cell::NotApplicable("no knob".into()),
        ),
        result("b::chat::auto::stream", Cell::Pass),
    ];
    assert_eq!(
        presence_in(&[], &refused, "x-1", &trials),
        Presence::NotApplicable
    );
}

#[test]
fn a_profile_is_retargeted_to_another_release_or_refused() {
    use crate::system::at_release;
    let mut version = Some("2.0.0".to_string());
    let mut install = Install {
        check: "node_modules/x/cli.js".into(),
        command: r#"printf '{"x":"2.0.0"}' > package.json && npm install"#.into(),
    };
    let mut description = "x `x@2.0.0` (npm)".to_string();
    at_release(&mut version, Some(&mut install), &mut description, "1.0.73").unwrap();
    assert_eq!(version.as_deref(), Some("1.0.73"));
    assert!(install.command.contains(r#""x":"1.0.73""#));
    assert_eq!(description, "x `x@1.0.73` (npm)");
    let mut templated = Install {
        check: "ok".into(),
        command: "pip install x=={{version}}".into(),
    };
    let mut v = Some("1".to_string());
    at_release(&mut v, Some(&mut templated), &mut String::new(), "2").unwrap();
    assert_eq!(templated.command, "pip install x==2");
    let mut unpinned = Install {
        check: "ok".into(),
        command: "pip install x".into(),
    };
    let mut v = Some("1.5".to_string());
    assert!(at_release(&mut v, Some(&mut unpinned), &mut String::new(), "2").is_err());
    assert!(at_release(&mut None, None, &mut String::new(), "2").is_err());
}
