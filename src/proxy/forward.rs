//! One client request through the proxy, as named phases in the order they run: decode (the
//! route table, the body, what the client's own API rejects), route (the model alias to an
//! upstream), then per attempt encode, send, and relay (streamed) or answer (buffered). The
//! hosted-search variant fallback (`run::fallback_step`) is the one reason for a second attempt.

use serde_json::Value;

use super::answer::{
    Answer, Headers, error, header_text, meta, refusal, telemetry_headers, upstream_error,
};
use super::config::{ProxyConfig, ProxyRoute};
use super::conversations::{Continuation, Conversations, Keep};
use super::read;
use super::reasoning::Reasoning;
use super::{inbound, relay, upstream};
use crate::loopback::Request;
use crate::model::{ChatRequest, DecodeError, Encoded, Outcome, Provider};
use crate::providers;
use crate::respond::{self, Inbound, Meta};
use crate::run::{SupportCache, fallback_step, falls_back};

/// What every request of a running proxy shares.
pub(super) struct Shared {
    pub config: std::sync::Arc<ProxyConfig>,
    pub upstream: upstream::UpstreamClient,
    pub cache: std::sync::Arc<SupportCache>,
    /// The reasoning state of recent answers, put back into the rounds that follow them.
    pub reasoning: std::sync::Arc<Reasoning>,
    /// The Responses conversations answered, continued by `previous_response_id`.
    pub conversations: std::sync::Arc<Conversations>,
}

/// Answers one request (never panics: every failure is an answer in the client's format).
pub(super) async fn answer(shared: &Shared, req: &Request) -> Answer {
    if req.method == "GET" && req.path == "/health" {
        return Answer::Full {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: br#"{"status":"ok"}"#.to_vec(),
        };
    }
    let (inbound, mut neutral, asked) = match decode(&shared.config, req) {
        Ok(decoded) => decoded,
        Err(answer) => return answer,
    };
    // A Responses continuation: the kept conversation first, or the API's 400.
    if let Err(rej) = shared
        .conversations
        .continued(&asked.continuation, &mut neutral)
    {
        return refusal(inbound, &rej);
    }
    let (route, alias, neutral) = match route(shared, inbound, neutral) {
        Ok(routed) => routed,
        Err(answer) => return answer,
    };
    forward(shared, route, (inbound, &alias), neutral, &asked).await
}

/// What a client asked that the neutral request does not carry.
#[derive(Debug)]
pub(super) struct Asked {
    /// A Chat client asked for its usage chunk (`stream_options.include_usage`).
    pub usage_chunk: bool,
    /// A Responses client's conversation state (`previous_response_id`, `store`).
    pub continuation: Continuation,
}

/// Phase 1: the inbound format from the route table, then the body as the neutral request (and
/// what it asked that the neutral request does not carry); a request the client's own API would reject
/// gets that API's 400 and nothing goes upstream.
pub(super) fn decode(
    config: &ProxyConfig,
    req: &Request,
) -> Result<(Inbound, ChatRequest, Asked), Answer> {
    let (method, path) = (req.method.as_str(), req.path.as_str());
    let Some(inbound) = inbound::format_of(method, path, &req.query) else {
        let message = format!("no such endpoint: {path}");
        return Err(error(Inbound::Chat, 404, &message, Vec::new()));
    };
    let fail = |status, message: &str| error(inbound, status, message, Vec::new());
    if method != "POST" {
        return Err(fail(
            405,
            &format!("{method} is not allowed on {path}: use POST"),
        ));
    }
    let bytes = req
        .body
        .as_ref()
        .map_err(|e| fail(e.status(), &read::unread(e)))?;
    if let Some(problem) = read::text_problem(bytes, config.max_json_depth) {
        return Err(fail(400, &problem));
    }
    let body: Value = serde_json::from_slice(bytes)
        .map_err(|e| fail(400, &format!("the request body is not valid JSON: {e}")))?;
    let refused = inbound::rejection(inbound, &body);
    // Chat: usage comes in its own final chunk only when the client asks for it.
    let asked = Asked {
        usage_chunk: body
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            == Some(&Value::Bool(true)),
        continuation: Continuation::of(inbound, &body),
    };
    let neutral = inbound::decode(inbound, path, &req.query, body)
        .map_err(|field| fail(400, &format!("invalid request: {field}")))?;
    match refused {
        Some(rej) => Err(refusal(inbound, &rej)),
        None => Ok((inbound, neutral, asked)),
    }
}

/// Phase 2: the route of the request's model alias, the upstream model and strict policy set.
fn route(
    shared: &Shared,
    inbound: Inbound,
    mut neutral: ChatRequest,
) -> Result<(&ProxyRoute, String, ChatRequest), Answer> {
    let alias = neutral.model.clone();
    let Some(route) = shared.config.route(&alias) else {
        let message = format!("model `{alias}` is not routed by this proxy");
        return Err(error(inbound, 404, &message, Vec::new()));
    };
    neutral.model = route
        .upstream_model
        .clone()
        .unwrap_or_else(|| alias.clone());
    neutral.strict = route.strict;
    Ok((route, alias, neutral))
}

/// Phases 3 to 6, per attempt: encode, send, then relay a streamed success or answer in full.
async fn forward(
    shared: &Shared,
    route: &ProxyRoute,
    (inbound, alias): (Inbound, &str),
    mut neutral: ChatRequest,
    asked: &Asked,
) -> Answer {
    let provider = route.provider;
    let meta = meta(inbound, alias);
    let keep = Keep::of(
        &shared.conversations,
        &asked.continuation,
        &meta.id,
        &neutral,
    );
    shared.reasoning.restore(provider, &mut neutral);
    if let Err(message) = shared.reasoning.resolve(provider, &mut neutral) {
        return error(inbound, 400, &message, Vec::new());
    }
    super::reasoning::sign_foreign(provider, &mut neutral);
    crate::providers::opaque::think_only_on_own(provider, &mut neutral);
    if falls_back(provider, &neutral) {
        let now = shared.cache.now();
        if let Some(v) = shared.cache.first_variant(provider, &neutral.model, now) {
            crate::run::set_variant(&mut neutral, v);
        }
    }
    // Ids the client got from another API (longer, other characters) made valid upstream.
    crate::providers::call_ids::fit_request(provider, &mut neutral);
    // At most one retry: the `web_search` → `web_search_preview` fallback.
    for _attempt in 0..2 {
        let (encoded, headers) = match encode(provider, inbound, &neutral) {
            Ok(encoded) => encoded,
            Err(answer) => return answer,
        };
        let resp = match shared.upstream.send(route, &encoded.request).await {
            Ok(r) => r,
            Err(e) => {
                let message = format!("upstream {provider} unreachable: {e}");
                return error(inbound, 502, &message, headers);
            }
        };
        let status = resp.status;
        if neutral.stream && resp.is_success() {
            let meta = Meta {
                usage_chunk: asked.usage_chunk,
                ..meta
            };
            let kept = (std::sync::Arc::clone(&shared.reasoning), keep);
            return relay::stream((inbound, meta), (provider, kept), neutral, resp, headers);
        }
        let body = match resp.read_bounded().await {
            Ok(b) => b,
            Err(e) => return error(inbound, 502, &e, headers),
        };
        let http = crate::http::HttpResponse {
            status,
            headers: Default::default(),
            body,
        };
        let mut outcome = providers::decode(provider, &neutral, &http);
        if fallback_step(provider, &mut neutral, &outcome, &shared.cache).is_some() {
            continue;
        }
        if let Ok(o) = &mut outcome {
            shared.reasoning.remember(provider, &neutral, o);
            // Ids valid in the client's API and distinct, whatever upstream answered.
            crate::providers::call_ids::fit_answer(super::inbound::provider(inbound), o);
            if let Some(keep) = keep.filter(|_| status < 400) {
                keep.answered(o);
            }
        }
        let searching = !neutral.hosted.is_empty();
        let tool_type = crate::capability::wire_tool_type(provider, &encoded.request.body);
        return full_answer(
            (inbound, &meta),
            provider,
            outcome,
            headers,
            searching.then_some(tool_type),
        );
    }
    error(
        inbound,
        400,
        "GROUNDING_NOT_SUPPORTED: no web search variant is supported by the upstream model",
        Vec::new(),
    )
}

/// Phase 3: the upstream request (failing closed as the encoder does), with the headers that
/// say where it went, the encoder's notes and the hosted tool type sent.
fn encode(
    provider: Provider,
    inbound: Inbound,
    neutral: &ChatRequest,
) -> Result<(Encoded, Headers), Answer> {
    let mut headers: Headers = vec![("x-tooltape-upstream".into(), provider.slug().into())];
    let encoded = match providers::encode(provider, neutral) {
        Ok(e) => e,
        Err(e) => {
            headers.push(("x-tooltape-refused".into(), e.code.clone()));
            return Err(error(inbound, 400, &e.to_string(), headers));
        }
    };
    if !encoded.notes.is_empty() {
        let notes = header_text(&encoded.notes.join("; "));
        headers.push(("x-tooltape-notes".into(), notes));
    }
    if let Some(t) = crate::capability::wire_tool_type(provider, &encoded.request.body) {
        headers.push(("x-tooltape-hosted-tool-type".into(), t));
    }
    Ok((encoded, headers))
}

/// Phase 6, buffered: upstream's answer decoded and written whole in the client's format (an
/// upstream error in the client's envelope); grounding telemetry when searching
/// (`searching` carries the hosted tool type sent).
pub(super) fn full_answer(
    (inbound, meta): (Inbound, &Meta),
    provider: Provider,
    outcome: Result<Outcome, DecodeError>,
    mut headers: Headers,
    searching: Option<Option<String>>,
) -> Answer {
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            let message = format!("upstream {provider} answered something undecodable: {e}");
            return error(inbound, 502, &message, headers);
        }
    };
    if let Some(err) = &outcome.error {
        return upstream_error(inbound, err, headers);
    }
    if let Some(tool_type) = searching {
        telemetry_headers(&mut headers, tool_type, &outcome);
    }
    let b = respond::body(inbound, &outcome, meta);
    headers.push(("content-type".into(), "application/json".into()));
    Answer::Full {
        status: 200,
        headers,
        // Straight into bytes: `to_string` goes through `fmt` and copies.
        body: serde_json::to_vec(&b).unwrap_or_default(),
    }
}
