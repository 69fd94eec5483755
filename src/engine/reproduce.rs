//! Root causes as a maintainer reads them: a run's failing trials grouped by cause
//! (`cause::CauseKey`), each titled by its smallest trial's own message, with its audit from the
//! profile and that trial's reproducer (the caller's request as a command and JSON, what went
//! upstream, what upstream answered, what came back, the expected behaviour with the API's
//! documented rule), for gateways and libraries alike. Their texts are `report::suite`'s.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::cause::{CauseKey, CauseKind};
use super::finding::FindingKind;
use super::profile::Audit;
use super::result::{Cell, TrialResult};
use super::system::System;
use crate::model::{Provider, Severity};
use crate::text::clip;

/// The longest answer text a reproducer carries.
const ANSWER_CHARS: usize = 4000;

/// The reproducer of `trial` (the smallest of a cause).
pub(super) fn reproducer<S: System>(
    system: &S,
    trial: Option<&TrialResult>,
    key: &CauseKey,
) -> Reproducer {
    let Some(t) = trial else {
        return Reproducer {
            trial: String::new(),
            command: String::new(),
            client_request: Value::Null,
            upstream_request: None,
            upstream_answer: None,
            downstream_status: None,
            downstream_answer: String::new(),
            expected: String::new(),
        };
    };
    let (inbound, upstream) = route_providers(system, &t.id.route);
    Reproducer {
        trial: t.id.key(),
        command: system.replay_command(t),
        client_request: t.client_request.clone(),
        upstream_request: t.upstream_request.clone(),
        upstream_answer: t.upstream_answer.clone(),
        downstream_status: t.downstream_status,
        downstream_answer: clip(&String::from_utf8_lossy(&t.downstream_body), ANSWER_CHARS),
        expected: expected(key, inbound, upstream),
    }
}

fn route_providers<S: System>(system: &S, route: &str) -> (Option<Provider>, Option<Provider>) {
    system
        .routes()
        .into_iter()
        .find(|r| r.name() == route)
        .map_or((None, None), |r| (Some(r.inbound), Some(r.upstream)))
}

/// The audit of a cause, from the profile's known failure that names it.
#[derive(Clone, Debug, Serialize)]
pub struct KnownFailureAudit {
    /// `path:line:col` of the entry.
    pub at: String,
    pub trials: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<Audit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracker: Option<String>,
}

/// One root cause of a run.
#[derive(Clone, Debug, Serialize)]
pub struct RootCause {
    pub id: String,
    pub title: String,
    pub side: String,
    pub kind: String,
    pub severity: Severity,
    /// Routes with a trial failing with it, in the order the run met them.
    pub routes: Vec<String>,
    /// The trial keys (`case::route::choice::mode`).
    pub trials: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<KnownFailureAudit>,
    pub reproducer: Reproducer,
}

/// The smallest trial of a cause, as a maintainer replays it without tooltape.
#[derive(Clone, Debug, Serialize)]
pub struct Reproducer {
    pub trial: String,
    /// The caller's request as a command: `curl` against `$GATEWAY` (the gateway's base URL;
    /// `$UPSTREAM` is the upstream's), or the driver's trial line for a library.
    pub command: String,
    /// `{path, body}` of the client's request.
    pub client_request: Value,
    /// What the gateway sent upstream (`None`: nothing).
    pub upstream_request: Option<Value>,
    /// What the upstream answered it (a stream as its raw events).
    pub upstream_answer: Option<String>,
    pub downstream_status: Option<u16>,
    /// What the client got (clipped at 4,000 characters).
    pub downstream_answer: String,
    /// What the client should have got, with the documented rule.
    pub expected: String,
}

/// The run's root causes, most trials first (then by id).
pub fn causes<S: System>(system: &S, results: &[TrialResult]) -> Vec<RootCause> {
    let mut groups: BTreeMap<String, (CauseKey, Severity, Vec<&TrialResult>)> = BTreeMap::new();
    for r in results {
        let (Some(id), Some(key)) = (r.cause.clone(), r.cause_key.clone()) else {
            continue;
        };
        let severity = r
            .findings
            .iter()
            .find(|f| f.severity != Severity::Cosmetic)
            .map_or(Severity::Breaking, |f| f.severity);
        groups
            .entry(id)
            .or_insert_with(|| (key, severity, Vec::new()))
            .2
            .push(r);
    }
    let mut out: Vec<RootCause> = groups
        .into_iter()
        .map(|(id, (key, severity, trials))| {
            let mut routes: Vec<String> = Vec::new();
            for t in &trials {
                if !routes.contains(&t.id.route) {
                    routes.push(t.id.route.clone());
                }
            }
            let smallest = trials
                .iter()
                .min_by_key(|t| (t.client_request.to_string().len(), t.id.key()))
                .copied();
            let known = known_of(system, &id);
            RootCause {
                title: smallest
                    .and_then(concrete_title)
                    .unwrap_or_else(|| key.title()),
                side: key.side.to_string(),
                kind: key.kind.to_string(),
                severity,
                routes,
                trials: trials.iter().map(|t| t.id.key()).collect(),
                known,
                reproducer: reproducer(system, smallest, &key),
                id,
            }
        })
        .collect();
    out.sort_by(|a, b| b.trials.len().cmp(&a.trials.len()).then(a.id.cmp(&b.id)));
    out
}

/// A cause's title: its smallest trial's own message (`side: message`), as a maintainer
/// meets it, not the grouping's abstraction.
fn concrete_title(t: &TrialResult) -> Option<String> {
    let finding = t.findings.iter().find(|f| f.severity != Severity::Cosmetic);
    match (finding, &t.cell) {
        (Some(f), _) => Some(format!("{}: {}", f.side, f.message)),
        (None, Cell::Broken(m)) => Some(format!("broken: {m}")),
        (None, _) => None,
    }
}

fn known_of<S: System>(system: &S, id: &str) -> Option<KnownFailureAudit> {
    system.known().iter().find_map(|k| {
        let e = k.get_ref();
        (e.cause.as_deref() == Some(id)).then(|| KnownFailureAudit {
            at: system.locate(k.span()),
            trials: e.failure.trials.clone(),
            reason: e.failure.reason.clone(),
            audit: e.audit,
            tracker: e.tracker.clone(),
        })
    })
}

/// Where each API documents its requests and answers.
fn api_doc(p: Provider) -> &'static str {
    match p {
        Provider::OpenaiChat => "https://platform.openai.com/docs/api-reference/chat/create",
        Provider::OpenaiResponses => {
            "https://platform.openai.com/docs/api-reference/responses/create"
        }
        Provider::Anthropic => "https://docs.anthropic.com/en/api/messages",
        Provider::Gemini => "https://ai.google.dev/api/generate-content",
        Provider::TextProtocol => "docs/text-protocol.md (this repository)",
    }
}

/// The API's own rule for what a cause breaks, by side and kind.
fn expected(key: &CauseKey, inbound: Option<Provider>, upstream: Option<Provider>) -> String {
    let doc = |p: Option<Provider>| p.map_or("the API's reference", api_doc);
    let up = upstream.map_or("the upstream", Provider::slug);
    let inb = inbound.map_or("the client's format", Provider::slug);
    let CauseKind::Finding(kind) = key.kind else {
        return forwards(inb, up, doc(inbound));
    };
    match kind {
        FindingKind::Request => format!(
            "The request reaches {up} with the client's meaning: every tool with its description and schema (keywords {up} cannot take may be dropped, none it takes), the tool_choice, strict and parallel_tool_calls translated into {up}'s own fields ({}).",
            doc(upstream)
        ),
        FindingKind::Refused => format!(
            "The gateway sends {up} a request {up} accepts: every field {up} requires, none it rejects ({}). The client's request is valid in its own API ({}).",
            doc(upstream),
            doc(inbound)
        ),
        FindingKind::ToolResult => format!(
            "Each tool result reaches {up} linked to the call it answers (by call id; Gemini by function name) and none is dropped ({}).",
            doc(upstream)
        ),
        FindingKind::Injected => {
            "The text protocol's instructions are the ones src/inject/ builds, byte for byte."
                .into()
        }
        FindingKind::Route => format!(
            "The request goes to {up}, the API the route names ({}).",
            doc(upstream)
        ),
        FindingKind::Answer => format!(
            "The client gets upstream's answer in {inb}: the same calls in order with the same arguments, each with its own id, the format's own finish value (chat: `finish_reason: \"tool_calls\"`, messages: `stop_reason: \"tool_use\"`, `length`/`max_tokens` at the output limit), the same text, usage ({}); an upstream error stays an error.",
            doc(inbound)
        ),
        FindingKind::Stream => format!(
            "The stream follows {inb}'s event order: each call opened with its id and name, arguments streamed as upstream streams them, exactly one finish, then the terminal event (chat `data: [DONE]`, messages `message_stop`, Responses `response.completed`) ({}).",
            doc(inbound)
        ),
        FindingKind::ClientFault => format!(
            "A request its own API rejects is answered with that API's 4xx error in its envelope ({}).",
            doc(inbound)
        ),
        FindingKind::Round => format!(
            "A follow-up request carrying tool results goes upstream and its answer comes back like the first ({}).",
            doc(inbound)
        ),
        _ => forwards(inb, up, doc(inbound)),
    }
}

/// The expectation of a cause no API rule names (a broken trial, a kind without its own).
fn forwards(inb: &str, up: &str, doc: &str) -> String {
    format!("The gateway forwards a valid {inb} request to {up} and answers it ({doc}).")
}
