//! The read-only commands over cassettes: `tooltape status` (one line per trial: `ok`, `missing`,
//! `stale (why)`, `synthetic`, `imported`, `broken (why)`, then orphaned files) and `tooltape
//! scan` (the secret scan of `crate::redact` over files already written).

use std::path::{Path, PathBuf};

use crate::case::{Discovery, Trial};
use crate::cassette::ProvenanceKind;
use crate::harness::{self, ReplayStatus, ReplayedTrial};
use crate::redact::{Secrets, scan};

/// The state of one trial's cassette.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Recorded from the real provider and up to date.
    Ok,
    Missing,
    Stale(String),
    /// Up to date, answered by the simulator.
    Synthetic,
    /// Up to date, converted from another recorder.
    Imported,
    Broken(String),
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::Ok => f.write_str("ok"),
            State::Missing => f.write_str("missing"),
            State::Stale(why) => write!(f, "stale ({why})"),
            State::Synthetic => f.write_str("synthetic"),
            State::Imported => f.write_str("imported"),
            State::Broken(why) => write!(f, "broken ({why})"),
        }
    }
}

impl State {
    /// The state of a replayed trial's cassette.
    pub fn of(r: &ReplayedTrial) -> State {
        match &r.status {
            Err(ReplayStatus::Missing) => State::Missing,
            Err(ReplayStatus::Stale(why)) => State::Stale(why.clone()),
            Err(ReplayStatus::Broken(why)) => State::Broken(why.clone()),
            Ok(_) => match r.provenance {
                Some(ProvenanceKind::Synthetic) => State::Synthetic,
                Some(ProvenanceKind::Imported) => State::Imported,
                _ => State::Ok,
            },
        }
    }
}

/// Every selected trial's state, in discovery order: each trial replayed on loopback (nothing
/// leaves the machine).
pub(crate) fn states(root: &Path, trials: &[Trial]) -> Vec<State> {
    harness::replay_all(root, trials)
        .iter()
        .map(State::of)
        .collect()
}

/// The status report's text and how many broken files it names.
#[derive(Debug)]
pub struct StatusReport {
    pub text: String,
    /// Broken case, tool and provider files, broken cassettes, orphans.
    pub broken_files: usize,
}

/// The status report: trial lines, broken files and orphans, a count line.
pub fn report(root: &Path, discovery: &Discovery, filter: Option<&str>) -> StatusReport {
    let trials: Vec<Trial> = discovery
        .trials
        .iter()
        .filter(|t| filter.is_none_or(|f| t.name().contains(f)))
        .cloned()
        .collect();
    let states = states(root, &trials);
    let width = trials.iter().map(|t| t.name().len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut counts = std::collections::BTreeMap::new();
    for (t, s) in trials.iter().zip(&states) {
        out.push_str(&format!("{:<width$}  {s}\n", t.name()));
        let label = s.to_string();
        *counts
            .entry(label.split(' ').next().unwrap_or("").to_string())
            .or_insert(0) += 1;
    }
    for (_, e) in &discovery.broken {
        out.push_str(&format!("broken  {e}\n"));
    }
    if discovery.incomplete {
        out.push_str("note    the suite could not be discovered: no cassette or snapshot is judged orphaned until the file above is fixed\n");
    }
    let orphans = harness::orphans(root, discovery);
    for o in &orphans {
        out.push_str(&format!("orphan  {o}\n"));
    }
    let broken_cassettes = states
        .iter()
        .filter(|s| matches!(s, State::Broken(_)))
        .count();
    let broken_files = discovery.broken.len() + orphans.len() + broken_cassettes;
    let mut summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    summary.push(format!(
        "{} orphan{}",
        orphans.len(),
        if orphans.len() == 1 { "" } else { "s" }
    ));
    let suffix = match broken_files {
        0 => String::new(),
        1 => "; 1 broken file".into(),
        n => format!("; {n} broken files"),
    };
    out.push_str(&format!(
        "{} trials: {}{suffix}\n",
        trials.len(),
        summary.join(", ")
    ));
    StatusReport {
        text: out,
        broken_files,
    }
}

/// What a scan of files found: how many files were read, and each finding with the file's path
/// (relative to `root` when under it).
#[derive(Debug, Default)]
pub struct ScanReport {
    pub files: usize,
    pub findings: Vec<(PathBuf, crate::redact::ForbiddenMatch)>,
    /// Files that could not be read (not regular, too large): a scan that skipped them is no pass.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Scans every file under `target` (a file or a folder) for secrets.
pub fn scan_path(root: &Path, target: &Path, secrets: &Secrets) -> ScanReport {
    let mut report = ScanReport::default();
    for f in files_under(target) {
        let bytes = match crate::input::read(&f) {
            Ok(b) => b,
            Err(e) => {
                report
                    .unreadable
                    .push((f.strip_prefix(root).unwrap_or(&f).to_path_buf(), e.message));
                continue;
            }
        };
        report.files += 1;
        let text = String::from_utf8_lossy(&bytes);
        let shown = f.strip_prefix(root).unwrap_or(&f).to_path_buf();
        for x in scan(&text, secrets) {
            report.findings.push((shown.clone(), x));
        }
    }
    report
}

fn files_under(p: &Path) -> Vec<PathBuf> {
    if p.is_file() {
        return vec![p.to_path_buf()];
    }
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.filter_map(Result::ok) {
            out.extend(files_under(&e.path()));
        }
    }
    out.sort();
    out
}
