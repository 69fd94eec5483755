//! The way through a gateway: the client's request in the route's inbound format over HTTP,
//! with the profile's and the route's headers, decoded as it streams; and a gateway profile as
//! the engine's system under test (install, start its process or use `--url`, the reproducer's
//! `curl`).

use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toml::Spanned;

use super::process;
use super::profile::LoadedGateway;
use crate::engine::{
    CallerRequest, Cell, Exchange, Finding, Kept, ProfileKnownFailure, PromptWatch, RequestTiming,
    RoundAnswer, Route, RoutedTrial, Started, System, SystemKind, TrialResult, Upstream, Way,
    judge,
};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, Outcome, Provider};
use crate::run::{Endpoint, Timing, WatchedStep, exchange};
use crate::system::{fill, install_pinned, write_shipped};

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
        let asked = CallerRequest::new(base, inbound, trial.route.upstream, req, false)?;
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

    fn shown(&self, asked: &CallerRequest, _: &Endpoint) -> Value {
        let request = &asked.encoded.request;
        json!({"path": request.path_and_query(), "body": request.body})
    }

    async fn send(
        &self,
        _: &mut (),
        asked: &CallerRequest,
        endpoint: &Endpoint,
        watch: &PromptWatch<'_>,
    ) -> WatchedStep<Vec<Exchange>, Result<Answered, String>> {
        let request = &asked.encoded.request;
        exchange(
            &self.client,
            endpoint,
            asked.inbound,
            &asked.req,
            request,
            watch,
        )
        .await
    }

    fn not_expressible(&self, _: &Answered) -> Option<Cell> {
        None
    }

    fn keep(
        &self,
        asked: &CallerRequest,
        (response, outcome, timing): &Answered,
        seen: &[Exchange],
    ) -> Kept {
        Kept {
            status: Some(response.status),
            outcome: outcome.as_ref().ok().cloned(),
            body: response.body.clone(),
            timing: Some(RequestTiming::of(*timing, asked.req.stream, seen)),
        }
    }

    fn unsent(
        &self,
        asked: &CallerRequest,
        (response, outcome, _): &Answered,
    ) -> Result<Vec<Finding>, Cell> {
        judge::unsent(asked, response, outcome)
    }

    fn downstream(
        &self,
        asked: &CallerRequest,
        ex: &Exchange,
        target: Provider,
        (response, outcome, _): &Answered,
    ) -> Vec<Finding> {
        judge::downstream(asked, ex, target, response, outcome)
    }

    fn continues(
        &self,
        asked: &CallerRequest,
        _: &Exchange,
        (response, outcome, _): &Answered,
    ) -> Option<Outcome> {
        judge::continues(asked, response, outcome).cloned()
    }

    async fn round(
        &self,
        _: &mut (),
        asked: &CallerRequest,
        endpoint: &Endpoint,
        _: &ChatRequest,
        next: &ChatRequest,
        encoded: &HttpRequest,
        watch: &PromptWatch<'_>,
    ) -> WatchedStep<Vec<Exchange>, RoundAnswer> {
        let sent = exchange(&self.client, endpoint, asked.inbound, next, encoded, watch).await;
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

    async fn end_trial(&self, _: &mut ()) {}

    async fn end_worker(&self, _: ()) {}
}

impl System for LoadedGateway {
    type Way = Http;

    fn kind(&self) -> SystemKind {
        SystemKind::Gateway
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.profile.description
    }

    fn version(&self) -> Option<&str> {
        self.profile.version.as_deref()
    }

    fn routes(&self) -> Vec<Route> {
        LoadedGateway::routes(self)
    }

    fn concurrency(&self) -> usize {
        self.profile.concurrency
    }

    fn known(&self) -> &[Spanned<ProfileKnownFailure>] {
        &self.profile.known_failure
    }

    fn locate(&self, span: Range<usize>) -> String {
        crate::engine::Loaded::locate(self, span)
    }

    fn install(&self) -> Result<Option<PathBuf>, String> {
        if self.source.contains("{{shipped}}") {
            write_shipped()?;
        }
        let install = self.profile.install.as_ref();
        install_pinned(&self.name, self.install_dir(), install)
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
