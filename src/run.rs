//! One trial, exchange after exchange, against an HTTP endpoint: the replay server, the
//! simulator or a live provider. Encoding and decoding are the provider modules'; this module
//! only sends, streams bytes into the decoder, and feeds tool results back for the next round.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;

use crate::case::{ChoiceSpec, Trial};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, Message, Outcome, ToolChoice};
use crate::providers::{self, DecodeError, EncodeError, Encoded, Provider, StreamDecoder};

/// Where requests go and how they are authenticated.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Origin (and optional prefix) without a trailing slash, e.g. `http://127.0.0.1:4000`.
    pub base_url: String,
    /// API key; sent in the provider's auth header. Replay sends none.
    pub key: Option<String>,
    /// Extra request headers (e.g. the simulator scenario).
    pub extra_headers: Vec<(String, String)>,
}

/// One request/response of a trial.
#[derive(Debug)]
pub struct ExchangeRun {
    pub neutral: ChatRequest,
    pub encoded: Encoded,
    pub response: HttpResponse,
    pub outcome: Result<Outcome, DecodeError>,
}

/// Everything a trial did. At most one of `encode_error` / `transport_error` ends it early.
#[derive(Debug, Default)]
pub struct TrialRun {
    pub exchanges: Vec<ExchangeRun>,
    /// Encoding failed closed: nothing was sent for that exchange.
    pub encode_error: Option<EncodeError>,
    /// The connection failed (refused, dropped mid-stream, timed out).
    pub transport_error: Option<String>,
}

/// A reqwest client for loopback or live use. Redirects are not followed (a recorder must see
/// exactly what answered).
pub fn client(timeout: Duration) -> reqwest::Client {
    crate::tls::install_provider();
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// Runs the trial's exchanges: the first request, then one more per `[[rounds]]` entry while
/// the model keeps calling tools. Follow-up exchanges use `tool_choice: auto` (agent loops do:
/// a forced or required choice would never let the model answer); an omitted choice stays omitted.
pub async fn run_trial(client: &reqwest::Client, trial: &Trial, endpoint: &Endpoint) -> TrialRun {
    let mut run = TrialRun::default();
    let mut req = trial.first_request();
    let rounds = &trial.case.file.rounds;
    for i in 0..=rounds.len() {
        let encoded = match providers::encode(trial.provider, &req) {
            Ok(e) => e,
            Err(e) => {
                run.encode_error = Some(e);
                break;
            }
        };
        let sent = send(client, endpoint, trial.provider, &req, &encoded.request).await;
        let (response, outcome) = match sent {
            Ok(r) => r,
            Err(e) => {
                run.transport_error = Some(e);
                break;
            }
        };
        let calls = match &outcome {
            Ok(o) if o.error.is_none() => o.clone(),
            _ => Outcome::default(),
        };
        run.exchanges.push(ExchangeRun {
            neutral: req.clone(),
            encoded,
            response,
            outcome,
        });
        if i == rounds.len() || calls.tool_calls.is_empty() {
            break;
        }
        req = follow_up(req, &calls, &rounds[i], &trial.choice);
    }
    run
}

/// The next exchange's request: the model's turn echoed back, then one result per call.
fn follow_up(
    mut req: ChatRequest,
    outcome: &Outcome,
    round: &crate::case::Round,
    choice: &ChoiceSpec,
) -> ChatRequest {
    req.messages.push(Message::Assistant {
        text: outcome.text.clone(),
        tool_calls: outcome.tool_calls.clone(),
        opaque: outcome.opaque.clone(),
    });
    let mut used = vec![false; round.results.len()];
    for call in &outcome.tool_calls {
        // The first unused result for this tool; when they run out, the last one for it again.
        let idx = round
            .results
            .iter()
            .enumerate()
            .position(|(k, r)| !used[k] && r.tool.get_ref() == &call.name)
            .or_else(|| {
                round
                    .results
                    .iter()
                    .rposition(|r| r.tool.get_ref() == &call.name)
            });
        let (content, is_error) = match idx {
            Some(k) => {
                used[k] = true;
                (round.results[k].content.clone(), round.results[k].is_error)
            }
            None => (
                format!("no result configured for tool `{}`", call.name),
                true,
            ),
        };
        req.messages.push(Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error,
        });
    }
    if matches!(choice, ChoiceSpec::Choice(_)) {
        req.tool_choice = Some(ToolChoice::Auto);
    }
    req
}

/// Sends one encoded request and decodes the answer. Streams are decoded as bytes arrive.
pub async fn send(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    provider: Provider,
    neutral: &ChatRequest,
    request: &HttpRequest,
) -> Result<(HttpResponse, Result<Outcome, DecodeError>), String> {
    let url = format!(
        "{}{}",
        endpoint.base_url.trim_end_matches('/'),
        request.path_and_query()
    );
    let method = reqwest::Method::from_bytes(request.method.as_bytes())
        .map_err(|e| format!("bad method: {e}"))?;
    let body = serde_json::to_vec(&request.body).map_err(|e| e.to_string())?;
    let mut rb = client.request(method, &url).body(body);
    for (k, v) in &request.headers {
        rb = rb.header(k, v);
    }
    if let Some(key) = &endpoint.key {
        let (name, value) = provider.auth_header(key);
        rb = rb.header(name, value);
    }
    for (k, v) in &endpoint.extra_headers {
        rb = rb.header(k, v);
    }
    let resp = rb
        .send()
        .await
        .map_err(|e| format!("request to {url} failed: {}", error_chain(&e)))?;
    let status = resp.status().as_u16();
    let mut headers = BTreeMap::new();
    for (k, v) in resp.headers() {
        headers
            .entry(k.as_str().to_ascii_lowercase())
            .or_insert_with(|| String::from_utf8_lossy(v.as_bytes()).into_owned());
    }
    let mut response = HttpResponse {
        status,
        headers,
        body: Vec::new(),
    };
    if neutral.stream && response.is_success() {
        let mut decoder = StreamDecoder::new(provider, neutral);
        let mut failed: Option<DecodeError> = None;
        let mut chunks = resp.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk =
                chunk.map_err(|e| format!("stream from {url} broke off: {}", error_chain(&e)))?;
            response.body.extend_from_slice(&chunk);
            if failed.is_none()
                && let Err(e) = decoder.push(&chunk)
            {
                failed = Some(e);
            }
        }
        let outcome = match failed {
            Some(e) => Err(e),
            None => decoder.finish(),
        };
        return Ok((response, outcome));
    }
    response.body = resp
        .bytes()
        .await
        .map_err(|e| format!("reading the answer from {url} failed: {}", error_chain(&e)))?
        .to_vec();
    let outcome = providers::decode(provider, neutral, &response);
    Ok((response, outcome))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        cur = inner.source();
    }
    s
}
