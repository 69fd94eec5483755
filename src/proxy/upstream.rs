//! The proxy's upstream request: sent with the route's key, over the plain-HTTP pool
//! (`h1`) or reqwest for HTTPS, its answer read as a stream of bytes or whole within a bound.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::config::ProxyRoute;
use super::h1;

/// An upstream answer body above this is refused (a buffered answer is held in memory).
const MAX_UPSTREAM_BODY: usize = 64 * 1024 * 1024;

/// The proxy's ways upstream, both with the same total timeout per request.
pub(super) struct UpstreamClient {
    tls: reqwest::Client,
    plain: Arc<h1::Pool>,
    timeout: Duration,
}

/// An upstream answer: its status, then its body as it arrives.
pub(super) struct Response {
    pub status: u16,
    body: Body,
}

enum Body {
    Plain(h1::Answered),
    Tls(Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>),
}

impl UpstreamClient {
    pub(super) fn new(timeout: Duration) -> UpstreamClient {
        UpstreamClient {
            tls: crate::run::client(timeout),
            plain: Arc::default(),
            timeout,
        }
    }

    /// Sends `request` to the route's upstream, with the route's key the provider's way.
    pub(super) async fn send(
        &self,
        route: &ProxyRoute,
        request: &crate::http::HttpRequest,
    ) -> Result<Response, String> {
        let url = format!(
            "{}{}",
            route.base_url.trim_end_matches('/'),
            request.path_and_query()
        );
        let body = serde_json::to_vec(&request.body).map_err(|e| e.to_string())?;
        let key = route.key().map(|k| route.provider.auth_header(&k));
        if url.starts_with("http://") {
            let mut headers: Vec<(&str, &str)> = (request.headers.iter())
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            if let Some((name, value)) = &key {
                headers.push((name, value.as_str()));
            }
            let answered = self.plain.post(&url, &headers, body, self.timeout).await?;
            return Ok(Response {
                status: answered.status,
                body: Body::Plain(answered),
            });
        }
        let mut rb = self.tls.post(&url).body(body);
        for (k, v) in &request.headers {
            rb = rb.header(k, v);
        }
        if let Some((name, value)) = key {
            rb = rb.header(name, value);
        }
        let resp = rb.send().await.map_err(|e| e.to_string())?;
        Ok(Response {
            status: resp.status().as_u16(),
            body: Body::Tls(Box::pin(resp.bytes_stream())),
        })
    }
}

impl Response {
    pub(super) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The whole answer, refused above `MAX_UPSTREAM_BODY` (a buffered answer is held).
    pub(super) async fn read_bounded(mut self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        while let Some(c) = self.next().await {
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
}

impl Stream for Response {
    type Item = Result<Bytes, String>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match &mut self.get_mut().body {
            Body::Plain(a) => a.poll_chunk(cx),
            Body::Tls(s) => s
                .as_mut()
                .poll_next(cx)
                .map(|c| c.map(|r| r.map_err(|e| e.to_string()))),
        }
    }
}
