//! `tooltape drift`: what changed between the committed cassettes and another set (a folder,
//! or a fresh recording), per trial: wire structure, stream events, decoded outcomes and the
//! contract verdict, each finding once with a severity.
//!
//! Severities: `breaking` (the decoder fails, or the contract verdict flips), `behaviour` (the
//! model or provider did something else: other calls, arguments, text, finish values, answered
//! model, or a wire shape a client may rely on: a field removed, renamed or retyped, a stream
//! event kind appearing or vanishing), `cosmetic` (noise fields: ids, timestamps, usage,
//! fingerprints, signatures; fields added).

pub(crate) mod outcome;
pub mod render;
pub(crate) mod shape;
pub(crate) mod structure;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::case::Trial;
use crate::cassette::{self, Cassette};
pub use crate::model::Severity;

/// What a finding is about. The JSON names (`snake_case`) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A cassette cannot be read on one side.
    Unreadable,
    /// A response decodes on one side and not the other (or with another error).
    Decode,
    /// The contract verdict changed.
    Verdict,
    /// The number of exchanges changed.
    Exchanges,
    /// HTTP statuses changed.
    Status,
    /// The called tools (names, count) changed.
    ToolCalls,
    Arguments,
    Text,
    /// The provider's finish / stop reason value (and its normalized form).
    Finish,
    Error,
    Diagnostics,
    Hosted,
    /// The model that answered.
    Model,
    FieldRemoved,
    FieldRenamed,
    FieldAdded,
    TypeChanged,
    EventAdded,
    EventRemoved,
    /// Noise fields (ids, timestamps, usage, ...) changed value.
    Noise,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Unreadable => "unreadable",
            Kind::Decode => "decode",
            Kind::Verdict => "verdict",
            Kind::Exchanges => "exchanges",
            Kind::Status => "status",
            Kind::ToolCalls => "tool_calls",
            Kind::Arguments => "arguments",
            Kind::Text => "text",
            Kind::Finish => "finish",
            Kind::Error => "error",
            Kind::Diagnostics => "diagnostics",
            Kind::Hosted => "hosted",
            Kind::Model => "model",
            Kind::FieldRemoved => "field_removed",
            Kind::FieldRenamed => "field_renamed",
            Kind::FieldAdded => "field_added",
            Kind::TypeChanged => "type_changed",
            Kind::EventAdded => "event_added",
            Kind::EventRemoved => "event_removed",
            Kind::Noise => "noise",
        }
    }

    /// The usual severity of this kind of finding.
    pub fn severity(self) -> Severity {
        match self {
            Kind::Unreadable | Kind::Decode | Kind::Verdict => Severity::Breaking,
            Kind::FieldAdded | Kind::Noise => Severity::Cosmetic,
            _ => Severity::Behaviour,
        }
    }
}

/// One difference of one trial.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftFinding {
    pub severity: Severity,
    pub kind: Kind,
    /// Folded JSON path (`$.choices[].finish_reason`, `<message_delta>.usage`), event kind, or exchange.
    pub path: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl DriftFinding {
    pub fn new(
        severity: Severity,
        kind: Kind,
        path: Option<String>,
        before: Option<String>,
        after: Option<String>,
    ) -> DriftFinding {
        DriftFinding {
            severity,
            kind,
            path,
            before,
            after,
        }
    }
}

/// The findings of one pair of cassettes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrialDrift {
    /// Trial name (`case::provider::choice::mode`), or the cassette's own label when no trial owns it.
    pub trial: String,
    /// Path relative to the cassette folder (`openai-chat/weather/auto-buffered.json`).
    pub cassette: String,
    pub findings: Vec<DriftFinding>,
    /// Structural differences not listed because they follow from a behaviour change.
    pub explained: usize,
}

impl TrialDrift {
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// Everything `tooltape drift` found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DriftReport {
    pub committed: String,
    pub against: String,
    /// Pairs compared (cassettes present on both sides).
    pub compared: usize,
    /// Pairs with at least one finding, sorted by trial.
    pub trials: Vec<TrialDrift>,
    /// Cassettes only in the committed folder (not re-recorded, or gone).
    pub only_committed: Vec<String>,
    /// Cassettes only in the other folder.
    pub only_against: Vec<String>,
}

impl DriftReport {
    pub fn count(&self, s: Severity) -> usize {
        self.trials
            .iter()
            .flat_map(|t| &t.findings)
            .filter(|f| f.severity == s)
            .count()
    }

    /// Anything breaking (the command then exits 1).
    pub fn has_breaking(&self) -> bool {
        self.count(Severity::Breaking) > 0
    }
}

/// Compares two cassettes of one trial (`trial` is `None` for a cassette no trial owns: then
/// only the wire structure is compared).
pub(crate) fn compare(
    trial: Option<&Trial>,
    old: &Cassette,
    new: &Cassette,
) -> (Vec<DriftFinding>, usize) {
    let mut findings = Vec::new();
    let mut behaviour_changed = false;
    if let Some(t) = trial {
        let (a, b) = (outcome::judge(t, old), outcome::judge(t, new));
        let (f, changed) = outcome::diff(
            &a,
            &b,
            old.provenance.answered_model.as_deref(),
            new.provenance.answered_model.as_deref(),
        );
        findings.extend(f);
        behaviour_changed = changed;
    }
    let (old_s, new_s) = (shape::shape_of(old), shape::shape_of(new));
    behaviour_changed |= old_s.statuses != new_s.statuses;
    let (f, explained) = structure::diff(&old_s, &new_s, behaviour_changed);
    findings.extend(f);
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.kind.cmp(&b.kind))
            .then(a.path.cmp(&b.path))
    });
    (findings, explained)
}

/// Every `*.json` under `dir` but model servers' recorded runs (`servers/`), as sorted relative
/// paths with `/` separators.
pub(crate) fn cassette_files(dir: &Path) -> Vec<String> {
    let tapes = dir.join(cassette::SERVER_TAPES);
    let mut out: Vec<String> = crate::harness::files_under(dir, "json")
        .iter()
        .filter(|p| !p.starts_with(&tapes))
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            let parts: Vec<_> = rel.iter().map(|s| s.to_string_lossy()).collect();
            parts.join("/")
        })
        .collect();
    out.sort();
    out
}

fn load(dir: &Path, rel: &str) -> Result<Cassette, String> {
    match cassette::load(&dir.join(rel)) {
        Ok(Some((c, _))) => Ok(c),
        Ok(None) => Err(format!("{}: no such cassette", dir.join(rel).display())),
        Err(e) => Err(e.to_string()),
    }
}

/// Pairs the cassettes of two folders (each laid out `<provider>/<case>/<choice>-<mode>.json`)
/// by relative path and compares each pair. `filter` keeps trials whose name (or, for a
/// cassette no trial owns, whose path) contains it.
pub fn compare_dirs(
    trials: &[Trial],
    committed: &Path,
    against: &Path,
    filter: Option<&str>,
) -> DriftReport {
    let owner = |rel: &str| {
        let path = PathBuf::from("cassettes").join(rel);
        trials.iter().find(|t| t.cassette_path() == path)
    };
    let keep = |rel: &str| {
        filter.is_none_or(|f| owner(rel).map_or_else(|| rel.contains(f), |t| t.name().contains(f)))
    };
    let old: BTreeSet<String> = cassette_files(committed)
        .into_iter()
        .filter(|r| keep(r))
        .collect();
    let new: BTreeSet<String> = cassette_files(against)
        .into_iter()
        .filter(|r| keep(r))
        .collect();
    let mut report = DriftReport {
        committed: committed.display().to_string(),
        against: against.display().to_string(),
        only_committed: old.difference(&new).cloned().collect(),
        only_against: new.difference(&old).cloned().collect(),
        ..DriftReport::default()
    };
    for rel in old.intersection(&new) {
        report.compared += 1;
        let trial = owner(rel);
        let (findings, explained, label) = match (load(committed, rel), load(against, rel)) {
            (Ok(a), Ok(b)) => {
                let (f, n) = compare(trial, &a, &b);
                (f, n, a.trial)
            }
            (a, b) => {
                let show = |r: &Result<Cassette, String>| {
                    r.as_ref().map_or_else(Clone::clone, |_| "readable".into())
                };
                let f = DriftFinding::new(
                    Severity::Breaking,
                    Kind::Unreadable,
                    None,
                    Some(show(&a)),
                    Some(show(&b)),
                );
                (vec![f], 0, rel.clone())
            }
        };
        if !findings.is_empty() {
            let name = trial.map_or(label, Trial::name);
            report.trials.push(TrialDrift {
                trial: name,
                cassette: rel.clone(),
                findings,
                explained,
            });
        }
    }
    report.trials.sort_by(|a, b| a.trial.cmp(&b.trial));
    report
}
