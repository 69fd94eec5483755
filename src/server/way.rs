//! The way through a model server: the caller's request in the route's API over HTTP, with the
//! profile's determinism settings in every body; the server has no upstream, so its own
//! exchange is the one read (`Exchange::direct`) and its answer is judged against the contract
//! the caller set (`judge::produced`) beside the downstream checks every way has. And a server
//! profile as the engine's system under test: install, the model file, start, `--url`, the
//! reproducer's `curl`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::profile::LoadedServer;
use crate::case::Case;
use crate::engine::{
    CallerRequest, Cell, Exchange, Finding, Kept, ReadExchange, Reading, RequestTiming,
    RoundAnswer, RoundStep, Route, RoutedTrial, Started, System, SystemKind, TrialCtx, TrialResult,
    Upstream, Way, judge,
};
use crate::gateway::{Launch, launch};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{DecodeError, Outcome};
use crate::run::{DecodedResponse, Endpoint, Timing, WatchedStep, exchange};

/// Trials through a model server at `url`.
pub struct Served {
    profile: Arc<LoadedServer>,
    client: reqwest::Client,
    url: String,
}

/// What the caller got for a request: the response, its decoded outcome, and when it came.
type Answered = (HttpResponse, Result<Outcome, DecodeError>, Timing);

impl Served {
    /// The way to the server at `base_url`; a request that takes longer than the profile's
    /// `request_timeout_secs` breaks its trial.
    pub fn new(profile: Arc<LoadedServer>, base_url: &str) -> Served {
        let timeout = Duration::from_secs(profile.profile.request_timeout_secs);
        Served {
            url: base_url.trim_end_matches('/').to_string(),
            client: crate::run::client_per_request(timeout),
            profile,
        }
    }

    /// `request` with the route's settings in its body (a field the case set wins), sent; the
    /// server's own exchange is what it saw.
    async fn send_direct(
        &self,
        ctx: &TrialCtx<'_, Request>,
        neutral: &crate::model::ChatRequest,
        request: &HttpRequest,
    ) -> WatchedStep<Vec<Exchange>, DecodedResponse> {
        let mut request = request.clone();
        with_settings(&mut request.body, &ctx.request.settings);
        let on = (&self.client, &ctx.request.endpoint);
        let step = exchange(on, ctx.asked.inbound, neutral, &request, &()).await;
        let seen = (step.answer.as_ref().ok())
            .map(|(response, _, _)| vec![Exchange::direct(&request, response, neutral.stream)])
            .unwrap_or_default();
        WatchedStep {
            answer: step.answer,
            seen,
            waited: step.waited,
        }
    }
}

/// The server's form of a trial's request: where it goes, and the settings its body carries.
pub struct Request {
    endpoint: Endpoint,
    settings: Settings,
}

/// What every body of a route carries: fields it adds unless the body sets them, and the
/// output-token limit it lowers to.
struct Settings {
    body: Map<String, Value>,
    /// The API's output-limit field and its cap.
    cap: Option<(&'static str, u64)>,
}

/// Adds the settings to a JSON object body: each field unless the body sets it; the output
/// limit set, or lowered, to the cap.
fn with_settings(body: &mut Value, settings: &Settings) {
    let Some(b) = body.as_object_mut() else {
        return;
    };
    for (k, v) in &settings.body {
        b.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if let Some((field, cap)) = settings.cap {
        let now = b.get(field).and_then(Value::as_u64).unwrap_or(u64::MAX);
        b.insert(field.to_string(), json!(now.min(cap)));
    }
}

/// Why a case cannot run against a model server: its scenario scripts what only the
/// simulator's model can be made to do (fail, refuse, cut a stream, write malformed calls), or
/// it needs a hosted tool a model server does not run. `None`: the case runs.
pub fn scripted(case: &Case) -> Option<&'static str> {
    let s = &case.file.simulate;
    if s.error.is_some() {
        Some("its model answers an error")
    } else if s.stream_fault.is_some() {
        Some("its stream fails midway")
    } else if s.max_tokens_mid_call {
        Some("its output-token limit cuts a call")
    } else if s.refusal.is_some() {
        Some("its model refuses")
    } else if s.malformed.is_some() {
        Some("its model writes malformed calls")
    } else if s.no_usage || s.empty_search_results || !s.unsupported_tool_types.is_empty() {
        Some("its provider's answer is scripted")
    } else if !case.file.hosted.is_empty() {
        Some("it needs a hosted tool")
    } else {
        None
    }
}

impl Way for Served {
    type Worker = ();
    type Request = Request;
    type Delivered = Answered;

    fn worker(&self, _: usize) {}

    /// Phase 1: the caller's request in the route's API, with the profile's headers; the route's
    /// settings go into the body as it is sent.
    fn ask(&self, trial: &RoutedTrial, _: &Upstream) -> Result<(CallerRequest, Request), Cell> {
        let inbound = trial.route.inbound;
        let (base, req) = trial.first_request(inbound);
        let mut asked = CallerRequest::new(base, (inbound, inbound), req, Reading::AsSent)?;
        let field = match inbound {
            crate::model::Provider::OpenaiResponses => "max_output_tokens",
            _ => "max_tokens",
        };
        let settings = Settings {
            body: self.profile.body_for(&trial.route.name()),
            cap: (self.profile.profile.max_output_tokens).map(|n| (field, n)),
        };
        with_settings(&mut asked.encoded.request.body, &settings);
        let endpoint = Endpoint {
            base_url: self.url.clone(),
            key: self.profile.profile.key.clone(),
            extra_headers: self.profile.profile.headers.clone().into_iter().collect(),
        };
        Ok((asked, Request { endpoint, settings }))
    }

    fn shown(&self, ctx: &TrialCtx<'_, Request>) -> Value {
        let request = &ctx.asked.encoded.request;
        json!({"path": request.path_and_query(), "body": request.body})
    }

    async fn send(
        &self,
        _: &mut (),
        ctx: &TrialCtx<'_, Request>,
    ) -> WatchedStep<Vec<Exchange>, Result<Answered, String>> {
        let asked = ctx.asked;
        self.send_direct(ctx, &asked.req, &asked.encoded.request)
            .await
    }

    fn keep(&self, ctx: &TrialCtx<'_, Request>, answer: &Answered, seen: &[Exchange]) -> Kept {
        let (response, outcome, timing) = answer;
        Kept {
            status: Some(response.status),
            outcome: outcome.as_ref().ok().cloned(),
            body: response.body.clone(),
            timing: Some(RequestTiming::of(*timing, ctx.asked.req.stream, seen)),
        }
    }

    fn unsent(
        &self,
        ctx: &TrialCtx<'_, Request>,
        (response, outcome, _): &Answered,
    ) -> Result<Vec<Finding>, Cell> {
        judge::unsent(ctx.asked, response, outcome)
    }

    /// Phase 4: the answer's shape (finish, ids, the stream's events: the server's own exchange
    /// is both ends), then the contract the caller set.
    fn downstream(
        &self,
        ctx: &TrialCtx<'_, Request>,
        read: &ReadExchange<'_>,
        (response, outcome, _): &Answered,
    ) -> Vec<Finding> {
        let mut findings = judge::answered(ctx.asked, read, response, outcome);
        findings.extend(judge::produced(ctx.asked, outcome));
        findings
    }

    fn continues(
        &self,
        ctx: &TrialCtx<'_, Request>,
        _: &ReadExchange<'_>,
        (response, outcome, _): &Answered,
    ) -> Option<Outcome> {
        judge::continues(ctx.asked, response, outcome).cloned()
    }

    /// Phase 5: the round sent to the server with the route's settings; its calls are judged
    /// against the tools in force for it.
    async fn round(
        &self,
        _: &mut (),
        ctx: &TrialCtx<'_, Request>,
        step: RoundStep<'_>,
    ) -> WatchedStep<Vec<Exchange>, RoundAnswer> {
        let next = step.next;
        let sent = self.send_direct(ctx, next, step.encoded).await;
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

    fn judges_the_model(&self) -> bool {
        true
    }
}

impl System for LoadedServer {
    type Way = Served;
    type Table = super::profile::ServerProfile;

    fn kind(&self) -> SystemKind {
        SystemKind::Server
    }

    fn profile(&self) -> &LoadedServer {
        self
    }

    fn routes(&self) -> Vec<Route> {
        LoadedServer::routes(self)
    }

    fn takes(&self, case: &Case) -> bool {
        scripted(case).is_none()
    }

    /// Starts the server on loopback with its model (or uses the one at `url`).
    async fn start(
        self: Arc<Self>,
        upstream: &Upstream,
        work: &Path,
        url: Option<&str>,
    ) -> Result<Started<Served>, String> {
        if let Some(url) = url {
            return Ok(Started {
                way: Served::new(self, url),
                process: None,
                note: None,
            });
        }
        let Some(start) = &self.profile.start else {
            return Err(format!(
                "{}: no [start] table: pass --url URL of a running server",
                self.path.display()
            ));
        };
        let dir = self.install_dir();
        let model = self.model_file(&dir)?;
        let l = Launch {
            name: &self.name,
            path: &self.path,
            install_dir: dir,
            start,
            extra: model
                .iter()
                .map(|m| ("model", m.to_string_lossy().into_owned()))
                .collect(),
            log: "server.log",
        };
        let running = launch(&l, &upstream.base_url(), work).await?;
        let note = format!(
            "{} ready at {} in {:.1}s{} (log {})",
            self.name,
            running.base_url,
            running.started_in.as_secs_f64(),
            model
                .map(|m| format!(", model {}", m.display()))
                .unwrap_or_default(),
            running.log.display()
        );
        Ok(Started {
            way: Served::new(Arc::clone(&self), &running.base_url),
            process: Some(Box::new(running)),
            note: Some(note),
        })
    }

    fn replay_command(&self, t: &TrialResult) -> String {
        let path = (t.client_request.get("path"))
            .and_then(Value::as_str)
            .unwrap_or("/");
        let body = (t.client_request.get("body"))
            .map(|b| serde_json::to_string_pretty(b).unwrap_or_default())
            .unwrap_or_default();
        let mut s = format!(
            "curl -sS \"${{SERVER}}{}\" \\\n  -H 'content-type: application/json' \\\n",
            path.replace('"', "%22")
        );
        for (k, v) in &self.profile.headers {
            s.push_str(&format!(
                "  -H '{}' \\\n",
                format!("{k}: {v}").replace('\'', "'\\''")
            ));
        }
        s.push_str(&format!("  --data-binary @- <<'JSON'\n{body}\nJSON"));
        s
    }
}

#[cfg(test)]
mod tests;
