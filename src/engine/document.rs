//! The one shape of a run's output and the one rule for how it ended, for gateways and
//! libraries alike: the JSON document `{kind, target, version, summary, not_applicable,
//! left_out, causes, trials}` and the run's [`RunStatus`] (passed, failed, broken), which the
//! binary maps to its exit codes.

use serde_json::{Value, json};

use super::reproduce::RootCause;
use super::result::{Cell, TrialResult};
use super::system::System;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Every trial ran and every result is expected (passes, known failures, clean refusals,
    /// trials the caller cannot express).
    Passed,
    /// Every trial ran and something failed: a trial, a stale known failure; or the run did not
    /// cover the whole suite (a case file could not be loaded, the system died mid-run).
    Failed,
    /// Not one trial the caller could send got an answer: the system could not be used (down,
    /// wrong URL or key, a driver that cannot start). A broken run, not a finding.
    Broken,
}

/// The run's status. `stale`: known failures naming a cause no trial failed with; `exited`:
/// the system died mid-run (the trials after that broke: failed, not a broken run);
/// `incomplete`: the suite did not fully run (unloadable case files).
pub fn status(results: &[TrialResult], stale: usize, exited: bool, incomplete: bool) -> RunStatus {
    status_of(
        &results.iter().map(|r| &r.cell).collect::<Vec<_>>(),
        stale,
        exited,
        incomplete,
    )
}

/// [`status`] of cells (a document read back, a merge of shards).
pub fn status_of(cells: &[&Cell], stale: usize, exited: bool, incomplete: bool) -> RunStatus {
    if exited {
        return RunStatus::Failed;
    }
    let broken = cells.iter().any(|c| matches!(c, Cell::Broken(_)))
        && (cells.iter()).all(|c| matches!(c, Cell::Broken(_) | Cell::NotApplicable(_)));
    if broken {
        return RunStatus::Broken;
    }
    let unexpected = cells.iter().filter(|c| !c.expected()).count() + stale;
    if unexpected > 0 || incomplete {
        RunStatus::Failed
    } else {
        RunStatus::Passed
    }
}

/// The run as one JSON document: which system (`kind`, `target`, `version`), the summary line,
/// how many trials were not applicable and how many ran with an incidental option left out,
/// the root causes with their reproducers, tooltape's own time per trial, and every trial's
/// record.
pub fn document<S: System>(system: &S, results: &[TrialResult], causes: &[RootCause]) -> Value {
    json!({
        "kind": system.kind(),
        "target": system.name(),
        "version": system.version(),
        "summary": summary(results),
        "not_applicable": results.iter().filter(|r| matches!(r.cell, Cell::NotApplicable(_))).count(),
        "left_out": results.iter().filter(|r| !r.left_out.is_empty()).count(),
        "own_ms_per_trial": own_ms_per_trial(results),
        "causes": causes,
        "trials": results,
    })
}

/// tooltape's own time (encode, decode, checks; the system's time excluded) per trial, in
/// milliseconds to the microsecond: the figure `docs/performance.md` holds below 1 ms.
fn own_ms_per_trial(results: &[TrialResult]) -> f64 {
    let total: std::time::Duration = results.iter().map(|r| r.own_time).sum();
    let ms = total.as_secs_f64() * 1e3 / results.len().max(1) as f64;
    (ms * 1e3).round() / 1e3
}

/// Totals of cells: (passed, failed, known failures, declined, not applicable).
fn totals<'a>(cells: impl Iterator<Item = &'a Cell>) -> (usize, usize, usize, usize, usize) {
    let mut t = (0, 0, 0, 0, 0);
    for cell in cells {
        match cell {
            Cell::Pass => t.0 += 1,
            Cell::Fail(_) | Cell::Broken(_) => t.1 += 1,
            Cell::KnownFailure(_) => t.2 += 1,
            Cell::Declined(_) => t.3 += 1,
            Cell::NotApplicable(_) => t.4 += 1,
        }
    }
    t
}

/// `N passed, N failed` plus the other counts.
pub fn summary(results: &[TrialResult]) -> String {
    summary_of(results.iter().map(|r| &r.cell))
}

/// [`summary`] of cells (a document read back, a merge of shards).
pub fn summary_of<'a>(cells: impl Iterator<Item = &'a Cell>) -> String {
    let (p, f, k, u, n) = totals(cells);
    format!("{p} passed, {f} failed ({k} known-failure, {u} declined, {n} not-applicable)")
}
