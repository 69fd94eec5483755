//! The gateway's upstream: the simulator's pure core served on `127.0.0.1`, at the real paths of
//! the four APIs, recording exactly what the gateway sent and what it was answered. Requests are
//! attributed to the trial whose prompt they carry (one trial per prompt in flight at a time);
//! a Responses request continuing a stored response carries it in what is stored, and a request
//! carrying no prompt at all, by the one trial whose tool results it carries (class 22).
//! Each exchange also records how long the upstream held it (request received → answer written),
//! the time the gateway's added latency is measured against.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, SizeHint};
use serde_json::{Value, json};

use crate::loopback::{self, Body, Options, Reply};
use crate::scenario::Scenario;
use crate::simulate::{SimBody, SimRequest, SimResponse, Store};

/// One request the gateway sent upstream and the answer it got, as bytes on the wire.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub(crate) request: SimRequest,
    pub status: u16,
    pub headers: std::collections::BTreeMap<String, String>,
    /// The answer's bytes; for streams, each chunk as it was written.
    pub chunks: Vec<Vec<u8>>,
    pub streamed: bool,
    /// Request fully received → answer fully handed to the connection; set when the answer's
    /// body ends (before the gateway can have read all of it).
    held: Arc<OnceLock<Duration>>,
    /// The system under test's own exchange with the caller ([`Exchange::direct`]): no one
    /// stands between, so what it refuses is its own refusal.
    pub(crate) direct: bool,
}

impl Exchange {
    /// A POST of `body` to `path` answered `status` with `answer` in one chunk (unit tests).
    #[cfg(test)]
    pub(crate) fn answered(path: &str, body: &Value, status: u16, answer: &Value) -> Exchange {
        Exchange {
            request: SimRequest::post(path, body),
            status,
            headers: Default::default(),
            chunks: vec![answer.to_string().into_bytes()],
            streamed: false,
            held: Arc::default(),
            direct: false,
        }
    }

    /// A request a system under test answered itself (a model server: it has no upstream, so its
    /// own exchange with the caller is the one read and judged), as sent and as answered.
    pub(crate) fn direct(
        request: &crate::http::HttpRequest,
        response: &crate::http::HttpResponse,
        streamed: bool,
    ) -> Exchange {
        let mut sent = SimRequest::post(&request.path, &request.body);
        sent.method.clone_from(&request.method);
        sent.query.clone_from(&request.query);
        sent.headers.clone_from(&request.headers);
        Exchange {
            request: sent,
            status: response.status,
            headers: response.headers.clone(),
            chunks: vec![response.body.clone()],
            streamed,
            held: Arc::new(OnceLock::new()),
            direct: true,
        }
    }

    pub(crate) fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    /// How long the upstream held this exchange; `None` while its answer is still being written.
    pub(crate) fn held(&self) -> Option<Duration> {
        self.held.get().copied()
    }

    /// The trial record's view of it: the request sent upstream (method, path, query, JSON body)
    /// and upstream's answer as text.
    pub(crate) fn record(&self) -> (serde_json::Value, String) {
        let body: serde_json::Value =
            serde_json::from_slice(&self.request.body).unwrap_or(serde_json::Value::Null);
        let request = serde_json::json!({
            "method": self.request.method, "path": self.request.path,
            "query": self.request.query, "body": body
        });
        (request, String::from_utf8_lossy(&self.body()).into_owned())
    }
}

/// An answer body that notes when it ends: the poll that returns no more frames, or the first
/// time it reports its end (a full body ends with its only frame).
struct Timed {
    inner: Body,
    received: Instant,
    held: Arc<OnceLock<Duration>>,
}

impl Timed {
    fn mark(&self) {
        let _ = self.held.set(self.received.elapsed());
    }
}

impl hyper::body::Body for Timed {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            self.mark();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let end = self.inner.is_end_stream();
        if end {
            self.mark();
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

struct Claim {
    prompt: String,
    /// Texts that claim a request carrying no prompt when no other claim has them.
    results: Vec<String>,
    scenario: Scenario,
    exchanges: Vec<Exchange>,
}

#[derive(Default)]
struct Claims {
    open: Vec<Claim>,
    /// Requests no trial claimed (startup probes, model listings).
    unclaimed: Vec<String>,
}

/// The recording upstream; stops when dropped.
pub struct Upstream {
    server: loopback::Server,
    claims: Arc<Mutex<Claims>>,
}

impl Upstream {
    /// Starts on `127.0.0.1` at any free port.
    pub async fn start() -> io::Result<Upstream> {
        Upstream::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
    }

    /// Starts on `addr`: the fixed address a gateway configured from a file already points at
    /// (`tooltape gateway --upstream-listen`).
    pub async fn start_on(addr: SocketAddr) -> io::Result<Upstream> {
        let claims = Arc::new(Mutex::new(Claims::default()));
        let shared = Arc::clone(&claims);
        let kept = Arc::new(Store::default());
        let server = loopback::Server::start(addr, Options::default(), move |req| {
            handle(req, Arc::clone(&shared), Arc::clone(&kept))
        })
        .await?;
        Ok(Upstream { server, claims })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Claims requests carrying `prompt` for one trial, answered under `scenario`.
    pub fn open(&self, prompt: &str, scenario: &Scenario) {
        self.open_with(prompt, scenario, &[]);
    }

    /// Like [`Upstream::open`]; a request carrying no claimed prompt but some of `results`
    /// (and no other claim's) is this trial's too.
    pub(crate) fn open_with(&self, prompt: &str, scenario: &Scenario, results: &[String]) {
        let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        claims.open.retain(|s| s.prompt != prompt);
        claims.open.push(Claim {
            prompt: prompt.to_string(),
            results: results.to_vec(),
            scenario: scenario.clone(),
            exchanges: Vec::new(),
        });
    }

    /// Ends the claim and returns what was recorded for it.
    pub(crate) fn close(&self, prompt: &str) -> Vec<Exchange> {
        let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        match claims.open.iter().position(|s| s.prompt == prompt) {
            Some(i) => claims.open.remove(i).exchanges,
            None => Vec::new(),
        }
    }

    /// Method and path of requests no trial claimed.
    pub fn unclaimed(&self) -> Vec<String> {
        let claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        claims.unclaimed.clone()
    }
}

/// The one claim whose tool results the request carries (none when several have them).
fn by_results<'a>(open: &'a [Claim], parsed: &Value) -> Option<&'a Claim> {
    let mut having = open
        .iter()
        .filter(|s| s.results.iter().any(|r| carries_result(parsed, r)));
    let first = having.next()?;
    having.next().is_none().then_some(first)
}

/// True when the body carries `result` as text, or as the JSON value it is (a Gemini
/// `functionResponse.response`).
fn carries_result(v: &Value, result: &str) -> bool {
    fn holds(v: &Value, value: &Value) -> bool {
        v == value
            || match v {
                Value::Array(a) => a.iter().any(|x| holds(x, value)),
                Value::Object(o) => o.values().any(|x| holds(x, value)),
                _ => false,
            }
    }
    carries(v, result)
        || serde_json::from_str::<Value>(result).is_ok_and(|r| r.is_object() && holds(v, &r))
}

/// True when some string in the JSON body contains `prompt`.
pub(crate) fn carries(v: &Value, prompt: &str) -> bool {
    match v {
        Value::String(s) => s.contains(prompt),
        Value::Array(a) => a.iter().any(|x| carries(x, prompt)),
        Value::Object(o) => o.values().any(|x| carries(x, prompt)),
        _ => false,
    }
}

/// Paths the simulator does not route itself: Gemini under `/v1/models/…` (current Google
/// SDKs), and the model listings gateways probe at startup.
fn answer_extra(req: &SimRequest) -> Option<SimResponse> {
    let json_resp = |v: Value| SimResponse {
        status: 200,
        headers: [("content-type".to_string(), "application/json".to_string())].into(),
        body: SimBody::Full(v.to_string().into_bytes()),
    };
    let get = req.method.eq_ignore_ascii_case("GET");
    match req.path.as_str() {
        "/v1/models" | "/models" if get => Some(json_resp(json!({
            "object": "list",
            "data": [{"id": "gpt-4.1-mini", "object": "model", "created": 0, "owned_by": "tooltape"}]
        }))),
        "/v1beta/models" if get => Some(json_resp(
            json!({"models": [{"name": "models/gemini-3.8-flash"}]}),
        )),
        p if get && (p.starts_with("/v1/models/") || p.starts_with("/models/")) => {
            let id = p.rsplit('/').next().unwrap_or("");
            Some(json_resp(
                json!({"id": id, "object": "model", "created": 0, "owned_by": "tooltape"}),
            ))
        }
        _ => None,
    }
}

fn simulate(req: &SimRequest, scenario: &Scenario, kept: &Store) -> SimResponse {
    if let Some(r) = answer_extra(req) {
        return r;
    }
    if let Some(rest) = req.path.strip_prefix("/v1/models/")
        && rest.contains(':')
    {
        let mut moved = req.clone();
        moved.path = format!("/v1beta/models/{rest}");
        return crate::simulate::answer_kept(&moved, scenario, Some(kept));
    }
    crate::simulate::answer_kept(req, scenario, Some(kept))
}

async fn handle(req: loopback::Request, claims: Arc<Mutex<Claims>>, kept: Arc<Store>) -> Reply {
    // A body not read whole is answered as the simulator answers it; it carries no prompt, so
    // it stays unclaimed.
    let (sim, refused) = crate::simulate::sim_request(req);
    let received = Instant::now();
    let held = Arc::new(OnceLock::new());
    let parsed: Value = serde_json::from_slice(&sim.body).unwrap_or(Value::Null);
    // A Responses request continuing a stored response carries its prompt in what is kept.
    let earlier = crate::simulate::previous_id(&parsed).and_then(|id| kept.get(id));
    let scenario = {
        let claims = claims.lock().unwrap_or_else(PoisonError::into_inner);
        let by_prompt = claims.open.iter().find(|s| {
            carries(&parsed, &s.prompt)
                || earlier
                    .as_ref()
                    .is_some_and(|e| e.iter().any(|v| carries(v, &s.prompt)))
        });
        by_prompt
            .or_else(|| by_results(&claims.open, &parsed))
            .map(|s| (s.prompt.clone(), s.scenario.clone()))
    };
    let resp = refused.unwrap_or_else(|| {
        simulate(
            &sim,
            scenario.as_ref().map_or(&Scenario::default(), |(_, s)| s),
            &kept,
        )
    });
    let (chunks, streamed) = match &resp.body {
        SimBody::Full(b) => (vec![b.clone()], false),
        SimBody::Chunks(c) => (c.clone(), true),
    };
    {
        let mut claims = claims.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = scenario
            .as_ref()
            .and_then(|(p, _)| claims.open.iter_mut().find(|s| &s.prompt == p));
        match slot {
            Some(slot) => slot.exchanges.push(Exchange {
                request: sim.clone(),
                status: resp.status,
                headers: resp.headers.clone(),
                chunks: chunks.clone(),
                streamed,
                held: Arc::clone(&held),
                direct: false,
            }),
            None => {
                if claims.unclaimed.len() < 1000 {
                    claims
                        .unclaimed
                        .push(format!("{} {}", sim.method, sim.path));
                }
            }
        }
    }
    let mut reply = crate::simulate::sim_reply(resp, false, Duration::ZERO);
    reply.body = Timed {
        inner: reply.body,
        received,
        held,
    }
    .boxed_unsync();
    reply
}
