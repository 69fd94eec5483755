//! Known failures, applied last: after every trial ran and the stream/buffered comparison added
//! its findings, so that any finding can be known. An entry covers trials by pattern and, when it
//! names one, by root cause; a passing trial it covers fails until the entry is removed (unless
//! `flaky`); an entry naming a cause no trial failed with is stale.

use toml::Spanned;

use super::profile::ProfileKnownFailure;
use super::result::{Cell, TrialResult};
use super::system::System;

/// The known failure covering a trial key (`case::route::choice::mode`) that fails with root
/// cause `cause`: an entry naming that cause whose pattern matches, else an entry naming no
/// cause whose pattern matches.
pub fn known_failure<'a>(
    entries: &'a [Spanned<ProfileKnownFailure>],
    key: &str,
    cause: Option<&str>,
) -> Option<&'a Spanned<ProfileKnownFailure>> {
    let matching = || {
        entries
            .iter()
            .filter(|k| crate::case::pattern_matches(&k.get_ref().failure.trials, key))
    };
    cause
        .and_then(|c| matching().find(|k| k.get_ref().cause.as_deref() == Some(c)))
        .or_else(|| matching().find(|k| k.get_ref().cause.is_none()))
}

/// Applies the system's known failures to every result: a failing or broken trial an entry
/// covers is `Known`; a passing one an entry without a cause names fails until the entry is
/// removed, unless the entry is `flaky` (the system fails it only sometimes).
pub(crate) fn apply<S: System>(system: &S, results: &mut [TrialResult]) {
    for r in results {
        let known = known_failure(system.known(), &r.id.key(), r.cause.as_deref());
        if let Some(k) = known {
            apply_entry(k.get_ref(), &system.locate(k.span()), r);
        }
    }
}

/// The rules for one entry (at `at`) that covers `r`.
fn apply_entry(k: &ProfileKnownFailure, at: &str, r: &mut TrialResult) {
    match &r.cell {
        Cell::Fail(_) | Cell::Broken(_) => r.cell = Cell::KnownFailure(k.failure.reason.clone()),
        Cell::Pass if !k.failure.flaky => {
            r.cell = Cell::Fail(format!("{at}: known failure now passes: remove it"));
        }
        _ => {}
    }
}

/// The system's known failures that name a root cause no trial of theirs failed with (a flaky
/// entry's run may have none), among
/// entries whose pattern matches a trial of this run and none of the trials it left out
/// (`left_out`, a filtered run's: it judges only the entries wholly inside it):
/// `path:line:col: what is wrong` for each, with what to do.
pub fn stale_causes<S: System>(
    system: &S,
    results: &[TrialResult],
    left_out: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    for k in system.known() {
        let entry = k.get_ref();
        // A flaky cause (a race under load) strikes only some runs: its absence is no news.
        let Some(cause) = entry.cause.as_ref().filter(|_| !entry.failure.flaky) else {
            continue;
        };
        let covers =
            |r: &&TrialResult| crate::case::pattern_matches(&entry.failure.trials, &r.id.key());
        let outside = |key: &String| crate::case::pattern_matches(&entry.failure.trials, key);
        if !results.iter().any(|r| covers(&r)) || left_out.iter().any(outside) {
            continue;
        }
        let seen = results
            .iter()
            .filter(covers)
            .any(|r| matches!(r.cell, Cell::KnownFailure(_)) && r.cause.as_deref() == Some(cause));
        if !seen {
            out.push(format!(
                "{}: known failure for root cause `{cause}` (trials `{}`): no trial failed with it; the bug is fixed or its finding changed\n  run `tooltape {} {} --findings` and remove the entry or update its cause",
                system.locate(k.span()),
                entry.failure.trials,
                system.kind().slug(),
                system.name()
            ));
        }
    }
    out
}
