//! Sending one encoded request over HTTP to an endpoint (the replay server, the simulator, a
//! gateway or a live provider) and decoding the answer; streams are decoded as bytes arrive.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, Outcome, Provider};
use crate::providers::{self, StreamDecoder};

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

/// [`client`] with a connection of its own for every request: gateway mode's, so that a
/// gateway that breaks a connection after answering (OGX resets it after relaying an upstream
/// error) breaks no other trial than the one that caused it.
pub(crate) fn client_per_request(timeout: Duration) -> reqwest::Client {
    crate::tls::install_provider();
    reqwest::Client::builder()
        .timeout(timeout)
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// When an answer arrived, measured from the moment the request was handed to the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// Send → the answer's last byte received.
    pub(crate) complete: Duration,
    /// Send → the first tool call the stream decoder saw (streamed answers only).
    pub(crate) first_call: Option<Duration>,
}

/// Sends one encoded request and decodes the answer. Streams are decoded as bytes arrive.
pub async fn send(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    provider: Provider,
    neutral: &ChatRequest,
    request: &HttpRequest,
) -> Result<(HttpResponse, Result<Outcome, DecodeError>), String> {
    send_timed(client, endpoint, provider, neutral, request)
        .await
        .map(|(response, outcome, _)| (response, outcome))
}

/// [`send`], also saying when the answer completed and, for streams, when the decoder first saw
/// a tool call (it looks only until it has seen one).
pub(crate) async fn send_timed(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    provider: Provider,
    neutral: &ChatRequest,
    request: &HttpRequest,
) -> Result<(HttpResponse, Result<Outcome, DecodeError>, Timing), String> {
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
    let t0 = Instant::now();
    let mut timing = Timing::default();
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
            if timing.first_call.is_none() && !decoder.progress().calls.is_empty() {
                timing.first_call = Some(t0.elapsed());
            }
        }
        timing.complete = t0.elapsed();
        let outcome = match failed {
            Some(e) => Err(e),
            None => decoder.finish(),
        };
        return Ok((response, outcome, timing));
    }
    response.body = resp
        .bytes()
        .await
        .map_err(|e| format!("reading the answer from {url} failed: {}", error_chain(&e)))?
        .to_vec();
    timing.complete = t0.elapsed();
    let outcome = providers::decode(provider, neutral, &response);
    Ok((response, outcome, timing))
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
