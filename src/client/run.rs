//! Running client trials. One trial is named phases: build the caller's request, the driver's
//! call through the library (watched by the recording upstream, as gateway mode's exchanges
//! are), judge upstream (gateway mode's judge), judge what the caller got (`check`), the
//! rounds (tool results sent back through the library), the cell. Drivers are long-lived
//! processes, one per worker; a driver that fails is stopped and started again.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::check;
use super::driver::{Driver, Spec};
use super::profile::LoadedClient;
use super::protocol::{DriverResult, DriverTrial, Next};
use crate::gateway::judge::{self, Asked};
use crate::gateway::{Cell, Finding, FindingKind, GatewayTrial, Side, Slot, TrialResult, Upstream};
use crate::http::HttpResponse;
use crate::model::{Outcome, Severity};
use crate::run::{Endpoint, OwnTime, watched};

/// A worker's driver: started on first use, restarted after a failure.
struct Worker<'a> {
    spec: &'a Spec,
    timeout: Duration,
    driver: Option<Driver>,
    /// A trial is open on the driver: it answered, and waits for results or `done`.
    open: bool,
}

impl Worker<'_> {
    /// One protocol step: writes `doc`, reads the result.
    async fn step(&mut self, doc: &impl serde::Serialize) -> Result<DriverResult, String> {
        if self.driver.is_none() {
            self.driver = Some(Driver::spawn(self.spec)?);
        }
        let Some(d) = self.driver.as_mut() else {
            return Err("no driver".into());
        };
        let got = match d.send(doc).await {
            Ok(()) => d.result(self.timeout).await,
            Err(e) => Err(e),
        };
        self.open = got.is_ok();
        if got.is_err()
            && let Some(mut d) = self.driver.take()
        {
            d.kill();
        }
        got
    }

    /// Ends a trial: the driver reads its next trial.
    async fn done(&mut self) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        if let Some(d) = self.driver.as_mut()
            && d.send(&Next::Done { done: true }).await.is_err()
            && let Some(mut d) = self.driver.take()
        {
            d.kill();
        }
    }
}

/// What a trial ended with, before it is named and timed.
#[derive(Default)]
struct Ends {
    client_request: Value,
    upstream_request: Option<Value>,
    upstream_answer: Option<String>,
    got: Option<DriverResult>,
    findings: Vec<Finding>,
    cell: Option<Cell>,
}

async fn run_one(
    worker: &mut Worker<'_>,
    profile: &LoadedClient,
    upstream: &Upstream,
    trial: &GatewayTrial,
) -> TrialResult {
    let mut clock = OwnTime::start();
    let ends = phases(worker, profile, upstream, trial, &mut clock).await;
    worker.done().await;
    let mut findings = ends.findings;
    let cell = ends.cell.unwrap_or_else(|| judge::cell_of(&mut findings));
    TrialResult {
        name: format!("client::{}::{}", profile.name, trial.key()),
        key: trial.key(),
        row: trial.row(),
        route: trial.route.name(),
        client_request: ends.client_request,
        upstream_request: ends.upstream_request,
        upstream_answer: ends.upstream_answer,
        downstream_status: None,
        downstream_outcome: ends.got.as_ref().map(DriverResult::outcome),
        findings,
        cell,
        // Root causes are gateway mode's (`tooltape gateway NAME --findings`).
        cause: None,
        cause_key: None,
        tools: Vec::new(),
        own_time: clock.own(),
        downstream_body: ends
            .got
            .as_ref()
            .and_then(|g| serde_json::to_vec(g).ok())
            .unwrap_or_default(),
        requests: Vec::new(),
    }
}

/// Phase 1: the caller's request; a trial outside the protocol or its API is not applicable.
fn build(
    profile: &LoadedClient,
    upstream: &Upstream,
    trial: &GatewayTrial,
) -> Result<(Asked, DriverTrial), Cell> {
    let api = trial.route.upstream;
    let (base, mut req) = trial.first_request(api);
    if !req.hosted.is_empty() || req.thinking.is_some() {
        return Err(Cell::NotApplicable(
            "hosted tools and thinking are not part of the driver protocol".into(),
        ));
    }
    let options = profile
        .route(&trial.route.name())
        .map(|r| r.options.clone())
        .unwrap_or_default();
    let asked_trial = DriverTrial::of(
        format!("client::{}::{}", profile.name, trial.key()),
        api,
        upstream.base_url(),
        options,
        &req,
    );
    // The caller asks for strict tools or not (a library has no "strict where it keeps the
    // meaning" policy): the request a faithful library sends is encoded with that choice.
    req.strict = asked_trial.request().strict;
    let encoded = crate::providers::encode(api, &req)
        .map_err(|e| Cell::NotApplicable(format!("the {} encoder refuses: {e}", api.slug())))?;
    let invalid = judge::client_fault(&base, &encoded.request.body);
    let asked = Asked {
        base,
        inbound: api,
        target: api,
        req,
        encoded,
        endpoint: Endpoint {
            base_url: upstream.base_url(),
            key: None,
            extra_headers: Vec::new(),
        },
        invalid,
        neutral: true,
    };
    Ok((asked, asked_trial))
}

/// The phases, in order; each early return says why the trial ended there.
async fn phases(
    worker: &mut Worker<'_>,
    profile: &LoadedClient,
    upstream: &Upstream,
    trial: &GatewayTrial,
    clock: &mut OwnTime,
) -> Ends {
    let mut ends = Ends::default();
    let (asked, driver_trial) = match build(profile, upstream, trial) {
        Ok(b) => b,
        Err(cell) => {
            ends.cell = Some(cell);
            return ends;
        }
    };
    ends.client_request = serde_json::to_value(&driver_trial).unwrap_or(Value::Null);
    let slot = Slot {
        upstream,
        prompt: trial.prompt(),
        scenario: &trial.case.file.simulate,
    };
    let sent = watched(&slot, worker.step(&driver_trial)).await;
    clock.waited(sent.waited);
    let got = match sent.answer {
        Ok(got) => got,
        Err(e) => {
            ends.cell = Some(Cell::Broken(e));
            return ends;
        }
    };
    if !got.unsupported.is_empty() {
        ends.cell = Some(Cell::NotApplicable(format!(
            "not expressible in {}: {}",
            profile.name,
            got.unsupported.join(", ")
        )));
        return ends;
    }
    ends.got = Some(got.clone());
    let Some(ex) = sent.seen.last() else {
        // A library that refuses with a client error before sending anything refused cleanly:
        // not supported, as a gateway's 4xx is in gateway mode.
        match &got.error {
            Some(e) if !asked.invalid && e.status.is_some_and(|s| (400..500).contains(&s)) => {
                let message: String = e.message.chars().take(160).collect();
                ends.cell = Some(Cell::Unsupported(format!("{}: {message}", e.kind)));
            }
            _ => ends.findings = unsent(&asked, &got),
        }
        return ends;
    };
    let (request, answer) = ex.record();
    ends.upstream_request = Some(request);
    ends.upstream_answer = Some(answer);
    let target = judge::target_of_path(&ex.request.path, asked.target);
    let mut findings = judge::upstream(&asked, ex, target);
    let expected = judge::upstream_outcome(target, asked.inbound, &asked.req, ex);
    // The same answer with no strict rewrite undone: the nulls a strict schema made the model
    // write, as a library that passes them through hands them over.
    let raw = {
        let mut neutral = asked.req.clone();
        neutral.strict = crate::model::StrictPolicy::Off;
        for t in &mut neutral.tools {
            t.strict = None;
        }
        judge::decoded(target, &neutral, ex)
    };
    let broken = expected.as_ref().and_then(crate::gateway::broken);
    findings.extend(check::downstream(
        asked.inbound,
        &got,
        ex.status,
        expected.as_ref(),
        raw.as_ref(),
        broken,
    ));
    if got.error.is_none() && ex.status < 400 && !asked.invalid {
        findings.extend(rounds(worker, &asked, trial, &slot, got.outcome(), clock).await);
    }
    ends.findings = findings;
    ends
}

/// Nothing went upstream: right only when the caller's request is invalid in its own API and
/// the library said so.
fn unsent(asked: &Asked, got: &DriverResult) -> Vec<Finding> {
    let message = match (&got.error, asked.invalid) {
        (Some(_), true) => return Vec::new(),
        (Some(e), false) => format!(
            "nothing sent upstream: the library raised {}: {}",
            if e.kind.is_empty() {
                "an error"
            } else {
                &e.kind
            },
            e.message.chars().take(160).collect::<String>()
        ),
        (None, _) => "nothing sent upstream, and no error handed to the caller".into(),
    };
    vec![Finding::new(
        FindingKind::Request,
        Severity::Breaking,
        Side::Upstream,
        message,
    )]
}

/// Phase 5: each round's tool results sent back through the library (answering the calls as
/// the library handed them over), judged upstream (a result must answer a call of the
/// conversation the library sent) and downstream.
async fn rounds(
    worker: &mut Worker<'_>,
    asked: &Asked,
    trial: &GatewayTrial,
    slot: &Slot<'_>,
    first: Outcome,
    clock: &mut OwnTime,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut prev = asked.req.clone();
    let mut last = first;
    for (n, round) in trial.case.file.rounds.iter().enumerate() {
        if last.tool_calls.is_empty() {
            break;
        }
        let next = crate::run::follow_up(prev.clone(), &last, round, &trial.choice);
        let results = next.messages[prev.messages.len() + 1..]
            .iter()
            .map(super::protocol::DriverMessage::of)
            .collect();
        let Ok(enc) = crate::providers::encode(asked.inbound, &next) else {
            break;
        };
        let tool_choice = next.tool_choice.as_ref().map(super::protocol::choice_value);
        let step = Next::Results {
            results,
            tool_choice,
        };
        let sent = watched(slot, worker.step(&step)).await;
        clock.waited(sent.waited);
        let got: judge::Got = sent.answer.as_ref().map_err(Clone::clone).map(|g| {
            // An error without an HTTP status was raised by the library itself: a refusal
            // before sending when nothing went upstream, else a failure of its own.
            let local = if sent.seen.is_empty() { 400 } else { 500 };
            let status = g.error.as_ref().map_or(200, |e| e.status.unwrap_or(local));
            let body = g
                .error
                .as_ref()
                .map(|e| e.message.clone().into_bytes())
                .unwrap_or_default();
            let response = HttpResponse {
                status,
                headers: Default::default(),
                body,
            };
            (response, Ok(g.outcome()))
        });
        let (judged, go_on) = judge::round(n, asked, &next, &enc.request, sent.seen.last(), &got);
        findings.extend(judged);
        last = match sent.answer {
            Ok(g) if go_on && g.error.is_none() => g.outcome(),
            _ => break,
        };
        prev = next;
    }
    findings
}

/// Trials sharing a prompt, with their places in the run's order.
type Group = Vec<(usize, GatewayTrial)>;

/// Runs every trial: trials sharing a prompt one after another on one worker (the upstream
/// attributes requests by prompt), prompts in parallel on `concurrency` workers, each with a
/// driver process of its own.
pub async fn run_all(
    profile: Arc<LoadedClient>,
    upstream: &Arc<Upstream>,
    spec: Spec,
    trials: Vec<GatewayTrial>,
) -> Vec<TrialResult> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for (i, t) in trials.into_iter().enumerate() {
        groups.entry(t.prompt()).or_default().push((i, t));
    }
    let queue: Arc<Mutex<VecDeque<Group>>> = Arc::new(Mutex::new(groups.into_values().collect()));
    let timeout = Duration::from_secs(profile.profile.driver.timeout_secs.max(1));
    let mut set = tokio::task::JoinSet::new();
    for w in 0..profile.profile.concurrency.max(1) {
        let (queue, upstream, profile) = (
            Arc::clone(&queue),
            Arc::clone(upstream),
            Arc::clone(&profile),
        );
        let mut spec = spec.clone();
        spec.log = spec.log.with_extension(format!("{w}.log"));
        set.spawn(async move {
            let mut worker = Worker {
                spec: &spec,
                timeout,
                driver: None,
                open: false,
            };
            let mut out = Vec::new();
            loop {
                let group = queue
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop_front();
                let Some(group) = group else { break };
                for (i, t) in group {
                    let mut r = run_one(&mut worker, &profile, &upstream, &t).await;
                    crate::gateway::apply_known_failure(profile.known_failure(&r.key), &mut r);
                    out.push((i, r));
                }
            }
            if let Some(d) = worker.driver.take() {
                d.finish().await;
            }
            out
        });
    }
    crate::gateway::in_order(set).await
}
