//! Unit tests of the proxy, by risk: the config and its errors (`config`), a request's reading
//! and decoding up to the route, with every refusal in the client's envelope (`decode`), the
//! relay of a streamed answer (`relay`), buffered answers (`answer`), the reasoning kept
//! between rounds (`reasoning`), the Responses conversations kept (`conversations`) and the
//! plain-HTTP upstream pool (`h1`).

mod answer;
mod config;
mod conversations;
mod decode;
mod h1;
mod reasoning;
mod relay;

use std::path::Path;

use bytes::Bytes;
use serde_json::Value;

use super::answer::{Answer, Headers};
use super::config::ProxyConfig;
use crate::loopback::{BodyError, Request, parse_query};

/// Three routes to a closed port (nothing in these tests reaches them) and one to `gemini`.
fn config_with(gemini: &str) -> ProxyConfig {
    let text = format!(
        r#"
[[route]]
model = "to-chat"
provider = "openai-chat"
base_url = "http://127.0.0.1:9"
strict = "off"

[[route]]
model = "to-anthropic"
provider = "anthropic"
base_url = "http://127.0.0.1:9"

[[route]]
model = "to-gemini"
provider = "gemini"
base_url = "{gemini}"
key = "AIza-test"
"#
    );
    ProxyConfig::parse(Path::new("proxy.toml"), &text).unwrap()
}

fn config() -> ProxyConfig {
    config_with("http://127.0.0.1:9")
}

/// A request as the loopback server hands it over: `target` is the path and query as sent.
fn request(method: &str, target: &str, body: Result<&[u8], BodyError>) -> Request {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Request {
        method: method.into(),
        path: path.into(),
        query: parse_query(query),
        headers: Default::default(),
        body: body.map(Bytes::copy_from_slice),
    }
}

fn post(target: &str, body: &Value) -> Request {
    request("POST", target, Ok(body.to_string().as_bytes()))
}

/// A whole answer's status, headers and JSON body (panics on a stream).
fn whole(answer: Answer) -> (u16, Headers, Value) {
    match answer {
        Answer::Full {
            status,
            headers,
            body,
        } => {
            let v = serde_json::from_slice(&body)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body)));
            (status, headers, v)
        }
        Answer::Stream { .. } => panic!("a stream, not a whole answer"),
    }
}

fn header<'h>(headers: &'h Headers, name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}
