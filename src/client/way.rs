//! The way through a library: the driver's call through the library (a long-lived driver
//! process per worker, started on first use and restarted after a failure), what the library
//! handed its caller judged by `check`, each round's tool results sent back through it.

use std::time::Duration;

use serde_json::Value;

use super::driver::{Driver, Spec};
use super::profile::LoadedClient;
use super::protocol::{
    DriverMcp, DriverMessage, DriverResult, DriverRoute, DriverTrial, Next, choice_value,
    driver_tools,
};
use crate::case::CaseOption;
use crate::engine::{
    CallerReply, CallerRequest, Cell, Exchange, Finding, FindingKind, Kept, McpCall,
    NotExpressible, ReadExchange, Reading, RoundAnswer, RoundStep, RoutedTrial, Side, TrialCtx,
    Upstream, Way, judge,
};
use crate::http::HttpResponse;
use crate::mcp::{Answer, McpServer};
use crate::model::{ChatRequest, Outcome, Provider, Severity};
use crate::run::{WatchedStep, watched};

/// A thinking trial a route's OpenAI model cannot run: the model does not reason, so OpenAI
/// answers 400 to the reasoning parameter a library sends for thinking (and answers no reasoning
/// state to carry), and the trial would prove nothing about thinking. Not applicable, naming the
/// route's model (the rule: [`crate::providers::openai_reasons`]); a profile that wants the
/// trial names a reasoning model for the route. `models`: the first round's API and model, then
/// each provider the rounds move to with its route's model.
pub(super) fn thinking_without_reasoning(
    thinking: Option<u32>,
    models: &[(Provider, &str)],
) -> Option<Cell> {
    thinking?;
    let (api, model) = models.iter().find(|(p, m)| {
        matches!(p, Provider::OpenaiChat | Provider::OpenaiResponses)
            && !crate::providers::openai_reasons(m)
    })?;
    Some(Cell::NotApplicable(format!(
        "thinking on, and the {} route's model `{model}` does not reason (OpenAI answers 400 to reasoning parameters on it)",
        api.slug()
    )))
}

/// The driver protocol's trial fields an `unsupported` entry may name, each with the case option
/// it carries when a trial can run without that option.
const TRIAL_FIELDS: [(&str, Option<CaseOption>); 13] = [
    ("parallel_tool_calls", Some(CaseOption::Parallel)),
    ("max_tokens", Some(CaseOption::MaxTokens)),
    ("tool_choice", None),
    ("strict", None),
    ("thinking", None),
    ("hosted", None),
    ("result_parts", None),
    ("continue_with", None),
    ("caller_tools", None),
    ("round_routes", None),
    ("eager_input_streaming", None),
    ("compaction", None),
    ("mcp", None),
];

/// The case option a driver's `unsupported` entry is about: the one trial field it names (the
/// field itself, or a library's refusal quoting it, e.g. any-llm's `'parallel_tool_calls' is not
/// supported for gemini`), when a trial can run without that field's option.
pub(super) fn option_named(entry: &str) -> Option<CaseOption> {
    let word = |w: &str| {
        entry.match_indices(w).any(|(i, _)| {
            let part = |c: char| c.is_ascii_alphanumeric() || c == '_';
            !entry[..i].ends_with(part) && !entry[i + w.len()..].starts_with(part)
        })
    };
    let named: Vec<Option<CaseOption>> = (TRIAL_FIELDS.iter())
        .filter(|(field, _)| word(field))
        .map(|(_, option)| *option)
        .collect();
    match named.as_slice() {
        [one] => *one,
        _ => None,
    }
}

/// Trials through a library's driver.
pub struct Driven {
    profile: std::sync::Arc<LoadedClient>,
    spec: Spec,
    timeout: Duration,
    /// The MCP server of the profile's MCP routes (none when it has none).
    mcp: Option<std::sync::Arc<McpServer>>,
}

impl Driven {
    pub(crate) fn new(
        profile: std::sync::Arc<LoadedClient>,
        spec: Spec,
        mcp: Option<std::sync::Arc<McpServer>>,
    ) -> Driven {
        Driven {
            timeout: Duration::from_secs(profile.profile.driver.timeout_secs.max(1)),
            profile,
            spec,
            mcp,
        }
    }

    /// An MCP route's endpoint for `trial`: `req`'s tools as the server lists them (a network
    /// `$ref` under the endpoint's own path, so the caller's request is what the server listed)
    /// and the case's results as its `tools/call`s answer them. Not applicable when a result has
    /// a part MCP has no content for.
    fn mcp_for(&self, trial: &RoutedTrial, req: &mut ChatRequest) -> Result<DriverMcp, Cell> {
        let Some(server) = &self.mcp else {
            return Err(Cell::Broken("no MCP server for the MCP route".into()));
        };
        let mut answers = Vec::new();
        for x in trial.case.file.rounds.iter().flat_map(|r| &r.results) {
            let (content, parts) = x.content.neutral();
            let tool = req.tools.iter().find(|t| &t.name == x.tool.get_ref());
            let result = crate::mcp::call_result(&content, &parts, x.is_error, tool);
            let Some(result) = result else {
                return Err(Cell::NotApplicable(
                    "a result of the case has a part MCP has no content for (an image by URL)"
                        .into(),
                ));
            };
            let tool = x.tool.get_ref().clone();
            answers.push(Answer { tool, result });
        }
        let opened = server.reserve();
        for t in &mut req.tools {
            t.parameters = crate::mcp::served_schema(&t.parameters, &opened.ref_base);
            if let Some(o) = &mut t.output_schema {
                *o = crate::mcp::served_schema(o, &opened.ref_base);
            }
        }
        Ok(DriverMcp {
            url: opened.url,
            key: opened.key,
            tools: req.tools.clone(),
            answers,
        })
    }
}

impl Driven {
    /// Where each round of a trial continued on another provider goes: the library's route to
    /// that provider (the trial's own when it comes back), with the model the engine gave it.
    fn round_routes(&self, trial: &RoutedTrial) -> Vec<Option<DriverRoute>> {
        let rounds = &trial.case.file.rounds;
        if rounds.iter().all(|r| r.provider.is_none()) {
            return Vec::new();
        }
        let own = self.profile.route(&trial.route.name());
        (rounds.iter())
            .map(|r| {
                let p = *r.provider.as_ref()?.get_ref();
                let route = (own.filter(|o| o.api == p)).or_else(|| {
                    self.profile
                        .profile
                        .routes
                        .iter()
                        .map(|r| r.get_ref())
                        .find(|r| r.api == p)
                })?;
                Some(DriverRoute {
                    api: p.slug().to_string(),
                    model: trial.model_for(p),
                    options: route.options.clone(),
                })
            })
            .collect()
    }
}

/// A worker's driver: started on first use, restarted after a failure.
pub struct DriverWorker {
    spec: Spec,
    timeout: Duration,
    driver: Option<Driver>,
    /// A trial is open on the driver: it answered, and waits for results or `done`.
    open: bool,
    /// The open trial's MCP endpoint, and the calls (tool, arguments) whose results the library
    /// sent back so far: each must have come from the server.
    mcp: Option<(u64, Vec<(String, Value)>)>,
}

impl DriverWorker {
    /// One protocol step: writes `doc`, reads the result.
    async fn step(&mut self, doc: &(impl serde::Serialize + Sync)) -> Result<DriverResult, String> {
        if self.driver.is_none() {
            self.driver = Some(Driver::spawn(&self.spec)?);
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
}

impl Way for Driven {
    type Worker = DriverWorker;
    type Request = DriverTrial;
    type Delivered = DriverResult;

    fn worker(&self, n: usize) -> DriverWorker {
        let mut spec = self.spec.clone();
        spec.log = spec.log.with_extension(format!("{n}.log"));
        DriverWorker {
            spec,
            timeout: self.timeout,
            driver: None,
            open: false,
            mcp: None,
        }
    }

    /// Phase 1: the caller's request; a trial outside the protocol or its API is not
    /// applicable.
    fn ask(
        &self,
        trial: &RoutedTrial,
        upstream: &Upstream,
    ) -> Result<(CallerRequest, DriverTrial), Cell> {
        let api = trial.route.upstream;
        let (base, mut req) = trial.first_request(api);
        let first = (api, trial.route.model.as_str());
        let rounds = trial.round_models.iter().map(|(p, m)| (*p, m.as_str()));
        let models: Vec<_> = std::iter::once(first).chain(rounds).collect();
        if let Some(cell) = thinking_without_reasoning(req.thinking, &models) {
            return Err(cell);
        }
        let options = (self.profile)
            .route(&trial.route.name())
            .map(|r| r.options.clone())
            .unwrap_or_default();
        let mcp = match trial.route.mcp {
            true => Some(self.mcp_for(trial, &mut req)?),
            false => None,
        };
        let mut driver_trial = DriverTrial::of(
            trial.name(crate::engine::SystemKind::Client, &self.profile.name),
            api,
            upstream.base_url(),
            options,
            &req,
        );
        // The caller hands back tool results as parts (the library must send them as such).
        driver_trial.result_parts = (trial.case.file.rounds.iter())
            .flat_map(|r| &r.results)
            .any(|r| matches!(r.content, crate::case::ResultContent::Parts(_)));
        if crate::run::continues_by_id(api, trial.case.file.continue_with) {
            driver_trial.continue_with = Some("previous_response_id".into());
        }
        (driver_trial.caller_tools)
            .clone_from(base.case.file.caller_tools.get(&api).unwrap_or(&Vec::new()));
        driver_trial.round_routes = self.round_routes(trial);
        driver_trial.compaction = trial.case.file.simulate.compaction;
        driver_trial.mcp = mcp;
        // The caller asks for strict tools or not (a library has no "strict where it keeps the
        // meaning" policy): the request a faithful library sends is encoded with that choice.
        req.strict = driver_trial.request().strict;
        let asked = CallerRequest::new(base, (api, api), req, Reading::ByMeaning)?;
        Ok((asked, driver_trial))
    }

    fn shown(&self, ctx: &TrialCtx<'_, DriverTrial>) -> Value {
        serde_json::to_value(ctx.request).unwrap_or(Value::Null)
    }

    async fn send(
        &self,
        worker: &mut DriverWorker,
        ctx: &TrialCtx<'_, DriverTrial>,
    ) -> WatchedStep<Vec<Exchange>, Result<DriverResult, String>> {
        if let (Some(m), Some(server)) = (&ctx.request.mcp, &self.mcp) {
            server.open(m.key, &m.tools, &m.answers);
            worker.mcp = Some((m.key, Vec::new()));
        }
        watched(ctx.watch, worker.step(ctx.request)).await
    }

    fn not_expressible(&self, got: &DriverResult) -> Option<NotExpressible> {
        (!got.unsupported.is_empty()).then(|| {
            let options: Option<Vec<CaseOption>> =
                got.unsupported.iter().map(|e| option_named(e)).collect();
            NotExpressible {
                detail: format!(
                    "not expressible in {}: {}",
                    self.profile.name,
                    got.unsupported.join(", ")
                ),
                options: options.unwrap_or_default(),
            }
        })
    }

    fn keep(&self, _: &TrialCtx<'_, DriverTrial>, got: &DriverResult, _: &[Exchange]) -> Kept {
        Kept {
            status: None,
            outcome: Some(got.outcome()),
            body: serde_json::to_vec(got).unwrap_or_default(),
            timing: None,
        }
    }

    /// Nothing went upstream: a library that refuses with a client error before sending
    /// anything refused cleanly (not supported, as a gateway's 4xx); otherwise right only when
    /// the caller's request is invalid in its own API and the library said so.
    fn unsent(
        &self,
        ctx: &TrialCtx<'_, DriverTrial>,
        got: &DriverResult,
    ) -> Result<Vec<Finding>, Cell> {
        let message = match (&got.error, ctx.asked.invalid) {
            (Some(e), false) if e.status.is_some_and(|s| (400..500).contains(&s)) => {
                let message: String = e.message.chars().take(160).collect();
                return Err(Cell::Declined(format!("{}: {message}", e.kind)));
            }
            (Some(_), true) => return Ok(Vec::new()),
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
        Ok(vec![Finding::new(
            FindingKind::Request,
            Severity::Breaking,
            Side::Upstream,
            message,
        )])
    }

    fn downstream(
        &self,
        ctx: &TrialCtx<'_, DriverTrial>,
        read: &ReadExchange<'_>,
        got: &DriverResult,
    ) -> (Vec<Finding>, Option<Outcome>) {
        let findings = judge::handed(ctx.asked, read, &got.handed());
        let valid = !ctx.asked.invalid;
        let continues =
            (got.error.is_none() && read.ex.status < 400 && valid).then(|| got.outcome());
        (findings, continues)
    }

    async fn round(
        &self,
        worker: &mut DriverWorker,
        ctx: &TrialCtx<'_, DriverTrial>,
        step: RoundStep<'_>,
    ) -> WatchedStep<Vec<Exchange>, RoundAnswer> {
        let (prev, next) = (step.prev, step.next);
        let mut results: Vec<DriverMessage> = next.messages[prev.messages.len() + 1..]
            .iter()
            .map(DriverMessage::of)
            .collect();
        if let Some((_, answered)) = &mut worker.mcp {
            answered.extend(answered_calls(&next.messages[prev.messages.len()..]));
            // What the server answers is the library's to get: the line names the calls only.
            for r in &mut results {
                (r.content, r.is_error) = (None, false);
                r.parts.clear();
            }
        }
        let step = Next::Results {
            results,
            tool_choice: next.tool_choice.as_ref().map(choice_value),
            tools: (next.tools != prev.tools).then(|| driver_tools(ctx.asked.inbound, next)),
        };
        let sent = watched(ctx.watch, worker.step(&step)).await;
        let got: CallerReply = sent.answer.as_ref().map_err(Clone::clone).map(|g| {
            // An error without an HTTP status was raised by the library itself: a refusal
            // before sending when nothing went upstream, else a failure of its own.
            let local = if sent.seen.is_empty() { 400 } else { 500 };
            let status = g.error.as_ref().map_or(200, |e| e.status.unwrap_or(local));
            let body = (g.error.as_ref())
                .map(|e| e.message.clone().into_bytes())
                .unwrap_or_default();
            let response = HttpResponse {
                status,
                headers: Default::default(),
                body,
            };
            (response, Ok(g.outcome()))
        });
        let next = match &sent.answer {
            Ok(g) if g.error.is_none() => Some(g.outcome()),
            _ => None,
        };
        WatchedStep {
            answer: RoundAnswer {
                got,
                next,
                timing: None,
            },
            seen: sent.seen,
            waited: sent.waited,
        }
    }

    /// The MCP server's record of the trial, against the calls whose results the library sent.
    fn settle(&self, worker: &mut DriverWorker, ctx: &TrialCtx<'_, DriverTrial>) -> Vec<Finding> {
        let (Some((key, answered)), Some(server)) = (&worker.mcp, &self.mcp) else {
            return Vec::new();
        };
        let seen = server.seen(*key);
        let sent_tools = !ctx.asked.req.tools.is_empty();
        let calls: Vec<McpCall<'_>> = (answered.iter())
            .map(|(tool, arguments)| McpCall { tool, arguments })
            .collect();
        crate::engine::mcp_kept(&seen, sent_tools, &calls)
    }

    /// Ends a trial: the driver reads its next trial.
    async fn end_trial(&self, worker: &mut DriverWorker) {
        if let (Some((key, _)), Some(server)) = (worker.mcp.take(), &self.mcp) {
            server.close(key);
        }
        if !std::mem::take(&mut worker.open) {
            return;
        }
        if let Some(d) = worker.driver.as_mut()
            && d.send(&Next::Done { done: true }).await.is_err()
            && let Some(mut d) = worker.driver.take()
        {
            d.kill();
        }
    }

    async fn end_worker(&self, mut worker: DriverWorker) {
        if let Some(d) = worker.driver.take() {
            d.finish().await;
        }
    }
}

/// The calls a round's results answer, `(tool, arguments)`: `turn` is the assistant message with
/// the calls, then the round's tool results.
fn answered_calls(turn: &[crate::model::Message]) -> Vec<(String, Value)> {
    use crate::model::Message;
    let Some(Message::Assistant { tool_calls, .. }) = turn.first() else {
        return Vec::new();
    };
    (turn[1..].iter())
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => tool_calls.iter().find(|c| &c.id == call_id),
            _ => None,
        })
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}
