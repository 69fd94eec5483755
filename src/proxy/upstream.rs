//! The proxy's upstream request: sent with the route's key, its answer read within a bound.

use futures_util::StreamExt;

use super::config::ProxyRoute;

/// An upstream answer body above this is refused (a buffered answer is held in memory).
const MAX_UPSTREAM_BODY: usize = 64 * 1024 * 1024;

/// Sends `request` to the route's upstream, with the route's key the provider's way.
pub(super) async fn send(
    client: &reqwest::Client,
    route: &ProxyRoute,
    request: &crate::http::HttpRequest,
) -> Result<reqwest::Response, String> {
    let url = format!(
        "{}{}",
        route.base_url.trim_end_matches('/'),
        request.path_and_query()
    );
    let body = serde_json::to_vec(&request.body).map_err(|e| e.to_string())?;
    let mut rb = client.post(&url).body(body);
    for (k, v) in &request.headers {
        rb = rb.header(k, v);
    }
    if let Some(key) = route.key() {
        let (name, value) = route.provider.auth_header(&key);
        rb = rb.header(name, value);
    }
    rb.send().await.map_err(|e| e.to_string())
}

/// The whole upstream answer, refused above `MAX_UPSTREAM_BODY` (a buffered answer is held).
pub(super) async fn read_bounded(resp: reqwest::Response) -> Result<Vec<u8>, String> {
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
