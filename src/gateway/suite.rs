//! Gateway trials (case × route × choice × mode) and running them: the client request in the
//! route's inbound format, the recorded upstream exchange, the checks, the cell.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::check::{Finding, FindingKind, Side};
use super::profile::{LoadedProfile, Route};
use super::upstream::Exchange;
use crate::case::{Case, ChoiceSpec, Mode};
use crate::model::{Outcome, Severity};

/// One gateway trial.
#[derive(Clone, Debug)]
pub struct GatewayTrial {
    pub case: Arc<Case>,
    pub route: Route,
    pub choice: ChoiceSpec,
    pub mode: Mode,
}

impl GatewayTrial {
    /// `case::route::choice::mode`: what known-failure patterns match.
    pub fn key(&self) -> String {
        format!(
            "{}::{}::{}::{}",
            self.case.name,
            self.route.name(),
            self.choice.slug(),
            self.mode.slug()
        )
    }

    /// `gateway::NAME::case::route::choice::mode`.
    pub fn name(&self, gateway: &str) -> String {
        format!("gateway::{gateway}::{}", self.key())
    }

    /// `case::choice::mode`: the matrix row.
    pub fn row(&self) -> String {
        format!(
            "{}::{}::{}",
            self.case.name,
            self.choice.slug(),
            self.mode.slug()
        )
    }

    /// The client's side as a direct trial of `provider` (its expectations are the client's)
    /// and its first request, with the route's model.
    pub(crate) fn first_request(
        &self,
        provider: crate::model::Provider,
    ) -> (crate::case::Trial, crate::model::ChatRequest) {
        let base = crate::case::Trial {
            case: Arc::clone(&self.case),
            provider,
            choice: self.choice.clone(),
            mode: self.mode,
        };
        let mut req = base.first_request();
        req.model = self.route.model.clone();
        (base, req)
    }

    pub(crate) fn prompt(&self) -> String {
        self.case
            .file
            .messages
            .iter()
            .rev()
            .map(|m| m.content.clone())
            .next()
            .unwrap_or_default()
    }
}

/// Each case of a discovery once, in discovery order (a case expands into many trials).
pub fn cases_of(discovery: &crate::case::Discovery) -> Vec<Arc<Case>> {
    let mut cases: Vec<Arc<Case>> = Vec::new();
    for t in &discovery.trials {
        if !cases.iter().any(|c| Arc::ptr_eq(c, &t.case)) {
            cases.push(Arc::clone(&t.case));
        }
    }
    cases
}

/// Every applicable trial: cases that list both the route's inbound and upstream providers.
pub fn trials(cases: &[Arc<Case>], routes: &[Route], filter: Option<&str>) -> Vec<GatewayTrial> {
    let mut out = Vec::new();
    for case in cases {
        for route in routes {
            if !case.providers.contains(&route.inbound) || !case.providers.contains(&route.upstream)
            {
                continue;
            }
            for choice in &case.choices {
                for mode in &case.modes {
                    let t = GatewayTrial {
                        case: Arc::clone(case),
                        route: route.clone(),
                        choice: choice.clone(),
                        mode: *mode,
                    };
                    if filter.is_none_or(|f| t.key().contains(f)) {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

/// A matrix cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "kebab-case")]
pub enum Cell {
    Pass,
    Fail(String),
    /// A known failure (its reason).
    Known(String),
    /// The gateway refused cleanly with a 4xx naming the reason (nothing sent upstream).
    Unsupported(String),
    /// The client side cannot express this trial in the inbound format (the encoder refused).
    NotApplicable(String),
    Broken(String),
}

impl Cell {
    /// Whether this result is expected (exit status 0).
    pub fn expected(&self) -> bool {
        matches!(
            self,
            Cell::Pass | Cell::Known(_) | Cell::Unsupported(_) | Cell::NotApplicable(_)
        )
    }
}

/// Everything one trial produced: the snapshot's content.
#[derive(Clone, Debug, Serialize)]
pub struct TrialResult {
    pub name: String,
    #[serde(skip)]
    pub key: String,
    #[serde(skip)]
    pub row: String,
    #[serde(skip)]
    pub route: String,
    pub client_request: Value,
    pub upstream_request: Option<Value>,
    pub upstream_answer: Option<String>,
    pub downstream_status: Option<u16>,
    pub downstream_outcome: Option<Outcome>,
    pub findings: Vec<Finding>,
    pub cell: Cell,
    /// The root cause of a failure (`side`, kind, normalized finding), as its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(skip)]
    pub cause_key: Option<super::cause::CauseKey>,
    /// The case's tool names, abstracted out of root causes.
    #[serde(skip)]
    pub tools: Vec<String>,
    /// tooltape's own time for this trial (encode, decode, checks), excluding the wait.
    #[serde(skip)]
    pub own_time: Duration,
    #[serde(skip)]
    pub downstream_body: Vec<u8>,
    /// One entry per request the client sent through the gateway (first exchange, then rounds).
    #[serde(skip)]
    pub requests: Vec<RequestTiming>,
}

/// One client request's times, paired with what the upstream held for that same request: the
/// exchanges recorded while it was the only request in flight with its trial's prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestTiming {
    /// Client: send → answer complete.
    pub client: Duration,
    /// Sum of the upstream's hold times over this request's exchanges; `None` when nothing was
    /// sent upstream or an exchange's time is missing.
    pub upstream: Option<Duration>,
    /// Client: send → first tool-call delta decoded (streamed answers only).
    pub first_call: Option<Duration>,
    pub streamed: bool,
    /// Exchanges the gateway made upstream for this request (retries count).
    pub exchanges: usize,
}

impl RequestTiming {
    pub(super) fn of(
        timing: crate::run::Timing,
        streamed: bool,
        exchanges: &[Exchange],
    ) -> RequestTiming {
        let upstream = if exchanges.is_empty() {
            None
        } else {
            exchanges
                .iter()
                .map(Exchange::held)
                .sum::<Option<Duration>>()
        };
        RequestTiming {
            client: timing.complete,
            upstream,
            first_call: timing.first_call,
            streamed,
            exchanges: exchanges.len(),
        }
    }

    /// The gateway's added time in milliseconds: client time minus upstream time (negative only
    /// if the gateway answered before upstream finished, e.g. a cached answer).
    pub fn added_ms(&self) -> Option<f64> {
        self.upstream
            .map(|u| (self.client.as_secs_f64() - u.as_secs_f64()) * 1000.0)
    }
}

/// Applies the profile's known failures: a failing trial an entry covers (by pattern, and by
/// root cause when the entry names one) is `Known`; a passing one an entry without a cause names
/// fails until the entry is removed, unless the entry is `flaky` (the gateway fails it only
/// sometimes).
pub(super) fn apply_known(profile: &LoadedProfile, r: &mut TrialResult) {
    let known = profile
        .known_failure(&r.key, r.cause.as_deref())
        .map(|k| (&k.get_ref().failure, profile.locate(k.span())));
    apply_known_failure(known, r);
}

/// The known-failure rules for the entry `known` (with its `path:line:col`) that matches `r`.
pub(crate) fn apply_known_failure(
    known: Option<(&crate::case::KnownFailure, String)>,
    r: &mut TrialResult,
) {
    let Some((k, at)) = known else {
        return;
    };
    match &r.cell {
        Cell::Fail(_) | Cell::Broken(_) => r.cell = Cell::Known(k.reason.clone()),
        Cell::Pass if !k.flaky => {
            r.cell = Cell::Fail(format!("{at}: known failure now passes: remove it"));
        }
        _ => {}
    }
}

/// The profile's known failures that name a root cause no trial of theirs failed with, among
/// entries whose pattern matches a trial of this run (a filtered run judges only its own):
/// `path:line:col: what is wrong` for each, with what to do.
pub fn stale_causes(profile: &LoadedProfile, results: &[TrialResult]) -> Vec<String> {
    let mut out = Vec::new();
    for k in &profile.profile.known_failure {
        let entry = k.get_ref();
        let Some(cause) = &entry.cause else {
            continue;
        };
        let covers = |r: &&TrialResult| crate::case::pattern_matches(&entry.failure.trials, &r.key);
        let mut ran = results.iter().filter(covers).peekable();
        if ran.peek().is_none() {
            continue;
        }
        let seen = results
            .iter()
            .filter(covers)
            .any(|r| matches!(r.cell, Cell::Known(_)) && r.cause.as_deref() == Some(cause));
        if !seen {
            out.push(format!(
                "{}: known failure for root cause `{cause}` (trials `{}`): no trial failed with it; the bug is fixed or its finding changed\n  run `tooltape gateway {} --findings` and remove the entry or update its cause",
                profile.locate(k.span()),
                entry.failure.trials,
                profile.name
            ));
        }
    }
    out
}

/// Stream and buffered agree: the stream trial of a (case, route, choice) makes the same calls.
pub(super) fn cross_mode(results: &mut [TrialResult]) {
    let mut buffered: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in results.iter() {
        if let (Some(stem), Some(o)) = (r.key.strip_suffix("::buffered"), &r.downstream_outcome)
            && matches!(r.cell, Cell::Pass)
        {
            buffered.insert(
                stem.to_string(),
                o.tool_calls.iter().map(|c| c.name.clone()).collect(),
            );
        }
    }
    for r in results.iter_mut() {
        let Some(stem) = r.key.strip_suffix("::stream") else {
            continue;
        };
        let (Some(b), Some(o)) = (buffered.get(stem), &r.downstream_outcome) else {
            continue;
        };
        let s: Vec<String> = o.tool_calls.iter().map(|c| c.name.clone()).collect();
        if &s != b && matches!(r.cell, Cell::Pass) {
            let message = format!(
                "stream calls [{}] differ from buffered [{}]",
                s.join(", "),
                b.join(", ")
            );
            r.findings.push(Finding::new(
                FindingKind::Answer,
                Severity::Behaviour,
                Side::Downstream,
                message.clone(),
            ));
            r.cell = Cell::Fail(format!("downstream: {message}"));
            let case = r.key.split("::").next().unwrap_or_default().to_string();
            r.cause_key =
                super::cause::key_of(super::cause::Ended::Failed, &r.findings, &r.tools, &case);
            r.cause = r.cause_key.as_ref().map(super::cause::CauseKey::id);
        }
    }
}
