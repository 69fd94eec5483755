//! The way through a gateway: the client's request in the route's inbound format over HTTP,
//! with the profile's and the route's headers, decoded as it streams; and a gateway profile as
//! the engine's system under test (install, start its process or use `--url`, the reproducer's
//! `curl`).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::process;
use super::profile::{GatewayProfile, LoadedGateway};
use crate::engine::{
    CallerRequest, Cell, Exchange, Finding, Kept, ReadExchange, Reading, RequestTiming,
    RoundAnswer, RoundStep, Route, RoutedTrial, Started, System, SystemKind, TrialCtx, TrialResult,
    Upstream, Way, judge,
};
use crate::http::HttpResponse;
use crate::model::{DecodeError, Outcome};
use crate::run::{Endpoint, Timing, WatchedStep, exchange};
use crate::system::fill;

/// Trials through a gateway at `url` (its base path included).
pub struct Http {
    profile: Arc<LoadedGateway>,
    client: reqwest::Client,
    url: String,
}

impl Http {
    /// The way to the gateway at `base_url` (the profile's base path is added).
    pub fn new(profile: Arc<LoadedGateway>, base_url: &str) -> Http {
        let base_path = profile.profile.base_path.trim_end_matches('/');
        Http {
            url: format!("{}{base_path}", base_url.trim_end_matches('/')),
            client: crate::run::client_per_request(Duration::from_secs(60)),
            profile,
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
        let asked = CallerRequest::new(base, route, req, Reading::AsSent)?;
        let mut headers: Vec<(String, String)> =
            self.profile.profile.headers.clone().into_iter().collect();
        headers.extend(trial.route.headers.iter().map(|(k, v)| {
            (
                k.clone(),
                fill(v, &[("upstream", upstream.base_url().as_str())]),
            )
        }));
        let endpoint = Endpoint {
            base_url: self.url.clone(),
            key: None,
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
        let request = &asked.encoded.request;
        let on = (&self.client, ctx.request);
        exchange(on, asked.inbound, &asked.req, request, ctx.watch).await
    }

    fn keep(
        &self,
        ctx: &TrialCtx<'_, Endpoint>,
        (response, outcome, timing): &Answered,
        seen: &[Exchange],
    ) -> Kept {
        Kept {
            status: Some(response.status),
            outcome: outcome.as_ref().ok().cloned(),
            body: response.body.clone(),
            timing: Some(RequestTiming::of(*timing, ctx.asked.req.stream, seen)),
        }
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
    ) -> Vec<Finding> {
        judge::answered(ctx.asked, read, response, outcome)
    }

    fn continues(
        &self,
        ctx: &TrialCtx<'_, Endpoint>,
        _: &ReadExchange<'_>,
        (response, outcome, _): &Answered,
    ) -> Option<Outcome> {
        judge::continues(ctx.asked, response, outcome).cloned()
    }

    async fn round(
        &self,
        _: &mut (),
        ctx: &TrialCtx<'_, Endpoint>,
        step: RoundStep<'_>,
    ) -> WatchedStep<Vec<Exchange>, RoundAnswer> {
        let (next, encoded) = (step.next, step.encoded);
        let on = (&self.client, ctx.request);
        let sent = exchange(on, ctx.asked.inbound, next, encoded, ctx.watch).await;
        let timing = (sent.answer.as_ref().ok())
            .map(|(_, _, t)| RequestTiming::of(*t, next.stream, &sent.seen));
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
            return Ok(Started {
                way: Http::new(self, url),
                process: None,
                note: None,
            });
        }
        let running = process::start(&self, &upstream.base_url(), work).await?;
        let note = format!(
            "{} ready at {} in {:.1}s (log {})",
            self.name,
            running.base_url,
            running.started_in.as_secs_f64(),
            running.log.display()
        );
        Ok(Started {
            way: Http::new(Arc::clone(&self), &running.base_url),
            process: Some(Box::new(running)),
            note: Some(note),
        })
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
