//! One trial as named phases in the order they run, the same for every way through (a gateway
//! over HTTP, a library through its driver): 1 the caller's request, 2 the exchange with what
//! went upstream recorded, 3 judge upstream, 4 judge downstream, 5 the rounds and what only the
//! way saw, 6 the cell and its root cause. The result is built once, at the end, with
//! tooltape's own time (the trial less every exchange's wait).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::cause;
use super::finding::Finding;
use super::judge::{self, CallerRequest, ReadExchange, Round};
use super::result::{Cell, RequestTiming, TrialResult};
use super::trial::{RoutedTrial, SystemKind};
use super::upstream::Upstream;
use super::way::{NotExpressible, PromptWatch, RoundStep, TrialCtx, Way};
use crate::case::CaseOption;
use crate::model::{Outcome, Provider};
use crate::providers::openai_responses::response_id;
use crate::run::OwnTime;

/// What a trial ended with, before it is named and timed.
#[derive(Default)]
struct TrialEnd {
    client_request: Value,
    upstream_request: Option<Value>,
    upstream_answer: Option<String>,
    downstream_status: Option<u16>,
    downstream_body: Vec<u8>,
    downstream_outcome: Option<Outcome>,
    findings: Vec<Finding>,
    /// Set when the trial ended before its judgements; otherwise the findings make the cell.
    cell: Option<Cell>,
    requests: Vec<RequestTiming>,
    /// The way could not carry these options, each incidental to the case: the trial runs
    /// again without them, the note kept.
    leave_out: Option<(Vec<CaseOption>, String)>,
}

impl TrialEnd {
    fn ended(mut self, cell: Cell) -> TrialEnd {
        self.cell = Some(cell);
        self
    }
}

/// Runs one trial of system `name` on `worker`. A trial whose way cannot carry an option
/// incidental to its case runs again without it, the note in `left_out`.
pub(crate) async fn run_one<W: Way>(
    way: &W,
    worker: &mut W::Worker,
    (kind, name): (SystemKind, &str),
    upstream: &Upstream,
    trial: &RoutedTrial,
) -> TrialResult {
    let mut clock = OwnTime::start();
    let mut run = Cow::Borrowed(trial);
    let mut left_out = Vec::new();
    let ends = loop {
        let ends = phases(way, worker, upstream, &run, &mut clock).await;
        way.end_trial(worker).await;
        let Some((options, note)) = ends.leave_out else {
            break ends;
        };
        left_out.push(note);
        let case = Arc::new(run.case.without(&options));
        run = Cow::Owned(RoutedTrial {
            case,
            ..run.into_owned()
        });
    };
    let mut findings = ends.findings;
    let cell = ends.cell.unwrap_or_else(|| Cell::of(&mut findings));
    let tools: Vec<String> = trial.case.tools.iter().map(|t| t.name.clone()).collect();
    let cause_key = cause::key_of(cell.ended(kind), &findings, &tools, &trial.case.name);
    TrialResult {
        name: trial.name(kind, name),
        id: trial.id(),
        client_request: ends.client_request,
        upstream_request: ends.upstream_request,
        upstream_answer: ends.upstream_answer,
        downstream_status: ends.downstream_status,
        downstream_outcome: ends.downstream_outcome,
        findings,
        cell,
        left_out,
        cause: cause_key.as_ref().map(cause::CauseKey::id),
        cause_key,
        tools,
        own_time: clock.own(),
        downstream_body: ends.downstream_body,
        requests: ends.requests,
    }
}

/// The options a way's refusal names when each is incidental to `trial`'s case (set, not its
/// subject, and one a request can leave out), with the note the trial keeps; `None` when any
/// is not (the trial is then not applicable).
fn incidental(trial: &RoutedTrial, refused: &NotExpressible) -> Option<(Vec<CaseOption>, String)> {
    let options = &refused.options;
    let all = !options.is_empty() && options.iter().all(|o| trial.case.incidental(*o));
    all.then(|| {
        let names: Vec<&str> = options.iter().map(|o| o.slug()).collect();
        let note = format!(
            "{} left out: {} ({} not this case's subject; the trial ran without it)",
            names.join(", "),
            refused.detail,
            if names.len() == 1 {
                "it is"
            } else {
                "they are"
            }
        );
        (options.clone(), note)
    })
}

/// The phases, in order; each early return says why the trial ended there.
async fn phases<W: Way>(
    way: &W,
    worker: &mut W::Worker,
    upstream: &Upstream,
    trial: &RoutedTrial,
    clock: &mut OwnTime,
) -> TrialEnd {
    let mut ends = TrialEnd::default();
    // 1: the caller's request.
    let (asked, request) = match way.ask(trial, upstream) {
        Ok(asked) => asked,
        Err(cell) => return ends.ended(cell),
    };
    let watch = PromptWatch {
        upstream,
        prompt: trial.prompt(),
        scenario: &trial.case.file.simulate,
        // A round may carry no prompt: continued by `previous_response_id`, or after a
        // compaction item the history before which a client may drop (the APIs read nothing
        // before it; pydantic-ai's `_trim_before_compaction` drops it).
        results: (trial.case.file.continue_with.is_some() || trial.case.file.simulate.compaction)
            .then_some(&trial.case.file.rounds)
            .into_iter()
            .flatten()
            .flat_map(|r| r.results.iter().map(|x| x.content.neutral().0))
            .collect(),
    };
    let ctx = TrialCtx {
        trial,
        asked: &asked,
        request: &request,
        watch: &watch,
    };
    ends.client_request = way.shown(&ctx);
    // 2: the exchange, watched upstream.
    let sent = way.send(worker, &ctx).await;
    clock.waited(sent.waited);
    let answer = match sent.answer {
        Ok(answer) => answer,
        Err(e) => return ends.ended(Cell::Broken(e)),
    };
    if let Some(refused) = way.not_expressible(&answer) {
        ends.leave_out = incidental(trial, &refused);
        return ends.ended(Cell::NotApplicable(refused.detail));
    }
    let kept = way.keep(&ctx, &answer, &sent.seen);
    ends.downstream_status = kept.status;
    ends.downstream_outcome = kept.outcome;
    ends.downstream_body = kept.body;
    ends.requests.extend(kept.timing);
    let Some(ex) = sent.seen.last() else {
        match way.unsent(&ctx, &answer) {
            Ok(findings) => ends.findings = findings,
            Err(cell) => ends.cell = Some(cell),
        }
        return ends;
    };
    let (sent_request, upstream_answer) = ex.record();
    ends.upstream_request = Some(sent_request);
    ends.upstream_answer = Some(upstream_answer);
    // 3 and 4: upstream, then downstream, on the exchange read once.
    let read = ReadExchange::read(ex, asked.target, &asked.req);
    let mut findings = judge::upstream(&asked, &read);
    let (downstream, continues) = way.downstream(&ctx, &read, &answer);
    findings.extend(downstream);
    // 5: the rounds.
    if let Some(first) = continues {
        let from = From {
            last: first,
            last_id: continued_id(trial, &asked, &ends.downstream_body),
            upstream_id: answer_id(&read),
            answered_by: read.target,
            answered: read.answer,
        };
        let (judged, timings) = rounds(way, worker, &ctx, from, clock).await;
        findings.extend(judged);
        ends.requests.extend(timings);
    }
    findings.extend(way.settle(worker, &ctx));
    ends.findings = findings;
    ends
}

/// The id of the caller's first answer, when its rounds continue by `previous_response_id`
/// (a Responses caller in a case asking `continue_with`).
fn continued_id(trial: &RoutedTrial, asked: &CallerRequest, body: &[u8]) -> Option<String> {
    let continue_with = trial.case.file.continue_with;
    crate::run::continues_by_id(asked.inbound, continue_with)
        .then(|| response_id(body))
        .flatten()
}

/// The id of a Responses upstream's answer in `read` (what a round continued by id must name).
fn answer_id(read: &ReadExchange<'_>) -> Option<String> {
    (read.target == Provider::OpenaiResponses)
        .then(|| response_id(&read.ex.body()))
        .flatten()
}

/// Where the next round goes on from.
struct From {
    /// What the caller got last: the calls the round's results answer.
    last: Outcome,
    /// The id of the caller's last answer, when the rounds continue by it.
    last_id: Option<String>,
    /// The id of upstream's last answer (a Responses one).
    upstream_id: Option<String>,
    /// The provider that answered the exchange before, and what it answered: its reasoning
    /// state must come back to it.
    answered_by: Provider,
    answered: Option<Outcome>,
}

/// Phase 5: each round's tool results sent back through the system (answering the calls as it
/// handed them over), judged upstream (a result must answer a call of the conversation it
/// sent) and downstream, while the model goes on calling tools.
async fn rounds<W: Way>(
    way: &W,
    worker: &mut W::Worker,
    ctx: &TrialCtx<'_, W::Request>,
    mut from: From,
    clock: &mut OwnTime,
) -> (Vec<Finding>, Vec<RequestTiming>) {
    let (trial, asked) = (ctx.trial, ctx.asked);
    let (mut findings, mut timings) = (Vec::new(), Vec::new());
    let continue_with = trial.case.file.continue_with;
    let continued = crate::run::continues_by_id(asked.inbound, continue_with);
    let mut prev = asked.req.clone();
    for (n, round) in trial.case.file.rounds.iter().enumerate() {
        if from.last.tool_calls.is_empty() {
            break;
        }
        let mut next = crate::run::follow_up(prev.clone(), &from.last, round, &trial.choice);
        if let Some(p) = &round.provider {
            // The conversation goes on on another provider: its route's model (fallback).
            next.model = trial.model_for(*p.get_ref());
            // A caller in Anthropic's format continues on Anthropic as its rules say: a tool-use
            // turn without Anthropic's own thinking block goes on without thinking.
            if asked.inbound == Provider::Anthropic {
                crate::providers::opaque::think_only_on_own(*p.get_ref(), &mut next);
            }
        }
        let Ok(mut enc) = crate::providers::encode(asked.inbound, &next) else {
            break;
        };
        // A Responses caller continuing by the last answer's id sends only the results.
        if let Some(id) = &from.last_id {
            crate::providers::openai_responses::continue_from(&mut enc.request.body, id);
        }
        if crate::run::refers_to_reasoning(asked.inbound, continue_with) {
            crate::providers::openai_responses::refer_to_reasoning(&mut enc.request.body);
        }
        let step = RoundStep {
            prev: &prev,
            next: &next,
            encoded: &enc.request,
        };
        let sent = way.round(worker, ctx, step).await;
        clock.waited(sent.waited);
        timings.extend(sent.answer.timing);
        let got = &sent.answer.got;
        if from.last_id.is_some() {
            from.last_id = got.as_ref().ok().and_then(|(r, _)| response_id(&r.body));
        }
        let read = (sent.seen.last()).map(|ex| ReadExchange::read(ex, asked.target, &next));
        // What the provider before answered is carried back only to that provider; another is
        // judged by its own rules (its reasoning never sent to it as its own).
        let changed = read.as_ref().is_some_and(|r| r.target != from.answered_by);
        let judged_round = Round {
            n,
            next: &next,
            request: &enc.request,
            answered: from.answered.as_ref().filter(|_| !changed),
            continued,
            upstream_id: from.upstream_id.as_deref(),
        };
        let (judged, go_on) = judge::round(asked, &judged_round, read.as_ref(), got);
        findings.extend(judged);
        if way.judges_the_model() {
            findings.extend(judge::produced_round(n, &next, got));
        }
        if let (true, Some(a), Some(r)) = (changed, &from.answered, &read) {
            findings.extend(judge::foreign_reasoning(n, from.answered_by, a, r));
        }
        from.answered_by = read.as_ref().map_or(from.answered_by, |r| r.target);
        from.upstream_id = read.as_ref().and_then(answer_id);
        from.answered = read.and_then(|r| r.answer);
        from.last = match sent.answer.next {
            Some(o) if go_on => o,
            _ => break,
        };
        prev = next;
    }
    (findings, timings)
}
