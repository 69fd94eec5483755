//! What a trial of the engine produced: its cell (its status in the trial table), its findings, what went
//! each way, its root cause, and each request's timing.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cause::Ended;
use super::finding::Finding;
use super::trial::{RoutedTrialId, SystemKind};
use super::upstream::Exchange;
use crate::model::{Outcome, Severity};

/// A trial's status: its cell in the trial table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "detail", rename_all = "kebab-case")]
pub enum Cell {
    Pass,
    Fail(String),
    /// A known failure (its reason). `known` in documents written before the one vocabulary.
    #[serde(alias = "known")]
    KnownFailure(String),
    /// The system declined cleanly with a 4xx naming the reason (nothing sent upstream).
    /// `unsupported` in documents written before the one vocabulary.
    #[serde(alias = "unsupported")]
    Declined(String),
    /// The client side cannot express this trial in the inbound format (the encoder refused).
    NotApplicable(String),
    Broken(String),
}

impl Cell {
    /// The cell of a trial's findings, sorted here most severe first: the first non-cosmetic
    /// one fails.
    pub(crate) fn of(findings: &mut [Finding]) -> Cell {
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        match findings.iter().find(|f| f.severity != Severity::Cosmetic) {
            Some(first) => Cell::Fail(format!("{}: {}", first.side, first.message)),
            None => Cell::Pass,
        }
    }

    /// How a trial of a system of `kind` with this cell ended, as far as its cause goes.
    pub(crate) fn ended(&self, kind: SystemKind) -> Ended<'_> {
        match self {
            Cell::Fail(_) => Ended::Failed,
            Cell::Broken(m) => Ended::Broken(kind, m),
            _ => Ended::Other,
        }
    }

    /// Whether this result is expected (exit status 0).
    pub fn expected(&self) -> bool {
        matches!(
            self,
            Cell::Pass | Cell::KnownFailure(_) | Cell::Declined(_) | Cell::NotApplicable(_)
        )
    }
}

/// Everything one trial produced: the snapshot's content.
#[derive(Clone, Debug, Serialize)]
pub struct TrialResult {
    /// `KIND::NAME::case::route::choice::mode` (the document's name of the trial).
    pub name: String,
    /// Case, route, choice and mode: the key, table row and snapshot name are made from it.
    #[serde(skip)]
    pub id: RoutedTrialId,
    pub client_request: Value,
    pub upstream_request: Option<Value>,
    pub upstream_answer: Option<String>,
    pub downstream_status: Option<u16>,
    pub downstream_outcome: Option<Outcome>,
    pub findings: Vec<Finding>,
    pub cell: Cell,
    /// Options incidental to the case that the way could not carry: the trial ran without
    /// them, each with the way's words (`docs/case-format.md`, `subject`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
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

impl TrialResult {
    /// A result with its identity and cell, and nothing recorded yet.
    pub(crate) fn unjudged(name: String, id: RoutedTrialId, cell: Cell) -> TrialResult {
        TrialResult {
            name,
            id,
            client_request: Value::Null,
            upstream_request: None,
            upstream_answer: None,
            downstream_status: None,
            downstream_outcome: None,
            findings: Vec::new(),
            cell,
            left_out: Vec::new(),
            cause: None,
            cause_key: None,
            tools: Vec::new(),
            own_time: Duration::ZERO,
            downstream_body: Vec::new(),
            requests: Vec::new(),
        }
    }
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
    pub(crate) fn of(
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
