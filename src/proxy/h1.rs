//! The proxy's client for plain-HTTP upstreams (a local model server, a sidecar, another gateway
//! on the same host): HTTP/1.1 over pooled keep-alive connections, straight on hyper's connection
//! API, without reqwest's layers (redirect policy, proxy lookup, URL parsing, the legacy pool's
//! bookkeeping), which cost more than the whole rest of a loopback hop (docs/performance.md).
//! HTTPS upstreams keep reqwest: TLS, the platform's roots and the `HTTPS_PROXY` variables.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use http_body_util::Full;
use hyper::body::{Body, Incoming};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::time::Sleep;

/// Idle connections kept per upstream (host and port); more are closed when answered.
const MAX_IDLE: usize = 32;

type Sender = SendRequest<Full<Bytes>>;

/// Keep-alive connections to plain-HTTP upstreams, by `host:port`.
#[derive(Default)]
pub(super) struct Pool {
    idle: Mutex<HashMap<String, Vec<Sender>>>,
}

/// An upstream answer: its status and its body, read within the request's deadline; the
/// connection goes back to the pool when the body has been read to its end.
pub(super) struct Answered {
    pub status: u16,
    body: Incoming,
    deadline: Pin<Box<Sleep>>,
    back: Option<(Arc<Pool>, String, Sender)>,
}

impl Pool {
    /// Sends a POST of `body` to `url` (`http://host[:port]/path?query`) with `headers`; the
    /// whole exchange, answer body included, within `timeout` (as reqwest's total timeout).
    pub(super) async fn post(
        self: &Arc<Pool>,
        url: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Answered, String> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| format!("bad upstream URL {url}: {e}"))?;
        let Some(authority) = uri.authority().map(|a| a.as_str().to_string()) else {
            return Err(format!("bad upstream URL {url}: no host"));
        };
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut req = hyper::Request::post(path).header(hyper::header::HOST, authority.as_str());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("cannot build the upstream request: {e}"))?;
        let deadline = Box::pin(tokio::time::sleep(timeout));
        let exchange = async {
            let mut sender = match self.take(&authority) {
                Some(s) => s,
                None => connect(&authority).await?,
            };
            let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
            Ok::<_, String>((sender, resp))
        };
        let (sender, resp) = tokio::time::timeout_at(deadline.deadline(), exchange)
            .await
            .map_err(|_| "operation timed out".to_string())??;
        Ok(Answered {
            status: resp.status().as_u16(),
            body: resp.into_body(),
            deadline,
            back: Some((Arc::clone(self), authority, sender)),
        })
    }

    /// An idle connection to `authority` that can take a request now.
    fn take(&self, authority: &str) -> Option<Sender> {
        let mut idle = self.idle.lock().ok()?;
        let list = idle.get_mut(authority)?;
        while let Some(s) = list.pop() {
            if s.is_ready() {
                return Some(s);
            }
        }
        None
    }

    fn put(&self, authority: String, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            let list = idle.entry(authority).or_default();
            if list.len() < MAX_IDLE {
                list.push(sender);
            }
        }
    }
}

/// A new connection to `authority`, its driver spawned on the runtime.
async fn connect(authority: &str) -> Result<Sender, String> {
    let tcp = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let (sender, conn) = http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        // Ends when the connection closes or the pool drops its sender.
        let _ = conn.await;
    });
    Ok(sender)
}

impl Answered {
    /// The next piece of the body (`None` at its end, when the connection goes back to the
    /// pool); an error when the body broke off or the deadline passed.
    pub(super) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, String>>> {
        loop {
            if self.deadline.as_mut().poll(cx).is_ready() {
                self.back = None;
                return Poll::Ready(Some(Err("operation timed out".into())));
            }
            let frame = match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(f) => f,
            };
            match frame {
                None => {
                    if let Some((pool, authority, sender)) = self.back.take() {
                        pool.put(authority, sender);
                    }
                    return Poll::Ready(None);
                }
                Some(Err(e)) => {
                    self.back = None;
                    return Poll::Ready(Some(Err(e.to_string())));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => return Poll::Ready(Some(Ok(data))),
                    Err(_) => continue, // trailers: nothing a JSON or SSE body carries
                },
            }
        }
    }
}

impl Stream for Answered {
    type Item = Result<Bytes, String>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_chunk(cx)
    }
}
