//! One client request through the proxy: route → decode → encode for the upstream → send →
//! decode as bytes arrive → the client's format. Hosted-search fallback and the support cache
//! (shared by the process), grounding telemetry and encoder notes in response headers.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::config::{ProxyConfig, ProxyRoute};
use super::inbound;
use crate::model::{ChatRequest, Outcome, Provider, ProviderError};
use crate::providers::{self, StreamDecoder};
use crate::respond::{self, Envelope, Inbound, Meta, StreamWriter};
use crate::run::SupportCache;
use crate::schema::NullFilter;

/// An upstream answer body above this is refused (a buffered answer is held in memory).
const MAX_UPSTREAM_BODY: usize = 64 * 1024 * 1024;

pub(super) struct Shared {
    pub config: ProxyConfig,
    pub client: reqwest::Client,
    pub cache: SupportCache,
}

pub(super) type Headers = Vec<(String, String)>;

pub(super) enum Answer {
    Full {
        status: u16,
        headers: Headers,
        body: Vec<u8>,
    },
    Stream {
        headers: Headers,
        rx: mpsc::Receiver<Vec<u8>>,
    },
}

fn error(inbound: Inbound, status: u16, message: &str, headers: Headers) -> Answer {
    let body = respond::envelope(
        inbound.family(),
        &Envelope {
            status,
            message,
            ..Envelope::default()
        },
    );
    let mut headers = headers;
    headers.push(("content-type".into(), "application/json".into()));
    Answer::Full {
        status,
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// The client's own API's 400 for a request it would reject (`inbound::rejection`), with its
/// OpenAI `param` and `code` where it has them; `x-tooltape-refused: CLIENT_REQUEST`.
fn refusal(inbound: Inbound, rej: &crate::providers::Rejection) -> Answer {
    let body = respond::envelope(
        inbound.family(),
        &Envelope {
            status: rej.status,
            message: &rej.message,
            param: rej.extra.param.as_deref(),
            code: rej.extra.code.as_deref(),
            ..Envelope::default()
        },
    );
    Answer::Full {
        status: rej.status,
        headers: vec![
            ("x-tooltape-refused".into(), "CLIENT_REQUEST".into()),
            ("content-type".into(), "application/json".into()),
        ],
        body: body.to_string().into_bytes(),
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(1);

fn meta(inbound: Inbound, model: &str) -> Meta {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let prefix = match inbound {
        Inbound::Chat => "chatcmpl-tt",
        Inbound::Responses => "resp_tt",
        Inbound::Messages => "msg_tt",
        Inbound::Gemini { .. } => "tt",
    };
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Meta {
        id: format!("{prefix}{n:012}"),
        model: model.to_string(),
        created,
    }
}

/// Answers one request (never panics: every failure is an answer in the client's format).
pub(super) async fn answer(
    shared: &Shared,
    method: &hyper::Method,
    path: &str,
    query: Option<&str>,
    bytes: Result<Bytes, String>,
) -> Answer {
    if method == hyper::Method::GET && path == "/health" {
        return Answer::Full {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: br#"{"status":"ok"}"#.to_vec(),
        };
    }
    let Some(inbound) = inbound::route(method.as_str(), path, query) else {
        return error(
            Inbound::Chat,
            404,
            &format!("no such endpoint: {path}"),
            Vec::new(),
        );
    };
    if method != hyper::Method::POST {
        return error(
            inbound,
            405,
            &format!("{method} is not allowed on {path}: use POST"),
            Vec::new(),
        );
    }
    let Ok(bytes) = bytes else {
        let max = shared.config.max_body_bytes;
        return error(
            inbound,
            413,
            &format!("the request body is over the proxy's limit of {max} bytes"),
            Vec::new(),
        );
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return error(
                inbound,
                400,
                &format!("the request body is not valid JSON: {e}"),
                Vec::new(),
            );
        }
    };
    let refused = inbound::rejection(inbound, &body);
    let mut neutral = match inbound::decode(inbound, path, query, body) {
        Ok(r) => r,
        Err(field) => {
            return error(
                inbound,
                400,
                &format!("invalid request: {field}"),
                Vec::new(),
            );
        }
    };
    if let Some(rej) = refused {
        return refusal(inbound, &rej);
    }
    let alias = neutral.model.clone();
    let Some(route) = shared.config.route(&alias) else {
        return error(
            inbound,
            404,
            &format!("model `{alias}` is not routed by this proxy"),
            Vec::new(),
        );
    };
    neutral.model = route
        .upstream_model
        .clone()
        .unwrap_or_else(|| alias.clone());
    neutral.strict = route.strict;
    forward(shared, route, inbound, &alias, neutral).await
}

async fn forward(
    shared: &Shared,
    route: &ProxyRoute,
    inbound: Inbound,
    alias: &str,
    mut neutral: ChatRequest,
) -> Answer {
    let provider = route.provider;
    let searching = !neutral.hosted.is_empty();
    if searching && provider == Provider::OpenaiResponses {
        let now = shared.cache.now();
        if let Some(v) = shared.cache.first_variant(provider, &neutral.model, now) {
            crate::run::set_variant(&mut neutral, v);
        }
    }
    // At most one retry: the `web_search` → `web_search_preview` fallback.
    for _attempt in 0..2 {
        let mut headers: Headers = vec![("x-tooltape-upstream".into(), provider.slug().into())];
        let encoded = match providers::encode(provider, &neutral) {
            Ok(e) => e,
            Err(e) => {
                headers.push(("x-tooltape-refused".into(), e.code.clone()));
                return error(inbound, 400, &e.to_string(), headers);
            }
        };
        if !encoded.notes.is_empty() {
            headers.push((
                "x-tooltape-notes".into(),
                header_text(&encoded.notes.join("; ")),
            ));
        }
        let tool_type = crate::capability::wire_tool_type(provider, &encoded.request.body);
        if let Some(t) = &tool_type {
            headers.push(("x-tooltape-hosted-tool-type".into(), t.clone()));
        }
        let resp = match send(shared, route, &encoded.request).await {
            Ok(r) => r,
            Err(e) => {
                return error(
                    inbound,
                    502,
                    &format!("upstream {provider} unreachable: {e}"),
                    headers,
                );
            }
        };
        let status = resp.status().as_u16();
        if neutral.stream && resp.status().is_success() {
            return stream(inbound, alias, provider, neutral, resp, headers);
        }
        let body = match read_bounded(resp).await {
            Ok(b) => b,
            Err(e) => return error(inbound, 502, &e, headers),
        };
        let http = crate::http::HttpResponse {
            status,
            headers: Default::default(),
            body,
        };
        let outcome = providers::decode(provider, &neutral, &http);
        if searching
            && provider == Provider::OpenaiResponses
            && let Some(next) = crate::run::variant_rejected(&neutral, &outcome, &shared.cache)
        {
            crate::run::set_variant(&mut neutral, next);
            continue;
        }
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                return error(
                    inbound,
                    502,
                    &format!("upstream {provider} answered something undecodable: {e}"),
                    headers,
                );
            }
        };
        if let Some(err) = &outcome.error {
            return upstream_error(inbound, err, headers);
        }
        if searching {
            telemetry_headers(&mut headers, tool_type, &outcome);
        }
        let b = respond::body(inbound, &outcome, &meta(inbound, alias));
        headers.push(("content-type".into(), "application/json".into()));
        return Answer::Full {
            status: 200,
            headers,
            body: b.to_string().into_bytes(),
        };
    }
    error(
        inbound,
        400,
        "GROUNDING_NOT_SUPPORTED: no web search variant is supported by the upstream model",
        Vec::new(),
    )
}

fn upstream_error(inbound: Inbound, err: &ProviderError, headers: Headers) -> Answer {
    let status = if (400..=599).contains(&err.status) {
        err.status
    } else {
        502
    };
    error(inbound, status, &err.message, headers)
}

fn header_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

fn telemetry_headers(headers: &mut Headers, tool_type: Option<String>, outcome: &Outcome) {
    let t = crate::run::telemetry(tool_type, Some(outcome), None);
    headers.push((
        "x-tooltape-grounding-attempted".into(),
        t.grounding_attempted.to_string(),
    ));
    headers.push((
        "x-tooltape-grounded-effective".into(),
        t.grounded_effective.to_string(),
    ));
    headers.push((
        "x-tooltape-grounding-calls".into(),
        t.tool_call_count.to_string(),
    ));
    headers.push((
        "x-tooltape-grounding-results".into(),
        t.tool_result_count.to_string(),
    ));
    if let Some(w) = t.why_not_grounded {
        headers.push(("x-tooltape-why-not-grounded".into(), header_text(&w)));
    }
}

async fn send(
    shared: &Shared,
    route: &ProxyRoute,
    request: &crate::http::HttpRequest,
) -> Result<reqwest::Response, String> {
    let url = format!(
        "{}{}",
        route.base_url.trim_end_matches('/'),
        request.path_and_query()
    );
    let body = serde_json::to_vec(&request.body).map_err(|e| e.to_string())?;
    let mut rb = shared.client.post(&url).body(body);
    for (k, v) in &request.headers {
        rb = rb.header(k, v);
    }
    if let Some(key) = route.key() {
        let (name, value) = route.provider.auth_header(&key);
        rb = rb.header(name, value);
    }
    rb.send().await.map_err(|e| e.to_string())
}

async fn read_bounded(resp: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(c) = s.next().await {
        let c = c.map_err(|e| format!("reading the upstream answer failed: {e}"))?;
        if out.len() + c.len() > MAX_UPSTREAM_BODY {
            return Err(format!(
                "the upstream answer is over {MAX_UPSTREAM_BODY} bytes"
            ));
        }
        out.extend_from_slice(&c);
    }
    Ok(out)
}

/// A streamed answer: a task pushes upstream bytes into the decoder and forwards each new delta
/// in the client's format at once. When the client goes away the channel closes, the task ends
/// and dropping the upstream response cancels the upstream request.
fn stream(
    inbound: Inbound,
    alias: &str,
    provider: Provider,
    neutral: ChatRequest,
    resp: reqwest::Response,
    mut headers: Headers,
) -> Answer {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let meta = meta(inbound, alias);
    headers.push(("content-type".into(), inbound.stream_content_type().into()));
    headers.push(("cache-control".into(), "no-cache".into()));
    tokio::spawn(async move {
        let mut writer = StreamWriter::new(inbound, meta);
        let mut decoder = StreamDecoder::new(provider, &neutral);
        let mut tracker = Tracker::new(provider, &neutral);
        let first = writer.start();
        if !first.is_empty() && tx.send(first).await.is_err() {
            return;
        }
        let mut chunks = resp.bytes_stream();
        loop {
            // A client that goes away closes the channel: stop at once, even while upstream is
            // quiet (keep-alives, a slow model), so dropping the response cancels upstream.
            let chunk = tokio::select! {
                c = chunks.next() => c,
                () = tx.closed() => return,
            };
            let Some(chunk) = chunk else { break };
            // One event at a time: fragments upstream sent as separate events stay separate
            // downstream even when they arrive in one read.
            let mut out = Vec::new();
            let failed = match chunk {
                Ok(c) => event_pieces(&c).find_map(|piece| match decoder.push(piece) {
                    Ok(()) => {
                        out.extend(tracker.forward(&decoder, &mut writer));
                        None
                    }
                    Err(e) => Some(format!("upstream {provider} stream undecodable: {e}")),
                }),
                Err(e) => Some(format!("upstream {provider} stream broke off: {e}")),
            };
            if let Some(message) = failed {
                let err = ProviderError {
                    status: 502,
                    message,
                    ..ProviderError::default()
                };
                out.extend(writer.error(&err));
                let _ = tx.send(out).await;
                return;
            }
            if !out.is_empty() && tx.send(out).await.is_err() {
                return; // the client went away
            }
        }
        let mut last = tracker.finish(&mut writer);
        last.extend(match decoder.finish() {
            Ok(o) => match &o.error {
                Some(err) => writer.error(err),
                // Upstream's stream ended before its terminal event: the answer is not whole,
                // so the client gets its format's error event, never a clean finish (clients
                // detect an error event; most take a stream that just ends as complete).
                None if truncated(&o) => writer.error(&ProviderError {
                    status: 502,
                    message: format!(
                        "upstream {provider} stream ended before its terminal event: the answer is incomplete"
                    ),
                    ..ProviderError::default()
                }),
                None => writer.finish(&o),
            },
            Err(e) => writer.error(&ProviderError {
                status: 502,
                message: format!("upstream {provider} stream undecodable: {e}"),
                ..ProviderError::default()
            }),
        });
        let _ = tx.send(last).await;
    });
    Answer::Stream { headers, rx }
}

fn truncated(o: &Outcome) -> bool {
    o.diagnostics
        .iter()
        .any(|d| d.kind == crate::model::DiagnosticKind::StreamTruncated)
}

/// `chunk` cut after each blank line (the end of a Server-Sent Event, LF or CRLF); the rest last.
fn event_pieces(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = chunk;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = (0..rest.len())
            .find_map(|i| match &rest[i..] {
                [b'\n', b'\n', ..] => Some(i + 2),
                [b'\n', b'\r', b'\n', ..] => Some(i + 3),
                _ => None,
            })
            .unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// What of the decoder's progress has been forwarded. Arguments of calls to tools the strict
/// rewrite changed go through the incremental restore (the buffered path restores on decode).
struct Tracker<'s> {
    provider: Provider,
    req: &'s ChatRequest,
    text_sent: Vec<usize>,
    args_sent: Vec<String>,
    filters: Vec<Option<NullFilter<'s>>>,
    /// Filtered bytes not yet forwarded (the end of an incomplete UTF-8 character).
    pending: Vec<Vec<u8>>,
}

impl<'s> Tracker<'s> {
    fn new(provider: Provider, req: &'s ChatRequest) -> Tracker<'s> {
        Tracker {
            provider,
            req,
            text_sent: Vec::new(),
            args_sent: Vec::new(),
            filters: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn forward(&mut self, d: &StreamDecoder, w: &mut StreamWriter) -> Vec<u8> {
        let p = d.progress();
        let mut out = Vec::new();
        for (i, piece) in p.text.iter().enumerate() {
            if self.text_sent.len() <= i {
                self.text_sent.push(0);
            }
            if let Some(rest) = piece.get(self.text_sent[i]..)
                && !rest.is_empty()
            {
                out.extend(w.text(rest));
                self.text_sent[i] = piece.len();
            }
        }
        for (k, c) in p.calls.iter().enumerate() {
            if k >= self.args_sent.len() {
                if c.name.is_empty() {
                    break; // a call is started once its name is known
                }
                let id = if c.id.is_empty() {
                    format!("call_{k}")
                } else {
                    c.id.to_string()
                };
                out.extend(w.call_start(&id, c.name));
                self.args_sent.push(String::new());
                self.filters.push(crate::schema::stream_filter(
                    self.provider,
                    self.req,
                    c.name,
                ));
                self.pending.push(Vec::new());
            }
            let sent = &mut self.args_sent[k];
            if c.arguments.len() > sent.len() && c.arguments.starts_with(sent.as_str()) {
                let rest = &c.arguments[sent.len()..];
                sent.push_str(rest);
                let bytes = match &mut self.filters[k] {
                    Some(f) => f.push(rest.as_bytes()),
                    None => rest.as_bytes().to_vec(),
                };
                out.extend(self.send_args(k, bytes, w));
            }
        }
        out
    }

    /// Releases what the filters still hold (arguments that ended early).
    fn finish(&mut self, w: &mut StreamWriter) -> Vec<u8> {
        let mut out = Vec::new();
        for k in 0..self.filters.len() {
            let held = self.filters[k].as_mut().map(NullFilter::finish);
            out.extend(self.send_args(k, held.unwrap_or_default(), w));
            let rest = std::mem::take(&mut self.pending[k]);
            if !rest.is_empty() {
                out.extend(w.call_args(k, &String::from_utf8_lossy(&rest)));
            }
        }
        out
    }

    /// Forwards the complete UTF-8 characters of `bytes` (after what was pending) for call `k`.
    fn send_args(&mut self, k: usize, bytes: Vec<u8>, w: &mut StreamWriter) -> Vec<u8> {
        let pending = &mut self.pending[k];
        pending.extend(bytes);
        let valid = match std::str::from_utf8(pending) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        if valid == 0 {
            return Vec::new();
        }
        let tail = pending.split_off(valid);
        let text = std::mem::replace(pending, tail);
        w.call_args(k, std::str::from_utf8(&text).unwrap_or_default())
    }
}
