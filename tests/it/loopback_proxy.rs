//! A small loopback HTTP proxy for the gateway tests (the mutant gateways, the delaying gateway of
//! the compare test): one accept loop, and the one way a request is sent on to the upstream.

use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::http::request::Parts;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub type ProxyBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// What the upstream answered: status, content type (JSON when it named none), body.
pub struct UpstreamAnswer {
    pub status: u16,
    pub ctype: String,
    pub body: Vec<u8>,
}

/// The request's head and its whole body.
pub async fn read(req: Request<Incoming>) -> (Parts, Vec<u8>) {
    let (parts, body) = req.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes().to_vec())
        .unwrap_or_default();
    (parts, bytes)
}

/// The request's path and query.
pub fn path_and_query(parts: &Parts) -> String {
    parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string())
}

/// Sends `body` to the same path on `upstream` with the client's headers; an answer the proxy
/// could not get becomes its 502.
pub async fn send(
    client: &reqwest::Client,
    upstream: &str,
    parts: &Parts,
    body: Vec<u8>,
) -> Result<UpstreamAnswer, Response<ProxyBody>> {
    let mut rb = client.request(
        parts.method.clone(),
        format!("{upstream}{}", path_and_query(parts)),
    );
    for (k, v) in &parts.headers {
        if !matches!(k.as_str(), "host" | "content-length") {
            rb = rb.header(k, v);
        }
    }
    let answer = rb
        .body(body)
        .send()
        .await
        .map_err(|e| respond(502, "text/plain", e.to_string().into_bytes()))?;
    let status = answer.status().as_u16();
    let ctype = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let body = answer.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
    Ok(UpstreamAnswer {
        status,
        ctype,
        body,
    })
}

/// A whole answer.
pub fn respond(status: u16, ctype: &str, body: Vec<u8>) -> Response<ProxyBody> {
    Response::builder()
        .status(status)
        .header("content-type", ctype)
        .body(Full::new(Bytes::from(body)).boxed())
        .unwrap_or_default()
}

/// Serves `handle(upstream, client, request)` on loopback; the task ends with the runtime.
pub async fn serve<F, Fut>(upstream: String, handle: F) -> SocketAddr
where
    F: Fn(Arc<String>, reqwest::Client, Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<ProxyBody>> + Send + 'static,
{
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = Arc::new(upstream);
    let client = tooltape::run::client(Duration::from_secs(30));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (upstream, client, handle) =
                (Arc::clone(&upstream), client.clone(), handle.clone());
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let fut = handle(Arc::clone(&upstream), client.clone(), req);
                    async move { Ok::<_, Infallible>(fut.await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}
