//! Running every trial of a system: trials sharing a prompt one after another on one worker (the
//! recording upstream attributes requests by prompt), prompts in parallel on the system's
//! workers. Then, in order: a trial whose task panicked or vanished is a broken trial (never
//! dropped), stream and buffered trials are compared, known failures are applied last, so that
//! any finding — the comparison's too — can be a known one.

use std::collections::{BTreeMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt as _;

use super::cause::{self, Ended};
use super::finding::{Finding, FindingKind, Side};
use super::known;
use super::phases::run_one;
use super::result::{Cell, TrialResult};
use super::system::System;
use super::trial::{RoutedTrial, RoutedTrialId, SystemKind};
use super::upstream::Upstream;
use super::way::Way;
use crate::case::Mode;
use crate::model::{Finish, Outcome, Severity};

/// Trials sharing a prompt, with their places in the run's order.
type Group = Vec<(usize, RoutedTrial)>;

/// Runs every trial through `way`, then compares modes and applies `system`'s known failures;
/// the results in the trials' order, one per trial.
pub(crate) async fn run_all<S: System>(
    way: Arc<S::Way>,
    system: &S,
    concurrency: Option<usize>,
    upstream: &Arc<Upstream>,
    trials: Vec<RoutedTrial>,
) -> Vec<TrialResult> {
    let mut results = run_trials(
        way,
        (system.kind(), system.name()),
        concurrency.unwrap_or_else(|| system.concurrency()),
        upstream,
        trials,
    )
    .await;
    compare_modes(&mut results);
    known::apply(system, &mut results);
    results
}

/// Every trial's result, in order, before modes are compared and known failures applied.
pub(crate) async fn run_trials<W: Way>(
    way: Arc<W>,
    (kind, name): (SystemKind, &str),
    concurrency: usize,
    upstream: &Arc<Upstream>,
    trials: Vec<RoutedTrial>,
) -> Vec<TrialResult> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for (i, t) in trials.iter().cloned().enumerate() {
        groups.entry(t.prompt()).or_default().push((i, t));
    }
    let queue: Arc<Mutex<VecDeque<Group>>> = Arc::new(Mutex::new(groups.into_values().collect()));
    let mut set = tokio::task::JoinSet::new();
    for n in 0..concurrency.max(1) {
        let (queue, upstream, way, name) = (
            Arc::clone(&queue),
            Arc::clone(upstream),
            Arc::clone(&way),
            name.to_string(),
        );
        set.spawn(async move { work(&*way, n, (kind, &name), &upstream, &queue).await });
    }
    let mut done: Vec<Option<TrialResult>> = vec![None; trials.len()];
    while let Some(joined) = set.join_next().await {
        for (i, r) in joined.unwrap_or_default() {
            done[i] = Some(r);
        }
    }
    (done.into_iter().zip(&trials))
        .map(|(r, t)| {
            r.unwrap_or_else(|| {
                broken(kind, name, t, "the trial's worker ended without its result")
            })
        })
        .collect()
}

/// One worker: takes prompt groups off the queue until it is empty. A trial that panics is a
/// broken trial, and the worker starts afresh for the next.
async fn work<W: Way>(
    way: &W,
    n: usize,
    (kind, name): (SystemKind, &str),
    upstream: &Upstream,
    queue: &Mutex<VecDeque<Group>>,
) -> Vec<(usize, TrialResult)> {
    let mut worker = way.worker(n);
    let mut out = Vec::new();
    loop {
        let group = queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let Some(group) = group else { break };
        for (i, t) in group {
            let ran = AssertUnwindSafe(run_one(way, &mut worker, (kind, name), upstream, &t))
                .catch_unwind()
                .await;
            let r = ran.unwrap_or_else(|panic| {
                let message = panic_message(&*panic);
                broken(kind, name, &t, &format!("the trial panicked: {message}"))
            });
            if matches!(&r.cell, Cell::Broken(m) if m.starts_with("the trial panicked")) {
                let spent = std::mem::replace(&mut worker, way.worker(n));
                way.end_worker(spent).await;
            }
            out.push((i, r));
        }
    }
    way.end_worker(worker).await;
    out
}

/// A panic's message, when it has one.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// A trial that ended without being judged: broken, with `why`.
fn broken(kind: SystemKind, name: &str, t: &RoutedTrial, why: &str) -> TrialResult {
    let tools: Vec<String> = t.case.tools.iter().map(|t| t.name.clone()).collect();
    let cause_key = cause::key_of(Ended::Broken(kind, why), &[], &tools, &t.case.name);
    let mut r = TrialResult::unjudged(t.name(kind, name), t.id(), Cell::Broken(why.to_string()));
    r.cause = cause_key.as_ref().map(cause::CauseKey::id);
    r.cause_key = cause_key;
    r.tools = tools;
    r
}

/// Stream and buffered agree: the stream trial of a (case, route, choice) makes the same calls,
/// with the same arguments, as its buffered trial. Runs on the raw cells, before known failures.
pub(crate) fn compare_modes(results: &mut [TrialResult]) {
    let mut buffered: BTreeMap<RoutedTrialId, Outcome> = BTreeMap::new();
    for r in results.iter() {
        if let (Mode::Buffered, Some(o)) = (r.id.mode, &r.downstream_outcome)
            && matches!(r.cell, Cell::Pass)
        {
            buffered.insert(r.id.clone(), o.clone());
        }
    }
    for r in results.iter_mut() {
        if r.id.mode != Mode::Stream || !matches!(r.cell, Cell::Pass) {
            continue;
        }
        let twin = r.id.in_mode(Mode::Buffered);
        let (Some(b), Some(o)) = (buffered.get(&twin), &r.downstream_outcome) else {
            continue;
        };
        let Some(message) = modes_differ(o, b) else {
            continue;
        };
        r.findings.push(Finding::new(
            FindingKind::Answer,
            Severity::Behaviour,
            Side::Downstream,
            message.clone(),
        ));
        r.cell = Cell::Fail(format!("downstream: {message}"));
        r.cause_key = cause::key_of(Ended::Failed, &r.findings, &r.tools, &r.id.case);
        r.cause = r.cause_key.as_ref().map(cause::CauseKey::id);
    }
}

/// How a stream's calls differ from its buffered twin's: their names, else a call's arguments
/// (by meaning: `check::same_json`, so key order and `30.0` for `30` aside; not when either was
/// cut by the output limit). `None` when they are the same.
fn modes_differ(stream: &Outcome, buffered: &Outcome) -> Option<String> {
    let names = |o: &Outcome| {
        o.tool_calls
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    let (s, b) = (names(stream), names(buffered));
    if s != b {
        return Some(format!(
            "stream calls [{}] differ from buffered [{}]",
            s.join(", "),
            b.join(", ")
        ));
    }
    // A call cut by the output limit is whatever each mode had when it was cut (Anthropic's
    // buffered answer says `input: {}`, its stream the fragments so far): not compared.
    if stream.finish == Finish::Length || buffered.finish == Finish::Length {
        return None;
    }
    let (s, b) = (stream.tool_calls.iter())
        .zip(&buffered.tool_calls)
        .find(|(s, b)| !super::check::same_json(&s.arguments, &b.arguments))?;
    Some(format!(
        "stream arguments of {} {} differ from buffered {}",
        s.name,
        crate::text::clip(&s.arguments.to_string(), 120),
        crate::text::clip(&b.arguments.to_string(), 120)
    ))
}
