//! The simulator's HTTP server (the only IO in the simulator): hyper 1 on `127.0.0.1` only,
//! answers from the pure core, injected faults, chunk-by-chunk streaming, shutdown on drop.

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::answer::answer_request;
use super::errors::Rejection;
use super::exchange::{SIMULATOR_HEADER, SimBody, SimRequest, SimResponse, VERSION};
use super::faults::{self, Fault, FaultKind};
use super::route;

/// Request bodies above this are refused (Anthropic's documented 32 MB limit).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// How the server behaves beyond the pure answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimConfig {
    /// Waited before every answer.
    pub latency: Duration,
    /// Waited between the chunks of a streamed answer.
    pub chunk_delay: Duration,
    /// Applied to the requests they select; the first matching fault wins.
    pub faults: Vec<Fault>,
}

struct State {
    config: SimConfig,
    received: AtomicUsize,
    served: Arc<AtomicUsize>,
}

/// A running simulator on `127.0.0.1`; it stops (listener and open connections) when dropped.
pub struct Simulator {
    addr: SocketAddr,
    served: Arc<AtomicUsize>,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Simulator {
    /// Starts on a free loopback port. Must be called inside a tokio runtime.
    pub async fn start(config: SimConfig) -> io::Result<Simulator> {
        Simulator::start_on(0, config).await
    }

    /// Starts on `127.0.0.1:port` (`0`: any free port). Never binds another address.
    pub async fn start_on(port: u16, config: SimConfig) -> io::Result<Simulator> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        let served = Arc::new(AtomicUsize::new(0));
        let state = Arc::new(State {
            config,
            received: AtomicUsize::new(0),
            served: Arc::clone(&served),
        });
        let (shutdown, rx) = watch::channel(false);
        let task = tokio::spawn(crate::serve::accept_loop(listener, rx, move |req| {
            handle(req, Arc::clone(&state))
        }));
        Ok(Simulator {
            addr,
            served,
            shutdown,
            task,
        })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests answered so far (including fault answers).
    pub fn requests_served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.task.abort();
    }
}

type Body = BoxBody<Bytes, io::Error>;

async fn handle(req: Request<Incoming>, state: Arc<State>) -> Result<Response<Body>, Infallible> {
    let index = state.received.fetch_add(1, Ordering::SeqCst);
    let fault = faults::select(&state.config.faults, index).cloned();
    let read = read_request(req).await;
    let mut delay = state.config.latency;
    if let Some(FaultKind::Slow(extra)) = &fault {
        delay += *extra;
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut resp = match &read {
        Err((sim, message)) => route::reject(sim, &Rejection::bad_request(message.clone())),
        Ok(sim) => match fault.as_ref().and_then(|k| faults::error_response(k, sim)) {
            Some(r) => r,
            None => answer_request(sim),
        },
    };
    if fault == Some(FaultKind::MalformedJson) {
        resp = faults::malformed_json(resp);
    }
    resp.headers
        .insert(SIMULATOR_HEADER.to_string(), VERSION.to_string());
    state.served.fetch_add(1, Ordering::SeqCst);
    let drop_mid = fault == Some(FaultKind::DropMidStream);
    Ok(to_hyper(resp, drop_mid, state.config.chunk_delay))
}

async fn read_request(req: Request<Incoming>) -> Result<SimRequest, (SimRequest, String)> {
    let (parts, body) = req.into_parts();
    let headers = parts
        .headers
        .iter()
        .filter_map(|(k, v)| {
            let v = std::str::from_utf8(v.as_bytes()).ok()?;
            Some((k.as_str().to_ascii_lowercase(), v.to_string()))
        })
        .collect();
    let mut sim = SimRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parse_query(parts.uri.query().unwrap_or("")),
        headers,
        body: Vec::new(),
    };
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => {
            sim.body = collected.to_bytes().to_vec();
            Ok(sim)
        }
        Err(e) => Err((sim, format!("could not read the request body: {e}"))),
    }
}

fn parse_query(q: &str) -> std::collections::BTreeMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn to_hyper(resp: SimResponse, drop_mid: bool, chunk_delay: Duration) -> Response<Body> {
    let body = if drop_mid {
        stream_body(faults::before_drop(&resp.body), chunk_delay, true)
    } else {
        match resp.body {
            SimBody::Full(b) => Full::new(Bytes::from(b))
                .map_err(|never| match never {})
                .boxed(),
            SimBody::Chunks(c) => stream_body(c, chunk_delay, false),
        }
    };
    let mut builder = Response::builder().status(resp.status);
    for (k, v) in &resp.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    builder.body(body).unwrap_or_else(|_| {
        // Only reachable with an invalid header value: answer a bare 500 rather than panic.
        let mut r = Response::new(
            Full::new(Bytes::new())
                .map_err(|never| match never {})
                .boxed(),
        );
        *r.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}

/// Chunks sent one by one (`delay` between them); `fail` ends with an error so that hyper
/// aborts the connection mid-body.
fn stream_body(chunks: Vec<Vec<u8>>, delay: Duration, fail: bool) -> Body {
    let state = (chunks.into_iter(), 0usize, fail);
    let s = futures_util::stream::unfold(state, move |(mut it, i, fail)| async move {
        match it.next() {
            Some(c) => {
                if i > 0 && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(Frame::data(Bytes::from(c))), (it, i + 1, fail)))
            }
            None if fail => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                let err = io::Error::new(io::ErrorKind::ConnectionAborted, "simulated drop");
                Some((Err(err), (it, i + 1, false)))
            }
            None => None,
        }
    });
    BodyExt::boxed(StreamBody::new(s))
}
