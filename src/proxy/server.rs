//! The proxy's HTTP server (hyper 1, loopback only, accepting through `listen`): reads request
//! bodies within the limits (`read`), answers from `forward`, streams bodies through a channel so that a client going away cancels upstream.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use super::answer::Answer;
use super::config::ProxyConfig;
use super::forward::{self, Shared};
use super::listen::{self, Body, ConnLimits};
use super::read;
use crate::run::SupportCache;

/// A running proxy; it stops (listener and open connections) when dropped.
pub struct Proxy {
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Starts on the config's loopback address. Must be called inside a tokio runtime.
    pub async fn start(config: ProxyConfig) -> io::Result<Proxy> {
        config
            .check_limits()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if !config.listen.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the proxy only listens on loopback",
            ));
        }
        let listener = TcpListener::bind(config.listen).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            client: crate::run::client(Duration::from_secs(config.upstream_timeout_secs)),
            cache: SupportCache::new(SupportCache::DEFAULT_TTL),
            config,
        });
        let limits = ConnLimits::of(&shared.config);
        let (shutdown, rx) = watch::channel(false);
        let task = tokio::spawn(listen::accept_loop(listener, rx, limits, move |req| {
            handle(req, Arc::clone(&shared))
        }));
        Ok(Proxy {
            addr,
            shutdown,
            task,
        })
    }

    /// The proxy's reading of one request whose body arrived whole, without a server: the
    /// route table, the limits on the text (UTF-8, nesting), the JSON, the client's own API's
    /// rejections and the request decoder. `Ok` when it would be routed on; else the status
    /// and body the client would get (fuzzed: `tests/fuzz`, target `proxy_request`).
    pub fn read_request(
        config: &ProxyConfig,
        method: &str,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<(), (u16, Vec<u8>)> {
        let Ok(method) = hyper::Method::from_bytes(method.as_bytes()) else {
            return Err((400, b"not an HTTP method".to_vec()));
        };
        let bytes = Ok(Bytes::copy_from_slice(body));
        match forward::decode(config, &method, path, query, bytes) {
            Ok(_) => Ok(()),
            Err(Answer::Full { status, body, .. }) => Err((status, body)),
            Err(Answer::Stream { .. }) => Err((500, Vec::new())),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.task.abort();
    }
}

async fn handle(req: Request<Incoming>, shared: Arc<Shared>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    let bytes = read::body(&parts.headers, body, &shared.config).await;
    // A body not read whole leaves the connection unusable: it closes after the answer.
    let unread = bytes.is_err();
    let mut answer = forward::answer(&shared, &parts.method, &path, query.as_deref(), bytes).await;
    if let (true, Answer::Full { headers, .. }) = (unread, &mut answer) {
        headers.push(("connection".into(), "close".into()));
    }
    Ok(to_hyper(answer))
}

fn to_hyper(answer: Answer) -> Response<Body> {
    let (status, headers, body) = match answer {
        Answer::Full {
            status,
            headers,
            body,
        } => (
            status,
            headers,
            Full::new(Bytes::from(body))
                .map_err(|never| match never {})
                .boxed(),
        ),
        Answer::Stream { headers, rx } => (200, headers, channel_body(rx)),
    };
    let mut builder = Response::builder().status(status);
    for (k, v) in &headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    builder.body(body).unwrap_or_else(|_| {
        let mut r = Response::new(
            Full::new(Bytes::new())
                .map_err(|never| match never {})
                .boxed(),
        );
        *r.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}

/// The body of a streamed answer: whatever the forwarding task sends, until it ends. When the
/// client goes away, hyper drops this body, the channel closes and the task stops upstream.
fn channel_body(rx: mpsc::Receiver<Vec<u8>>) -> Body {
    let s = futures_util::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, io::Error>(Frame::data(Bytes::from(chunk))), rx))
    });
    BodyExt::boxed(StreamBody::new(s))
}
