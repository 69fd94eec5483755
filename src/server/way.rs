//! A server profile as the engine's system under test: install, the model file, start, `--url`,
//! the reproducer's `curl`; its way is the HTTP way straight to the server (`gateway::Http` with
//! its route settings: the server's own exchange is read, its answers judged against the
//! contract); and the cases a model server cannot play.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::profile::LoadedServer;
use crate::case::Case;
use crate::engine::{Route, Started, System, SystemKind, TrialResult, Upstream};
use crate::gateway::{Direct, Http, Launch, Settings, launch};
use crate::model::Provider;

/// The way to the server at `base_url`, each route's settings from the profile.
fn way(profile: &LoadedServer, base_url: &str) -> Http {
    let p = &profile.profile;
    let routes = (profile.routes().iter())
        .map(|r| {
            let fields: &'static [&'static str] = match r.inbound {
                Provider::OpenaiResponses => &["max_output_tokens"],
                Provider::OpenaiChat | Provider::TextProtocol => {
                    &["max_tokens", "max_completion_tokens"]
                }
                _ => &["max_tokens"],
            };
            let settings = Settings {
                body: profile.body_for(&r.name()),
                cap: p.max_output_tokens.map(|n| (fields, n)),
            };
            (r.name(), settings)
        })
        .collect::<BTreeMap<_, _>>();
    let auth = (p.key.clone(), p.headers.clone().into_iter().collect());
    let timeout = Duration::from_secs(p.request_timeout_secs);
    let tape = p.tape.clone();
    Http::direct(base_url, auth, Direct { routes, tape }, timeout)
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

impl System for LoadedServer {
    type Way = Http;
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

    /// Installs the pinned server unless a tape answers in its place: a replay needs neither
    /// the server nor its model (`cargo test` replays a real model's tape without building it).
    fn install(&self, note: &dyn Fn(&str)) -> Result<Option<std::path::PathBuf>, String> {
        match self.profile.tape.as_deref() {
            Some(tape) if tape.replays() => Ok(None),
            _ => crate::engine::install_release(self, note),
        }
    }

    /// Starts the server on loopback with its model (or uses the one at `url`).
    async fn start(
        self: Arc<Self>,
        upstream: &Upstream,
        work: &Path,
        url: Option<&str>,
    ) -> Result<Started<Http>, String> {
        let tape = self.profile.tape.as_deref();
        if let Some(tape) = tape
            && let Some(url) = tape.url().await
        {
            return Ok(Started::way(way(&self, &url)));
        }
        if let Some(url) = url {
            return Ok(Started::way(way(&self, url)));
        }
        let Some(start) = &self.profile.start else {
            return Err(format!(
                "{}: no [start] table: pass --url URL of a running server",
                self.path.display()
            ));
        };
        let dir = self.install_dir();
        let model = self.model_file(&dir)?;
        if let (Some(tape), Some(m), Some(p)) = (tape, &model, &self.profile.model) {
            tape.model_file(m, &p.package);
        }
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
        let detail = (model.map(|m| format!(", model {}", m.display()))).unwrap_or_default();
        Ok(running.started(&self.name, &detail, |url| way(&self, url)))
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
