//! One HTTP request and answer as the simulator sees them (plain values, no IO), and the
//! headers by which it identifies itself and learns a trial's scenario.

use std::collections::BTreeMap;

use serde_json::Value;

/// The crate version, sent in [`SIMULATOR_HEADER`] on every answer.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Response header naming the simulator: recorders mark cassettes with it as synthetic.
pub(crate) const SIMULATOR_HEADER: &str = "x-tooltape-simulator";
/// Request header carrying the trial's [`Scenario`](crate::scenario::Scenario) as compact JSON.
pub(crate) const SCENARIO_HEADER: &str = "x-tooltape-scenario";

/// One HTTP request as the simulator sees it. Header names are lower-case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SimRequest {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl SimRequest {
    /// A POST with a JSON body, as [`HttpRequest::post`](crate::http::HttpRequest::post) makes
    /// one (no key header: tests add the one they need).
    pub(crate) fn post(path: &str, body: &Value) -> SimRequest {
        let http = crate::http::HttpRequest::post(path, Value::Null);
        SimRequest {
            method: http.method,
            path: http.path,
            query: http.query,
            headers: http.headers,
            body: body.to_string().into_bytes(),
        }
    }

    /// Adds a header (name lower-cased); builder style.
    #[cfg(test)]
    pub(crate) fn with_header(mut self, name: &str, value: &str) -> SimRequest {
        self.headers
            .insert(name.to_ascii_lowercase(), value.to_string());
        self
    }

    /// Adds a query parameter; builder style.
    #[cfg(test)]
    pub(crate) fn with_query(mut self, name: &str, value: &str) -> SimRequest {
        self.query.insert(name.to_string(), value.to_string());
        self
    }
}

/// The simulator's answer. Header names are lower-case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SimResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: SimBody,
}

/// A whole body, or a stream: each chunk is one SSE event or one JSON-array element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SimBody {
    Full(Vec<u8>),
    Chunks(Vec<Vec<u8>>),
}

impl SimBody {
    /// All bytes as they go out on the wire, concatenated.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        match self {
            SimBody::Full(b) => b.clone(),
            SimBody::Chunks(c) => c.concat(),
        }
    }
}

impl SimResponse {
    #[cfg(test)]
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The body parsed as one JSON value (`Value::Null` when it is not JSON).
    #[cfg(test)]
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body.bytes()).unwrap_or(Value::Null)
    }
}

/// What renderers need besides the decision: the request seed (ids) and the parsed body.
pub(crate) struct Ctx<'a> {
    pub seed: u64,
    pub body: &'a Value,
    pub input_tokens: u64,
}
