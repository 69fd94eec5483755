//! Plain HTTP request/response values passed between encoders, transports and decoders (no IO here).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request as an encoder produces it: relative path, no host, no credentials.
///
/// Credentials are added by the transport (`providers::auth_headers`), so an encoder's output can be
/// compared with a cassette and snapshotted as it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HttpRequest {
    pub method: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

impl HttpRequest {
    pub fn post(path: impl Into<String>, body: Value) -> HttpRequest {
        let mut headers = BTreeMap::new();
        headers.insert("content-type".to_string(), "application/json".to_string());
        HttpRequest {
            method: "POST".into(),
            path: path.into(),
            query: BTreeMap::new(),
            headers,
            body,
        }
    }

    /// Path plus query string, as sent on the wire.
    pub fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            return self.path.clone();
        }
        let q: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}?{}", self.path, q.join("&"))
    }
}

/// A response as a decoder consumes it: status, lower-cased headers, raw body bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}
