//! One suite across releases: the root causes of each release's run side by side (present,
//! absent, not applicable; its texts are `report::suite`'s), the releases a registry lists
//! between two, and the bisection over them for the first release where a cause appears or
//! disappears.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::process::Command;

use serde::Serialize;

use super::install::Install;
use crate::engine::{Cell, RootCause, Run, SystemKind, TrialResult, summary};
use crate::model::Severity;

/// A root cause in one release's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Presence {
    /// A trial of this release failed with the cause.
    Present,
    /// The cause's trials ran in this release and none failed with it.
    Absent,
    /// None of the cause's trials was applicable in this release (not expressible, refused,
    /// broken), or the release could not be installed or run.
    NotApplicable,
}

impl Presence {
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Present => "present",
            Presence::Absent => "absent",
            Presence::NotApplicable => "not applicable",
        }
    }
}

/// One release's column: its version, its summary line, or why it did not run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReleaseColumn {
    pub version: String,
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One root cause's row: what it is, and its presence in each release (in column order).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CauseRow {
    pub id: String,
    pub title: String,
    pub severity: Severity,
    pub releases: Vec<Presence>,
}

/// The root causes × releases table of one system.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReleaseTable {
    pub kind: SystemKind,
    pub target: String,
    pub releases: Vec<ReleaseColumn>,
    pub causes: Vec<CauseRow>,
}

/// Whether cause `id` is in `run`: present when a trial failed with it; absent when one of its
/// `trials` (the keys it failed in, in any release) was judged in this run; else not applicable.
pub fn presence(run: &Run, id: &str, trials: &BTreeSet<String>) -> Presence {
    presence_in(&run.causes, &run.results, id, trials)
}

fn presence_in(
    causes: &[RootCause],
    results: &[TrialResult],
    id: &str,
    trials: &BTreeSet<String>,
) -> Presence {
    if causes.iter().any(|c| c.id == id) {
        return Presence::Present;
    }
    let judged = results.iter().any(|r| {
        trials.contains(&r.id.key())
            && matches!(r.cell, Cell::Pass | Cell::Fail(_) | Cell::KnownFailure(_))
    });
    if judged {
        Presence::Absent
    } else {
        Presence::NotApplicable
    }
}

/// The table of `runs` (each release's version and its run, or why it could not run), causes
/// in the order the runs met them.
pub fn release_table(
    kind: SystemKind,
    target: &str,
    runs: &[(String, Result<Run, String>)],
) -> ReleaseTable {
    let mut causes: Vec<(String, String, Severity, BTreeSet<String>)> = Vec::new();
    for run in runs.iter().filter_map(|(_, r)| r.as_ref().ok()) {
        for c in &run.causes {
            match causes.iter_mut().find(|(id, ..)| *id == c.id) {
                Some((.., trials)) => trials.extend(c.trials.iter().cloned()),
                None => causes.push((
                    c.id.clone(),
                    c.title.clone(),
                    c.severity,
                    c.trials.iter().cloned().collect(),
                )),
            }
        }
    }
    let releases = runs
        .iter()
        .map(|(v, r)| ReleaseColumn {
            version: v.clone(),
            summary: r.as_ref().ok().map(|r| summary(&r.results)),
            error: r.as_ref().err().cloned(),
        })
        .collect();
    let causes = causes
        .into_iter()
        .map(|(id, title, severity, trials)| CauseRow {
            releases: runs
                .iter()
                .map(|(_, r)| {
                    r.as_ref()
                        .map_or(Presence::NotApplicable, |r| presence(r, &id, &trials))
                })
                .collect(),
            id,
            title,
            severity,
        })
        .collect();
    ReleaseTable {
        kind,
        target: target.to_string(),
        releases,
        causes,
    }
}

/// A release's version as numbers (`1.10.2` → `[1, 10, 2]`); `None` for a pre-release or any
/// version with a part that is not a number (`2.0.0-beta.1`, `1.0rc1`).
fn release_key(v: &str) -> Option<Vec<u64>> {
    v.split('.').map(|p| p.parse().ok()).collect()
}

/// Release order: the leading numbers, then a pre-release before its release
/// (`2.0.0-beta.1` < `2.0.0`), then the text.
fn by_release(a: &str, b: &str) -> Ordering {
    let key = |v: &str| {
        let cut = v
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(v.len());
        let (nums, rest) = v.split_at(cut);
        let nums: Vec<u64> = nums.split('.').filter_map(|p| p.parse().ok()).collect();
        (nums, rest.is_empty())
    };
    key(a).cmp(&key(b)).then_with(|| a.cmp(b))
}

/// The releases in `listed` from `from` to `to`, both included, oldest first; pre-releases left
/// out unless named as an end.
pub fn between(listed: &[String], from: &str, to: &str) -> Result<Vec<String>, String> {
    for end in [from, to] {
        if !listed.iter().any(|v| v == end) {
            return Err(format!("the registry lists no release {end}"));
        }
    }
    let (lo, hi) = match by_release(from, to) {
        Ordering::Greater => (to, from),
        _ => (from, to),
    };
    let mut out: Vec<String> = listed
        .iter()
        .filter(|v| *v == lo || *v == hi || release_key(v).is_some())
        .filter(|v| by_release(v, lo) != Ordering::Less && by_release(v, hi) != Ordering::Greater)
        .cloned()
        .collect();
    out.sort_by(|a, b| by_release(a, b));
    out.dedup();
    Ok(out)
}

/// Where a profile's release comes from: the registry and the package its install command
/// pins at `pinned` (`pip install NAME==V`, `npm install NAME@V`, or a package.json's
/// `"NAME":"V"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Package {
    Pypi(String),
    Npm(String),
}

/// The package `install` pins at `pinned`, and its registry.
pub fn pinned_package(install: &Install, pinned: &str) -> Result<Package, String> {
    let cmd = &install.command;
    let npm = cmd.contains("npm ");
    for token in cmd.split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}') {
        let t = token.trim_matches(|c| c == '\'' || c == '`');
        if let Some(name) = t.strip_suffix(&format!("=={pinned}")) {
            return Ok(Package::Pypi(name.trim_matches('"').to_string()));
        }
        if let Some(name) = t.strip_suffix(&format!("\":\"{pinned}\"")) {
            return Ok(Package::Npm(name.trim_start_matches('"').to_string()));
        }
        if npm
            && let Some(name) = t.strip_suffix(&format!("@{pinned}"))
            && !name.is_empty()
        {
            return Ok(Package::Npm(name.to_string()));
        }
    }
    Err(format!(
        "the install command pins no package at {pinned} (`NAME=={pinned}`, `NAME@{pinned}` or `\"NAME\":\"{pinned}\"`)"
    ))
}

/// The releases the registry lists for `package`, through its own client (`npm view NAME
/// versions --json`, `python3 -m pip index versions NAME`).
pub fn registry_releases(package: &Package) -> Result<Vec<String>, String> {
    let (program, args, name): (&str, Vec<&str>, &str) = match package {
        Package::Npm(n) => ("npm", vec!["view", n, "versions", "--json"], n),
        Package::Pypi(n) => (
            "python3",
            vec![
                "-m",
                "pip",
                "index",
                "versions",
                "--disable-pip-version-check",
                n,
            ],
            n,
        ),
    };
    let out = Command::new(program)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match package {
        Package::Npm(_) => serde_json::from_str::<Vec<String>>(&text)
            .map_err(|e| format!("npm's list of {name}'s versions does not read: {e}")),
        Package::Pypi(_) => pip_versions(&text)
            .ok_or_else(|| format!("pip's list of {name}'s versions does not read: {text}")),
    }
}

/// The versions of `pip index versions`'s `Available versions: a, b, …` line.
fn pip_versions(text: &str) -> Option<Vec<String>> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Available versions:"))?;
    Some(
        line.split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

/// What a bisection found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bisection {
    pub cause: String,
    /// The releases searched, oldest first.
    pub releases: Vec<String>,
    /// Each release run, in the order run, with what it showed.
    pub tested: Vec<(String, Presence)>,
    /// The last release with the first end's presence, and the first without it (`None`: both
    /// ends agree, or the releases between could not tell).
    pub last_before: Option<String>,
    pub first_after: Option<String>,
    /// `true`: the cause appears at `first_after`; `false`: it disappears there.
    pub appears: bool,
}

/// Binary search over `releases` (oldest first) for the first release whose presence of
/// `cause` differs from the oldest one's, `probe` running one release. A release where the
/// cause is not applicable is left out of the search.
pub fn bisect(
    cause: &str,
    releases: &[String],
    probe: &mut dyn FnMut(&str) -> Presence,
) -> Result<Bisection, String> {
    if releases.len() < 2 {
        return Err("a bisection needs two releases or more".into());
    }
    let mut tested = Vec::new();
    let mut run = |v: &str, tested: &mut Vec<(String, Presence)>| {
        let p = probe(v);
        tested.push((v.to_string(), p));
        p
    };
    let mut live: Vec<String> = releases.to_vec();
    let first = run(&live[0], &mut tested);
    let last = run(&live[live.len() - 1], &mut tested);
    for (end, p) in [(&live[0], first), (&live[live.len() - 1], last)] {
        if p == Presence::NotApplicable {
            return Err(format!(
                "{cause} is not applicable in {end} (no trial of it judged there): nothing to compare"
            ));
        }
    }
    let mut found = Bisection {
        cause: cause.to_string(),
        releases: releases.to_vec(),
        tested: Vec::new(),
        last_before: None,
        first_after: None,
        appears: first == Presence::Absent,
    };
    if first != last {
        let (mut lo, mut hi) = (0, live.len() - 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match run(&live[mid], &mut tested) {
                Presence::NotApplicable => {
                    live.remove(mid);
                    hi -= 1;
                }
                p if p == first => lo = mid,
                _ => hi = mid,
            }
        }
        found.last_before = Some(live[lo].clone());
        found.first_after = Some(live[hi].clone());
    }
    found.tested = tested;
    Ok(found)
}

#[cfg(test)]
mod tests;
