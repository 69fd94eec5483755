//! Replay: a cassette's interactions served in order by a `wiremock` MockServer on loopback,
//! and the comparison of what the client really sent with what was recorded.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::cassette::Cassette;
use crate::run::Endpoint;

/// A request as the replay server received it over the wire.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Vec<u8>,
}

struct Responder {
    /// One ready response per recorded interaction, built once when the server starts.
    templates: Vec<ResponseTemplate>,
    received: Arc<Mutex<Vec<Received>>>,
}

/// The recorded response as the server sends it: status, headers, body bytes.
pub(crate) fn template(r: &crate::cassette::StoredResponse) -> ResponseTemplate {
    let content_type = r.headers.get("content-type").cloned().unwrap_or_else(|| {
        if r.stream.is_some() {
            "text/event-stream"
        } else {
            "application/json"
        }
        .to_string()
    });
    let mut t = ResponseTemplate::new(r.status).set_body_raw(r.body_bytes(), &content_type);
    for (k, v) in &r.headers {
        if k != "content-type" && k != "content-length" && k != "transfer-encoding" {
            t = t.insert_header(k.as_str(), v.as_str());
        }
    }
    t
}

impl Respond for Responder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let mut received = self
            .received
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let index = received.len();
        received.push(Received {
            method: req.method.to_string(),
            path: req.url.path().to_string(),
            query: req
                .url
                .query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            body: req.body.clone(),
        });
        match self.templates.get(index) {
            Some(t) => t.clone(),
            None => ResponseTemplate::new(599).set_body_string(format!(
                "tooltape replay: request {} has no recorded interaction (the cassette holds {})",
                index + 1,
                self.templates.len()
            )),
        }
    }
}

/// A running replay server for one cassette.
pub struct ReplayServer {
    server: MockServer,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ReplayServer {
    /// Starts a loopback server that answers the cassette's interactions in order.
    pub async fn start(cassette: &Cassette) -> ReplayServer {
        // Our responder keeps its own log of what arrived: wiremock's copy would be a second one.
        let server = MockServer::builder()
            .disable_request_recording()
            .start()
            .await;
        let received = Arc::new(Mutex::new(Vec::new()));
        Mock::given(wiremock::matchers::any())
            .respond_with(Responder {
                templates: cassette
                    .interactions
                    .iter()
                    .map(|it| template(&it.response))
                    .collect(),
                received: Arc::clone(&received),
            })
            .mount(&server)
            .await;
        ReplayServer { server, received }
    }

    /// Stops the server. wiremock returns a `MockServer` to its pool on drop, blocking on a
    /// tokio lock; in a task whose cooperative budget is spent (eight replays joined in one
    /// task, on a loaded machine) that lock keeps answering "not ready" and the drop spins
    /// forever. Dropped here with the budget lifted, it always completes.
    pub async fn close(self) {
        tokio::task::unconstrained(async move { drop(self) }).await;
    }

    /// Where to send requests: the server's own loopback address, no key.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            base_url: self.server.uri(),
            key: None,
            extra_headers: Vec::new(),
        }
    }

    /// Takes what was received so far and forgets it (for `--repeat`).
    pub fn take_received(&self) -> Vec<Received> {
        std::mem::take(
            &mut *self
                .received
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// How a replayed trial's requests differ from its cassette.
#[derive(Clone, Debug, PartialEq)]
pub enum Mismatch {
    /// Request `index` (0-based) differs: `what` names the part, `diff` is a readable diff.
    Request {
        index: usize,
        what: String,
        diff: String,
    },
    /// Recorded interactions from `first_unused` on were never requested.
    Unused {
        first_unused: usize,
        recorded: usize,
    },
    /// More requests were made than the cassette holds.
    Extra { recorded: usize, made: usize },
}

/// Compares what the server received with the recorded requests, in order. Secret query
/// parameters (`key`) are ignored and the received body is redacted with the same table as the
/// cassette (`crate::redact`) before comparing; headers are not compared.
pub(crate) fn verify(cassette: &Cassette, received: &[Received]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (i, (rec, got)) in cassette.interactions.iter().zip(received).enumerate() {
        let want = &rec.request;
        if want.method != got.method || want.path != got.path {
            out.push(Mismatch::Request {
                index: i,
                what: "method or path".into(),
                diff: format!(
                    "- {} {}\n+ {} {}",
                    want.method, want.path, got.method, got.path
                ),
            });
            continue;
        }
        let got_query: Vec<(String, String)> = got
            .query
            .iter()
            .filter(|(k, _)| !crate::redact::is_secret_query(k))
            .cloned()
            .collect();
        let want_query: Vec<(String, String)> = want
            .query
            .iter()
            .filter(|(k, _)| !crate::redact::is_secret_query(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut gq = got_query.clone();
        gq.sort();
        if gq != want_query {
            out.push(Mismatch::Request {
                index: i,
                what: "query".into(),
                diff: format!("- {want_query:?}\n+ {got_query:?}"),
            });
        }
        let mut got_body: Value = serde_json::from_slice(&got.body).unwrap_or(Value::Null);
        crate::redact::redact_json(&mut got_body, &crate::redact::Secrets::default());
        if got_body != want.body {
            out.push(Mismatch::Request {
                index: i,
                what: "JSON body".into(),
                diff: json_diff(&want.body, &got_body),
            });
        }
    }
    if received.len() < cassette.interactions.len() {
        out.push(Mismatch::Unused {
            first_unused: received.len(),
            recorded: cassette.interactions.len(),
        });
    } else if received.len() > cassette.interactions.len() {
        out.push(Mismatch::Extra {
            recorded: cassette.interactions.len(),
            made: received.len(),
        });
    }
    out
}

/// A unified line diff of two JSON values, pretty-printed (`-` recorded, `+` produced).
pub(crate) fn json_diff(recorded: &Value, produced: &Value) -> String {
    let a = serde_json::to_string_pretty(recorded).unwrap_or_default();
    let b = serde_json::to_string_pretty(produced).unwrap_or_default();
    // Bounded: two very different bodies get a coarser diff, never minutes of search.
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header("recorded", "produced")
        .to_string()
}
