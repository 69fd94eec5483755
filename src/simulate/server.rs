//! The simulator's server (the only IO in the simulator): a `loopback::Server` on `127.0.0.1`
//! only, answering from the pure core with injected faults, latency and chunk-by-chunk
//! streaming; and the two conversions between a loopback request or reply and the simulator's
//! values, which gateway mode's recording upstream uses too.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::answer::answer_request;
use super::errors::Rejection;
use super::exchange::{SIMULATOR_HEADER, SimBody, SimRequest, SimResponse, VERSION};
use super::faults::{self, Fault, FaultKind};
use super::route;
use super::store::Store;
use crate::loopback::{self, Options, Reply};

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
    /// The Responses conversations this simulator answered.
    kept: Store,
}

/// A running simulator on `127.0.0.1`; it stops (listener and open connections) when dropped.
pub struct Simulator {
    server: loopback::Server,
    served: Arc<AtomicUsize>,
}

impl Simulator {
    /// Starts on a free loopback port. Must be called inside a tokio runtime.
    pub async fn start(config: SimConfig) -> io::Result<Simulator> {
        Simulator::start_on(0, config).await
    }

    /// Starts on `127.0.0.1:port` (`0`: any free port). Never binds another address.
    pub async fn start_on(port: u16, config: SimConfig) -> io::Result<Simulator> {
        let served = Arc::new(AtomicUsize::new(0));
        let state = Arc::new(State {
            config,
            received: AtomicUsize::new(0),
            served: Arc::clone(&served),
            kept: Store::default(),
        });
        let options = Options {
            loopback_only: true,
            ..Options::default()
        };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let server =
            loopback::Server::start(addr, options, move |req| handle(req, Arc::clone(&state)))
                .await?;
        Ok(Simulator { server, served })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Requests answered so far (including fault answers).
    pub fn requests_served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

async fn handle(req: loopback::Request, state: Arc<State>) -> Reply {
    let index = state.received.fetch_add(1, Ordering::SeqCst);
    let fault = faults::select(&state.config.faults, index).cloned();
    let (sim, refused) = sim_request(req);
    let mut delay = state.config.latency;
    if let Some(FaultKind::Slow(extra)) = &fault {
        delay += *extra;
    }
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut resp = match refused {
        Some(r) => r,
        // As model servers answer it (llama.cpp, vLLM): the simulator stands in for one in
        // server mode's own tests.
        None if sim.method == "GET" && sim.path == "/health" => {
            super::wire::json_response(200, &serde_json::json!({"status": "ok"}), false)
        }
        None => match fault.as_ref().and_then(|k| faults::error_response(k, &sim)) {
            Some(r) => r,
            None => answer_request(&sim, Some(&state.kept)),
        },
    };
    if fault == Some(FaultKind::MalformedJson) {
        resp = faults::malformed_json(resp);
    }
    resp.headers
        .insert(SIMULATOR_HEADER.to_string(), VERSION.to_string());
    state.served.fetch_add(1, Ordering::SeqCst);
    let drop_mid = fault == Some(FaultKind::DropMidStream);
    sim_reply(resp, drop_mid, state.config.chunk_delay)
}

/// A request a loopback server read, as the simulator sees it, and the answer of the API it was
/// addressed to when its body was not read whole (413, 408 or 400 in the API's envelope).
pub(crate) fn sim_request(req: loopback::Request) -> (SimRequest, Option<SimResponse>) {
    let mut sim = SimRequest {
        method: req.method,
        path: req.path,
        query: req.query,
        headers: req.headers,
        body: Vec::new(),
    };
    match req.body {
        Ok(bytes) => {
            sim.body = bytes.to_vec();
            (sim, None)
        }
        Err(e) => {
            let refused = route::reject(&sim, &Rejection::new(e.status(), e.to_string()));
            (sim, Some(refused))
        }
    }
}

/// The answer as a loopback reply: a stream's chunks `chunk_delay` apart; `cut`: the connection
/// aborted partway through the body (`faults::before_drop`).
pub(crate) fn sim_reply(resp: SimResponse, cut: bool, chunk_delay: Duration) -> Reply {
    let SimResponse {
        status,
        headers,
        body,
    } = resp;
    let body = if cut {
        loopback::chunked(faults::before_drop(&body), chunk_delay, true)
    } else {
        match body {
            SimBody::Full(b) => loopback::full(b),
            SimBody::Chunks(c) => loopback::chunked(c, chunk_delay, false),
        }
    };
    Reply {
        status,
        headers: headers.into_iter().collect(),
        body,
    }
}
