//! The one thing that differs between a gateway and a library: how a trial reaches the system
//! under test and how its answer comes back. The engine's phases (`phases.rs`) call these hooks
//! in order; `gateway::Http` implements them over HTTP, `client::Driven` over a driver.

use std::future::Future;

use serde_json::Value;

use super::finding::Finding;
use super::judge::{CallerReply, CallerRequest, ReadExchange};
use super::result::{Cell, RequestTiming};
use super::trial::RoutedTrial;
use super::upstream::{Exchange, Upstream};
use crate::case::CaseOption;
use crate::http::HttpRequest;
use crate::model::{ChatRequest, Outcome};
use crate::run::{Watch, WatchedStep};
use crate::scenario::Scenario;

/// What the way says it cannot carry of a trial, before anything was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotExpressible {
    /// What the way said, as the cell shows it.
    pub detail: String,
    /// The case options it cannot carry, when every field it named is one; empty otherwise
    /// (then no trial without them would answer it: the trial is not applicable).
    pub options: Vec<CaseOption>,
}

/// The recording upstream's claim on one trial's prompt: what the system sent upstream while
/// the trial's request was in flight.
pub struct PromptWatch<'a> {
    pub upstream: &'a Upstream,
    pub prompt: String,
    pub scenario: &'a Scenario,
    /// The trial's tool results: they claim a request that carries no prompt (a Responses
    /// round continued by `previous_response_id` and sent on without its context).
    pub results: Vec<String>,
}

impl Watch for PromptWatch<'_> {
    type Seen = Vec<Exchange>;
    fn open(&self) {
        self.upstream
            .open_with(&self.prompt, self.scenario, &self.results);
    }
    fn close(&self) -> Vec<Exchange> {
        self.upstream.close(&self.prompt)
    }
}

/// What a trial keeps of the answer its caller got, for its record and reproducer.
#[derive(Default)]
pub struct Kept {
    pub status: Option<u16>,
    pub outcome: Option<Outcome>,
    pub body: Vec<u8>,
    pub timing: Option<RequestTiming>,
}

/// A follow-up round's answer: what the caller got (as an HTTP answer, for the round's
/// judgement), the outcome the rounds go on from, and the request's timing.
pub struct RoundAnswer {
    pub got: CallerReply,
    pub next: Option<Outcome>,
    pub timing: Option<RequestTiming>,
}

/// What every hook of one trial shares, built once by the phases after the caller's request
/// (pingora's per-request context): the trial, the caller's request in the engine's form and in
/// the way's own, and the recording upstream's watch on the trial's prompt.
pub struct TrialCtx<'a, R> {
    pub trial: &'a RoutedTrial,
    pub asked: &'a CallerRequest,
    pub request: &'a R,
    pub watch: &'a PromptWatch<'a>,
}

/// A follow-up round as the phases built it: `next` (encoded as `encoded` in the caller's
/// format) sent after `prev`.
pub struct RoundStep<'a> {
    pub prev: &'a ChatRequest,
    pub next: &'a ChatRequest,
    pub encoded: &'a HttpRequest,
}

/// How trials reach a system under test, in the order the phases call it. Hooks a way does not
/// need have default bodies.
pub trait Way: Send + Sync + 'static {
    /// A worker's own state (a driver process; nothing for HTTP). Workers run in parallel, each
    /// its trials one after another.
    type Worker: Send;
    /// The way's own form of the caller's request (the endpoint and headers; the driver trial).
    type Request: Send + Sync;
    /// What the caller got for the first request.
    type Delivered: Send;

    fn worker(&self, n: usize) -> Self::Worker;

    /// Phase 1: the caller's request; a trial the caller cannot express is `NotApplicable`.
    fn ask(
        &self,
        trial: &RoutedTrial,
        upstream: &Upstream,
    ) -> Result<(CallerRequest, Self::Request), Cell>;

    /// The caller's request as the trial's record shows it.
    fn shown(&self, ctx: &TrialCtx<'_, Self::Request>) -> Value;

    /// Phase 2: the first request, sent while the context's watch records what went upstream.
    fn send(
        &self,
        worker: &mut Self::Worker,
        ctx: &TrialCtx<'_, Self::Request>,
    ) -> impl Future<Output = WatchedStep<Vec<Exchange>, Result<Self::Delivered, String>>> + Send;

    /// The answer says the caller's side cannot express the trial (nothing was sent).
    fn not_expressible(&self, _answer: &Self::Delivered) -> Option<NotExpressible> {
        None
    }

    /// What the record keeps of the answer.
    fn keep(
        &self,
        ctx: &TrialCtx<'_, Self::Request>,
        answer: &Self::Delivered,
        seen: &[Exchange],
    ) -> Kept;

    /// Nothing went upstream: the findings, or the cell the trial ends with.
    fn unsent(
        &self,
        ctx: &TrialCtx<'_, Self::Request>,
        answer: &Self::Delivered,
    ) -> Result<Vec<Finding>, Cell>;

    /// Phase 4: what the caller got, against what upstream answered in `read`: the findings,
    /// and the outcome the rounds go on from when the first answer lets them.
    fn downstream(
        &self,
        ctx: &TrialCtx<'_, Self::Request>,
        read: &ReadExchange<'_>,
        answer: &Self::Delivered,
    ) -> (Vec<Finding>, Option<Outcome>);

    /// Phase 5: one follow-up round, sent while the context's watch records what went upstream.
    fn round(
        &self,
        worker: &mut Self::Worker,
        ctx: &TrialCtx<'_, Self::Request>,
        step: RoundStep<'_>,
    ) -> impl Future<Output = WatchedStep<Vec<Exchange>, RoundAnswer>> + Send;

    /// After the rounds: what only the way saw of the trial (the record of the MCP server a
    /// library took its tools from).
    fn settle(
        &self,
        _worker: &mut Self::Worker,
        _ctx: &TrialCtx<'_, Self::Request>,
    ) -> Vec<Finding> {
        Vec::new()
    }

    /// The system is the model (a model server): its answers, the first and each round's, are
    /// also judged against the contract the caller set (`judge::produced`).
    fn judges_the_model(&self) -> bool {
        false
    }

    /// The trial is over (a driver reads its next trial).
    fn end_trial(&self, _worker: &mut Self::Worker) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// The worker is done, or a trial on it panicked: release what it holds.
    fn end_worker(&self, worker: Self::Worker) -> impl Future<Output = ()> + Send {
        drop(worker);
        async {}
    }
}
