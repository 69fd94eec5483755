//! Drift at the outcome level: replay a cassette through the trial as the harness does
//! (`harness::run_on_cassette`, on loopback), judge the run with `contract::verdict`, and compare
//! the normalized outcomes of two cassettes.

use serde_json::Value;

use super::{DriftFinding, Kind, Severity};
use crate::case::Trial;
use crate::cassette::Cassette;
use crate::contract::{self, ContractVerdict};
use crate::harness;
use crate::model::Outcome;

/// A cassette decoded and judged on its trial's contract.
#[derive(Debug)]
pub(crate) struct Judged {
    /// One per interaction: the outcome, or the decoder's error.
    pub outcomes: Vec<Result<Outcome, String>>,
    pub verdict: ContractVerdict,
}

/// Replays `c` for the trial the way the harness does (loopback server, the trial's own
/// requests exchange after exchange, each response decoded with the request it answers) and
/// checks the contract. Whether the requests match the recording does not matter here: the
/// other side may have been recorded from another version. A cassette without interactions
/// (encoding failed closed when it was recorded) is judged on what the encoder says now.
pub(crate) fn judge(trial: &Trial, c: &Cassette) -> Judged {
    let (run, _) = crate::runtime::runtime().block_on(harness::run_on_cassette(trial, c));
    let verdict = contract::verdict(trial, &run);
    let outcomes = run
        .exchanges
        .into_iter()
        .map(|e| e.outcome.map_err(|e| e.to_string()))
        .collect();
    Judged { outcomes, verdict }
}

/// `pass`, `fail: first problem`, `known-failure: reason`, ...: what a verdict flip shows.
pub(crate) fn verdict_text(v: &ContractVerdict) -> String {
    match v {
        ContractVerdict::Pass => "pass".into(),
        ContractVerdict::Fail { problems } => {
            format!("fail: {}", problems.first().map_or("", String::as_str))
        }
        ContractVerdict::KnownFailure { reason, .. } => format!("known-failure: {reason}"),
        ContractVerdict::KnownFailurePasses { reason, .. } => {
            format!("known-failure-passes: {reason}")
        }
        ContractVerdict::NotApplicable { code, .. } => format!("not-applicable: {code}"),
    }
}

fn verdict_key(v: &ContractVerdict) -> &'static str {
    match v {
        ContractVerdict::KnownFailurePasses { .. } => "known-failure-passes",
        v => v.label(),
    }
}

/// Outcome findings, and whether the model's behaviour changed (calls, text or exchanges).
pub(crate) fn diff(
    old: &Judged,
    new: &Judged,
    old_model: Option<&str>,
    new_model: Option<&str>,
) -> (Vec<DriftFinding>, bool) {
    let mut out = Vec::new();
    let mut behaviour_changed = old.outcomes.len() != new.outcomes.len();
    if behaviour_changed {
        out.push(DriftFinding::new(
            Severity::Behaviour,
            Kind::Exchanges,
            None,
            Some(old.outcomes.len().to_string()),
            Some(new.outcomes.len().to_string()),
        ));
    }
    if verdict_key(&old.verdict) != verdict_key(&new.verdict) {
        let (a, b) = (verdict_text(&old.verdict), verdict_text(&new.verdict));
        out.push(DriftFinding::new(
            Severity::Breaking,
            Kind::Verdict,
            None,
            Some(a),
            Some(b),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, (a, b)) in old.outcomes.iter().zip(&new.outcomes).enumerate() {
        match (a, b) {
            (Ok(a), Ok(b)) => behaviour_changed |= exchange_diff(i, a, b, &mut seen, &mut out),
            (Err(x), Err(y)) if x == y => {}
            (x, y) => decode_diff(i, x, y, &mut seen, &mut out),
        }
    }
    out.extend(model_diff(old, new, old_model, new_model));
    (out, behaviour_changed)
}

/// One exchange whose outcomes both decode: each aspect that differs (calls or their arguments,
/// text, finish, error, diagnostics, hosted search) as a finding, a kind at most once across the
/// exchanges (`seen`); true when the model's behaviour changed (calls, or text present or not).
fn exchange_diff(
    i: usize,
    a: &Outcome,
    b: &Outcome,
    seen: &mut std::collections::BTreeSet<Kind>,
    out: &mut Vec<DriftFinding>,
) -> bool {
    let mut changed = false;
    let at = |k: Kind, before: String, after: String| {
        let path = (i > 0).then(|| format!("exchange {}", i + 1));
        DriftFinding::new(k.severity(), k, path, Some(before), Some(after))
    };
    let mut push = |f: DriftFinding| {
        if seen.insert(f.kind) {
            out.push(f);
        }
    };
    let (na, nb) = (names(a), names(b));
    if na != nb {
        changed = true;
        push(at(Kind::ToolCalls, na, nb));
    } else if let Some((x, y)) = a
        .tool_calls
        .iter()
        .zip(&b.tool_calls)
        .find(|(x, y)| x.arguments != y.arguments)
    {
        push(at(
            Kind::Arguments,
            format!("{}({})", x.name, x.arguments),
            format!("{}({})", y.name, y.arguments),
        ));
    }
    if a.text != b.text {
        changed |= a.text.is_some() != b.text.is_some();
        push(at(
            Kind::Text,
            preview(a.text.as_deref()),
            preview(b.text.as_deref()),
        ));
    }
    if a.raw_finish != b.raw_finish || a.finish != b.finish {
        push(at(Kind::Finish, finish(a), finish(b)));
    }
    if a.error != b.error {
        let e = |o: &Outcome| {
            o.error
                .as_ref()
                .map_or("none".into(), |e| format!("{} {}", e.status, e.message))
        };
        push(at(Kind::Error, e(a), e(b)));
    }
    let (da, db) = (diagnostics(a), diagnostics(b));
    if da != db {
        push(at(Kind::Diagnostics, da, db));
    }
    let hosted = |o: &Outcome| {
        o.hosted
            .as_ref()
            .map(|h| (h.search_calls, h.tool_type.clone()))
    };
    if hosted(a) != hosted(b) {
        let show = |o: &Outcome| {
            hosted(o).map_or("none".into(), |(n, t)| {
                format!("{n} search call(s) via {}", t.unwrap_or_default())
            })
        };
        push(at(Kind::Hosted, show(a), show(b)));
    }
    changed
}

/// One exchange that decodes on one side only, or fails differently: a decode finding (once).
fn decode_diff(
    i: usize,
    x: &Result<Outcome, String>,
    y: &Result<Outcome, String>,
    seen: &mut std::collections::BTreeSet<Kind>,
    out: &mut Vec<DriftFinding>,
) {
    if seen.insert(Kind::Decode) {
        let show = |r: &Result<Outcome, String>| {
            r.as_ref()
                .map_or_else(|e| format!("error: {e}"), |_| "decodes".into())
        };
        let sev = if y.is_err() {
            Severity::Breaking
        } else {
            Severity::Behaviour
        };
        let path = Some(format!("exchange {}", i + 1));
        out.push(DriftFinding::new(
            sev,
            Kind::Decode,
            path,
            Some(show(x)),
            Some(show(y)),
        ));
    }
}

/// The model that answered (as said, else as the first decoded outcome names it), when it changed.
fn model_diff(
    old: &Judged,
    new: &Judged,
    old_model: Option<&str>,
    new_model: Option<&str>,
) -> Option<DriftFinding> {
    let first_model = |j: &Judged| {
        j.outcomes
            .iter()
            .find_map(|o| o.as_ref().ok().and_then(|o| o.model.clone()))
    };
    let (ma, mb) = (
        old_model.map(str::to_string).or_else(|| first_model(old)),
        new_model.map(str::to_string).or_else(|| first_model(new)),
    );
    if ma != mb {
        let show = |m: Option<String>| m.unwrap_or_else(|| "(not said)".into());
        return Some(DriftFinding::new(
            Severity::Behaviour,
            Kind::Model,
            None,
            Some(show(ma)),
            Some(show(mb)),
        ));
    }
    None
}

fn names(o: &Outcome) -> String {
    let n: Vec<&str> = o.tool_calls.iter().map(|c| c.name.as_str()).collect();
    format!("[{}]", n.join(", "))
}

fn finish(o: &Outcome) -> String {
    let f = serde_json::to_value(o.finish)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    format!("{} ({f})", o.raw_finish.as_deref().unwrap_or("none"))
}

fn diagnostics(o: &Outcome) -> String {
    let d: Vec<String> = o
        .diagnostics
        .iter()
        .map(|d| contract::kind_name(d.kind))
        .collect();
    format!("[{}]", d.join(", "))
}

/// A text shortened for one line: quoted, at most 60 characters, or `none`.
fn preview(t: Option<&str>) -> String {
    match t {
        None => "none".into(),
        Some(t) => {
            let one: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
            let short: String = one.chars().take(60).collect();
            let more = if one.chars().count() > 60 { "…" } else { "" };
            Value::String(format!("{short}{more}")).to_string()
        }
    }
}

#[cfg(test)]
mod tests;
