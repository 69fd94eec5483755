//! The provider simulator: a pure core (`answer`) that answers requests like the real APIs, and a
//! loopback HTTP server (`Simulator`) around it. Cassettes it produces are marked synthetic.
//!
//! Layout: `route` (paths → API), `decide` (the deterministic model), `args` (arguments from a
//! schema), one module per wire format, `errors` (error envelopes), `faults` (injected faults),
//! `wire` (ids, fragments, framing), `server` (the only module doing IO).

mod anthropic;
mod args;
mod decide;
mod errors;
mod faults;
mod gemini;
mod openai_chat;
mod openai_responses;
mod route;
mod server;
mod text_protocol;
mod wire;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::scenario::Scenario;

pub use faults::{Fault, FaultKind, When};
pub use server::{SimConfig, Simulator, serve_forever};

pub use args::generate as generate_arguments;

/// The crate version, sent in [`SIMULATOR_HEADER`] on every answer.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Response header naming the simulator: recorders mark cassettes with it as synthetic.
pub const SIMULATOR_HEADER: &str = "x-tooltape-simulator";
/// Request header carrying the trial's [`Scenario`] as compact JSON.
pub const SCENARIO_HEADER: &str = "x-tooltape-scenario";

/// One HTTP request as the simulator sees it. Header names are lower-case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimRequest {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl SimRequest {
    /// A POST with a JSON body and no headers (tests add the key header they need).
    pub fn post(path: &str, body: &Value) -> SimRequest {
        let mut headers = BTreeMap::new();
        headers.insert("content-type".to_string(), "application/json".to_string());
        SimRequest {
            method: "POST".into(),
            path: path.into(),
            query: BTreeMap::new(),
            headers,
            body: body.to_string().into_bytes(),
        }
    }

    /// Adds a header (name lower-cased); builder style.
    pub fn with_header(mut self, name: &str, value: &str) -> SimRequest {
        self.headers
            .insert(name.to_ascii_lowercase(), value.to_string());
        self
    }

    /// Adds a query parameter; builder style.
    pub fn with_query(mut self, name: &str, value: &str) -> SimRequest {
        self.query.insert(name.to_string(), value.to_string());
        self
    }
}

/// The simulator's answer. Header names are lower-case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: SimBody,
}

/// A whole body, or a stream: each chunk is one SSE event or one JSON-array element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimBody {
    Full(Vec<u8>),
    Chunks(Vec<Vec<u8>>),
}

impl SimBody {
    /// All bytes as they go out on the wire, concatenated.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            SimBody::Full(b) => b.clone(),
            SimBody::Chunks(c) => c.concat(),
        }
    }
}

impl SimResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The body parsed as one JSON value (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body.bytes()).unwrap_or(Value::Null)
    }
}

/// Answers one request under `scenario`: validation errors, the scenario's error, or the
/// simulated model's completion in the API's wire format. Pure and deterministic.
pub fn answer(req: &SimRequest, scenario: &Scenario) -> SimResponse {
    let mut resp = route::answer(req, scenario);
    resp.headers
        .insert(SIMULATOR_HEADER.to_string(), VERSION.to_string());
    resp
}

/// Like [`answer`], with the scenario read from the request's [`SCENARIO_HEADER`] (absent →
/// default; invalid → 400 in the API's error envelope naming the problem).
pub fn answer_request(req: &SimRequest) -> SimResponse {
    match scenario_from_headers(&req.headers) {
        Ok(scenario) => answer(req, &scenario),
        Err(message) => {
            let mut resp = route::reject(req, &errors::Rejection::bad_request(message));
            resp.headers
                .insert(SIMULATOR_HEADER.to_string(), VERSION.to_string());
            resp
        }
    }
}

/// Reads the scenario header: absent → default; invalid → a message naming the problem.
pub fn scenario_from_headers(headers: &BTreeMap<String, String>) -> Result<Scenario, String> {
    match headers.get(SCENARIO_HEADER) {
        None => Ok(Scenario::default()),
        Some(raw) => {
            serde_json::from_str(raw).map_err(|e| format!("invalid {SCENARIO_HEADER} header: {e}"))
        }
    }
}
