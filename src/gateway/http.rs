//! The way over HTTP, through a gateway (or straight to a model server: `direct`): the client's
//! request in the route's inbound format, with the profile's and the route's headers, decoded as
//! it streams; and a gateway profile as
//! the engine's system under test (install, start its process or use `--url`, the reproducer's
//! `curl`).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::direct::Direct;
use super::process;
use super::profile::{GatewayProfile, LoadedGateway};
use crate::engine::{
    CallerRequest, Cell, Exchange, Finding, Kept, ReadExchange, Reading, RequestTiming,
    RoundAnswer, RoundStep, Route, RoutedTrial, Started, System, SystemKind, TrialCtx, TrialResult,
    Upstream, Way, judge,
};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, Outcome};
use crate::run::{DecodedResponse, Endpoint, Timing, WatchedStep, exchange};
use crate::system::fill;

/// Trials over HTTP at `url` (its base path included): through a gateway, or to a model server
/// directly (`direct`).
pub struct Http {
    headers: Vec<(String, String)>,
    key: Option<String>,
    client: reqwest::Client,
    url: String,
    /// A model server: no upstream, its own exchange read, its answers judged against the
    /// caller's contract; the settings each route's bodies carry.
    direct: Option<Direct>,
}

impl Http {
    /// The way to the gateway at `base_url` (the profile's base path is added).
    pub fn new(profile: &LoadedGateway, base_url: &str) -> Http {
        let base_path = profile.profile.base_path.trim_end_matches('/');
        Http {
            url: format!("{}{base_path}", base_url.trim_end_matches('/')),
            client: crate::run::client_per_request(Duration::from_secs(60)),
            headers: profile.profile.headers.clone().into_iter().collect(),
            key: None,
            direct: None,
        }
    }

    /// The way to a model server at `base_url`: `key` its API key, `headers` every request's,
    /// `direct` each route's settings; a request that takes longer than `timeout` breaks.
    pub(crate) fn direct(
        base_url: &str,
        (key, headers): (Option<String>, Vec<(String, String)>),
        direct: Direct,
        timeout: Duration,
    ) -> Http {
        Http {
            url: base_url.trim_end_matches('/').to_string(),
            client: crate::run::client_per_request(timeout),
            headers,
            key,
            direct: Some(direct),
        }
    }

    /// Sends `request` (`neutral` in the caller's form): to a model server with its route's
    /// settings, the server's own exchange being what it saw; to a gateway while the trial's
    /// watch records what went upstream.
    async fn sent(
        &self,
        ctx: &TrialCtx<'_, Endpoint>,
        neutral: &ChatRequest,
        request: &HttpRequest,
    ) -> WatchedStep<Vec<Exchange>, DecodedResponse> {
        let on = (&self.client, ctx.request);
        let Some(direct) = &self.direct else {
            return exchange(on, ctx.asked.inbound, neutral, request, ctx.watch).await;
        };
        let mut request = request.clone();
        direct.settle(&ctx.trial.route.name(), &mut request.body);
        let key = ctx.trial.key();
        let mut endpoint = ctx.request.clone();
        if let Some(tape) = &direct.tape {
            match tape.before(&key, &request) {
                Ok(header) => endpoint.extra_headers.extend(header),
                Err(why) => {
                    let (seen, waited) = (Vec::new(), Duration::ZERO);
                    return WatchedStep {
                        answer: Err(why),
                        seen,
                        waited,
                    };
                }
            }
        }
        let on = (&self.client, &endpoint);
        let step = exchange(on, ctx.asked.inbound, neutral, &request, &()).await;
        let answered = step
            .answer
            .as_ref()
            .ok()
            .map(|(r, _, _)| (r, neutral.stream));
        if let Some(tape) = &direct.tape {
            tape.after(&key, &request, answered);
        }
        let seen = (answered
            .map(|(response, stream)| vec![Exchange::direct(&request, response, stream)]))
        .unwrap_or_default();
        WatchedStep {
            answer: step.answer,
            seen,
            waited: step.waited,
        }
    }
}

/// What the client got for a request: the response, its decoded outcome, and when it came.
type Answered = (HttpResponse, Result<Outcome, DecodeError>, Timing);

impl Way for Http {
    type Worker = ();
    type Request = Endpoint;
    type Delivered = Answered;

    fn worker(&self, _: usize) {}

    /// Phase 1: the client's request in the route's inbound format, with the profile's and the
    /// route's headers; a request the inbound encoder refuses is not applicable.
    fn ask(
        &self,
        trial: &RoutedTrial,
        upstream: &Upstream,
    ) -> Result<(CallerRequest, Endpoint), Cell> {
        let inbound = trial.route.inbound;
        let (base, req) = trial.first_request(inbound);
        let route = (inbound, trial.route.upstream);
        let mut asked = CallerRequest::new(base, route, req, Reading::AsSent)?;
        if let Some(direct) = &self.direct {
            direct.settle(&trial.route.name(), &mut asked.encoded.request.body);
        }
        let mut headers = self.headers.clone();
        headers.extend(trial.route.headers.iter().map(|(k, v)| {
            (
                k.clone(),
                fill(v, &[("upstream", upstream.base_url().as_str())]),
            )
        }));
        let endpoint = Endpoint {
            base_url: self.url.clone(),
            key: self.key.clone(),
            extra_headers: headers,
        };
        Ok((asked, endpoint))
    }

    fn shown(&self, ctx: &TrialCtx<'_, Endpoint>) -> Value {
        let request = &ctx.asked.encoded.request;
        json!({"path": request.path_and_query(), "body": request.body})
    }

    async fn send(
        &self,
        _: &mut (),
        ctx: &TrialCtx<'_, Endpoint>,
    ) -> WatchedStep<Vec<Exchange>, Result<Answered, String>> {
        let asked = ctx.asked;
        self.sent(ctx, &asked.req, &asked.encoded.request).await
    }

    fn keep(&self, ctx: &TrialCtx<'_, Endpoint>, answer: &Answered, seen: &[Exchange]) -> Kept {
        kept(ctx.asked, answer, seen)
    }

    fn unsent(
        &self,
        ctx: &TrialCtx<'_, Endpoint>,
        (response, outcome, _): &Answered,
    ) -> Result<Vec<Finding>, Cell> {
        judge::unsent(ctx.asked, response, outcome)
    }

    fn downstream(
        &self,
        ctx: &TrialCtx<'_, Endpoint>,
        read: &ReadExchange<'_>,
        (response, outcome, _): &Answered,
    ) -> (Vec<Finding>, Option<Outcome>) {
        let mut findings = judge::answered(ctx.asked, read, response, outcome);
        if self.direct.is_some() {
            findings.extend(judge::produced(ctx.asked, outcome));
        }
        let continues = judge::continues(ctx.asked, response, outcome).cloned();
        (findings, continues)
    }

    async fn round(
        &self,
        _: &mut (),
        ctx: &TrialCtx<'_, Endpoint>,
        step: RoundStep<'_>,
    ) -> WatchedStep<Vec<Exchange>, RoundAnswer> {
        let sent = self.sent(ctx, step.next, step.encoded).await;
        round_reply(sent, step.next.stream)
    }

    fn judges_the_model(&self) -> bool {
        self.direct.is_some()
    }
}

/// What the record keeps of an answer over HTTP (a gateway's, a model server's).
fn kept(asked: &CallerRequest, answer: &Answered, seen: &[Exchange]) -> Kept {
    let (response, outcome, timing) = answer;
    Kept {
        status: Some(response.status),
        outcome: outcome.as_ref().ok().cloned(),
        body: response.body.clone(),
        timing: Some(RequestTiming::of(*timing, asked.req.stream, seen)),
    }
}

/// A round's HTTP answer as the phases take it: what the caller got, the outcome the rounds go
/// on from (none after an error), and the request's timing.
fn round_reply(
    sent: WatchedStep<Vec<Exchange>, DecodedResponse>,
    stream: bool,
) -> WatchedStep<Vec<Exchange>, RoundAnswer> {
    let timing =
        (sent.answer.as_ref().ok()).map(|(_, _, t)| RequestTiming::of(*t, stream, &sent.seen));
    let got = sent
        .answer
        .map(|(response, outcome, _)| (response, outcome));
    let next = match &got {
        Ok((_, Ok(o))) if o.error.is_none() => Some(o.clone()),
        _ => None,
    };
    WatchedStep {
        answer: RoundAnswer { got, next, timing },
        seen: sent.seen,
        waited: sent.waited,
    }
}

impl System for LoadedGateway {
    type Way = Http;
    type Table = GatewayProfile;

    fn kind(&self) -> SystemKind {
        SystemKind::Gateway
    }

    fn profile(&self) -> &LoadedGateway {
        self
    }

    fn routes(&self) -> Vec<Route> {
        LoadedGateway::routes(self)
    }

    async fn start(
        self: Arc<Self>,
        upstream: &Upstream,
        work: &Path,
        url: Option<&str>,
    ) -> Result<Started<Http>, String> {
        if let Some(url) = url {
            return Ok(Started::way(Http::new(&self, url)));
        }
        let running = process::start(&self, &upstream.base_url(), work).await?;
        Ok(running.started(&self.name, "", |url| Http::new(&self, url)))
    }

    fn replay_command(&self, t: &TrialResult) -> String {
        curl(self, t)
    }
}

/// A shell word: single-quoted, or double-quoted with `$UPSTREAM` when it names the upstream.
fn shell_word(v: &str) -> String {
    if v.contains("{{upstream}}") {
        let escaped = v
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('`', "\\`")
            .replace('$', "\\$")
            .replace("{{upstream}}", "${UPSTREAM}");
        format!("\"{escaped}\"")
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

/// The client's request as a `curl` command: the profile's and the route's headers, the body
/// from a here-document.
fn curl(profile: &LoadedGateway, t: &TrialResult) -> String {
    let path = t
        .client_request
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("/");
    let body = t
        .client_request
        .get("body")
        .map(|b| serde_json::to_string_pretty(b).unwrap_or_default())
        .unwrap_or_default();
    let mut s = format!("curl -sS \"${{GATEWAY}}{}\" \\\n", path.replace('"', "%22"));
    let _ = writeln!(s, "  -H 'content-type: application/json' \\");
    let route = profile
        .routes()
        .into_iter()
        .find(|r| r.name() == t.id.route);
    let headers = profile
        .profile
        .headers
        .iter()
        .chain(route.iter().flat_map(|r| r.headers.iter()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect::<Vec<_>>();
    for (k, v) in headers {
        let _ = writeln!(s, "  -H {} \\", shell_word(&format!("{k}: {v}")));
    }
    let _ = write!(s, "  --data-binary @- <<'JSON'\n{body}\nJSON");
    s
}
