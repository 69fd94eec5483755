//! Running gateway trials. One trial is named phases in the order they run — build the client
//! request, exchange through the gateway, judge upstream, judge downstream, judge the rounds,
//! the cell — and every request it sends goes through the one exchange routine
//! (`run::exchange`) with the recording upstream's slot as its watch. The result is built once,
//! at the end, with tooltape's own time (the trial less every exchange's wait).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::check::Finding;
use super::judge::{self, Asked};
use super::profile::{self, LoadedProfile};
use super::suite::{Cell, GatewayTrial, RequestTiming, TrialResult, apply_known, cross_mode};
use super::upstream::{Exchange, Upstream};
use crate::model::Outcome;
use crate::run::{Endpoint, OwnTime, Watch, exchange};
use crate::scenario::Scenario;

/// The recording upstream's slot for one trial's prompt: what the gateway sent upstream while
/// the trial's request was in flight.
pub(crate) struct Slot<'a> {
    pub upstream: &'a Upstream,
    pub prompt: String,
    pub scenario: &'a Scenario,
}

impl Watch for Slot<'_> {
    type Seen = Vec<Exchange>;
    fn open(&self) {
        self.upstream.open(&self.prompt, self.scenario);
    }
    fn close(&self) -> Vec<Exchange> {
        self.upstream.close(&self.prompt)
    }
}

/// What a trial ended with, before it is named and timed.
#[derive(Default)]
struct Ends {
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
}

/// Runs one trial against the gateway at `gateway_url`, upstream recorded by `upstream`.
pub(super) async fn run_one(
    client: &reqwest::Client,
    profile: &LoadedProfile,
    upstream: &Upstream,
    gateway_url: &str,
    trial: &GatewayTrial,
) -> TrialResult {
    let mut clock = OwnTime::start();
    let ends = phases(client, profile, upstream, gateway_url, trial, &mut clock).await;
    let mut findings = ends.findings;
    let cell = ends.cell.unwrap_or_else(|| judge::cell_of(&mut findings));
    let tools: Vec<String> = trial.case.tools.iter().map(|t| t.name.clone()).collect();
    let ended = match &cell {
        Cell::Fail(_) => super::cause::Ended::Failed,
        Cell::Broken(m) => super::cause::Ended::Broken(m),
        _ => super::cause::Ended::Other,
    };
    let cause_key = super::cause::key_of(ended, &findings, &tools, &trial.case.name);
    TrialResult {
        name: trial.name(&profile.name),
        key: trial.key(),
        row: trial.row(),
        route: trial.route.name(),
        client_request: ends.client_request,
        upstream_request: ends.upstream_request,
        upstream_answer: ends.upstream_answer,
        downstream_status: ends.downstream_status,
        downstream_outcome: ends.downstream_outcome,
        findings,
        cell,
        cause: cause_key.as_ref().map(super::cause::CauseKey::id),
        cause_key,
        tools,
        own_time: clock.own(),
        downstream_body: ends.downstream_body,
        requests: ends.requests,
    }
}

/// The phases, in order; each early return says why the trial ended there.
async fn phases(
    client: &reqwest::Client,
    profile: &LoadedProfile,
    upstream: &Upstream,
    gateway_url: &str,
    trial: &GatewayTrial,
    clock: &mut OwnTime,
) -> Ends {
    let mut ends = Ends::default();
    let asked = match build_request(profile, upstream, gateway_url, trial) {
        Ok(asked) => asked,
        Err(cell) => {
            ends.cell = Some(cell);
            return ends;
        }
    };
    let request = &asked.encoded.request;
    ends.client_request = json!({"path": request.path_and_query(), "body": request.body});
    let slot = Slot {
        upstream,
        prompt: trial.prompt(),
        scenario: &trial.case.file.simulate,
    };
    let sent = exchange(
        client,
        &asked.endpoint,
        asked.inbound,
        &asked.req,
        request,
        &slot,
    )
    .await;
    clock.waited(sent.waited);
    let (response, outcome) = match sent.answer {
        Ok((response, outcome, timing)) => {
            let timing = RequestTiming::of(timing, asked.req.stream, &sent.seen);
            ends.requests.push(timing);
            (response, outcome)
        }
        Err(e) => {
            ends.cell = Some(Cell::Broken(e));
            return ends;
        }
    };
    ends.downstream_status = Some(response.status);
    ends.downstream_outcome = outcome.as_ref().ok().cloned();
    ends.downstream_body = response.body.clone();
    let Some(ex) = sent.seen.last() else {
        match judge::unsent(&asked, &response, &outcome) {
            Ok(findings) => ends.findings = findings,
            Err(cell) => ends.cell = Some(cell),
        }
        return ends;
    };
    let (request, answer) = ex.record();
    ends.upstream_request = Some(request);
    ends.upstream_answer = Some(answer);
    let target = judge::target_of_path(&ex.request.path, asked.target);
    let mut findings = judge::upstream(&asked, ex, target);
    findings.extend(judge::downstream(&asked, ex, target, &response, &outcome));
    if let Some(first) = judge::continues(&asked, &response, &outcome) {
        let rounds = rounds(client, &asked, trial, &slot, first, clock).await;
        findings.extend(rounds.0);
        ends.requests.extend(rounds.1);
    }
    ends.findings = findings;
    ends
}

/// Phase 1: the client's request in the route's inbound format, with the profile's and the
/// route's headers; a request the inbound encoder refuses is not applicable.
fn build_request(
    profile: &LoadedProfile,
    upstream: &Upstream,
    gateway_url: &str,
    trial: &GatewayTrial,
) -> Result<Asked, Cell> {
    let inbound = trial.route.inbound;
    let (base, req) = trial.first_request(inbound);
    let encoded = crate::providers::encode(inbound, &req)
        .map_err(|e| Cell::NotApplicable(format!("the {} encoder refuses: {e}", inbound.slug())))?;
    let mut headers: Vec<(String, String)> = profile.profile.headers.clone().into_iter().collect();
    headers.extend(trial.route.headers.iter().map(|(k, v)| {
        (
            k.clone(),
            profile::fill(v, &[("upstream", upstream.base_url().as_str())]),
        )
    }));
    let invalid = judge::client_fault(&base, &encoded.request.body);
    Ok(Asked {
        base,
        inbound,
        target: trial.route.upstream,
        req,
        encoded,
        endpoint: Endpoint {
            base_url: gateway_url.to_string(),
            key: None,
            extra_headers: headers,
        },
        invalid,
        neutral: false,
    })
}

/// Phase 5: the follow-up rounds, the tool results sent back through the gateway, each judged
/// upstream (a result must answer a call of the conversation the gateway sent) and downstream.
async fn rounds(
    client: &reqwest::Client,
    asked: &Asked,
    trial: &GatewayTrial,
    slot: &Slot<'_>,
    first: &Outcome,
    clock: &mut OwnTime,
) -> (Vec<Finding>, Vec<RequestTiming>) {
    let (mut findings, mut timings) = (Vec::new(), Vec::new());
    let mut prev = asked.req.clone();
    let mut last = first.clone();
    for (n, round) in trial.case.file.rounds.iter().enumerate() {
        if last.tool_calls.is_empty() {
            break;
        }
        let next = crate::run::follow_up(prev, &last, round, &trial.choice);
        let Ok(enc) = crate::providers::encode(asked.inbound, &next) else {
            break;
        };
        let sent = exchange(
            client,
            &asked.endpoint,
            asked.inbound,
            &next,
            &enc.request,
            slot,
        )
        .await;
        clock.waited(sent.waited);
        let got = sent.answer.map(|(response, outcome, timing)| {
            timings.push(RequestTiming::of(timing, next.stream, &sent.seen));
            (response, outcome)
        });
        let (judged, go_on) = judge::round(n, asked, &next, &enc.request, sent.seen.last(), &got);
        findings.extend(judged);
        last = match got {
            Ok((_, Ok(o))) if go_on && o.error.is_none() => o,
            _ => break,
        };
        prev = next;
    }
    (findings, timings)
}

/// Runs every trial: trials sharing a prompt one after another (the upstream attributes
/// requests by prompt), prompts in parallel up to `concurrency`.
pub async fn run_all(
    profile: Arc<LoadedProfile>,
    upstream: &Arc<Upstream>,
    gateway_url: &str,
    trials: Vec<GatewayTrial>,
    concurrency: usize,
) -> Vec<TrialResult> {
    let client = crate::run::client_per_request(Duration::from_secs(60));
    let mut groups: BTreeMap<String, Vec<(usize, GatewayTrial)>> = BTreeMap::new();
    for (i, t) in trials.into_iter().enumerate() {
        groups.entry(t.prompt()).or_default().push((i, t));
    }
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (_, group) in groups {
        let (client, upstream, sem, url, profile) = (
            client.clone(),
            Arc::clone(upstream),
            Arc::clone(&sem),
            gateway_url.to_string(),
            Arc::clone(&profile),
        );
        set.spawn(async move {
            let mut out = Vec::new();
            for (i, t) in group {
                let Ok(_permit) = sem.acquire().await else {
                    break;
                };
                let mut r = run_one(&client, &profile, &upstream, &url, &t).await;
                apply_known(&profile, &mut r);
                out.push((i, r));
            }
            out
        });
    }
    in_order(set).await
}

/// The results of every task, back in the order of their trials (each numbered by its place),
/// with stream and buffered trials compared: the end of gateway and client runs.
pub(crate) async fn in_order(
    mut set: tokio::task::JoinSet<Vec<(usize, TrialResult)>>,
) -> Vec<TrialResult> {
    let mut all = Vec::new();
    while let Some(done) = set.join_next().await {
        if let Ok(v) = done {
            all.extend(v);
        }
    }
    all.sort_by_key(|(i, _)| *i);
    let mut results: Vec<TrialResult> = all.into_iter().map(|(_, r)| r).collect();
    cross_mode(&mut results);
    results
}
