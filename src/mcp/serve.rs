//! The MCP server a library's MCP routes take their tools from (client mode, issue 42 item 7):
//! Streamable HTTP on loopback, one endpoint per trial (`/mcp/N`), listing the case's tools as
//! written and answering each `tools/call` with the case's result for that tool (text,
//! `structuredContent` for a tool with an `outputSchema`, images, `isError`). It records what
//! the library did: each call with its arguments, and every fetch of a network `$ref` its tools
//! carry (the MCP conformance suite's canary: a client must never fetch one).
//!
//! Hand-written over the project's loopback server rather than rmcp's server: the endpoint must
//! serve schemas and results byte for byte as the case writes them (rmcp's typed `Tool` and
//! `Content` would re-shape them) and see every request (the canary's GETs on the same port),
//! and rmcp's server feature would build schemars and its derive macro for nothing tooltape
//! uses. It answers every POST with `application/json`, as the transport allows, without
//! sessions; a GET for an event stream is 405, as the transport allows a server that sends none.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};

use crate::loopback::{self, Options, Reply};
use crate::model::{ResultPart, Tool};

/// A `$ref` to a network document in a case's tool schema is written under this origin; the
/// server lists it under its own `/ref/N/` path, so a client that fetches it is seen doing so.
pub const REMOTE_REF: &str = "https://tooltape.invalid/";

/// The protocol versions the server speaks, newest first: it answers a client's own when it is
/// one of them, the newest otherwise (the client then decides whether it can go on).
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What one `tools/call` of a tool answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub tool: String,
    /// The MCP `CallToolResult` as sent.
    pub result: Value,
}

/// One `tools/call` the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenCall {
    pub tool: String,
    pub arguments: Value,
    /// The case had a result for it (an answer not yet given for that tool).
    pub answered: bool,
}

/// What the library did on one trial's endpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    /// `tools/list` requests.
    pub listed: usize,
    pub calls: Vec<SeenCall>,
    /// The paths of the network `$ref`s fetched (under the endpoint's `/ref/N/`).
    pub fetched: Vec<String>,
}

/// One trial's endpoint, as `open` made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    pub key: u64,
    /// `http://127.0.0.1:PORT/mcp/N`.
    pub url: String,
    /// What a schema's [`REMOTE_REF`] becomes: `http://127.0.0.1:PORT/ref/N/`.
    pub ref_base: String,
}

struct Endpoint {
    tools: Vec<Value>,
    answers: Vec<(Answer, bool)>,
    seen: Seen,
}

#[derive(Default)]
struct Registry {
    next: u64,
    open: HashMap<u64, Endpoint>,
}

/// The running server; it stops (listener and connections) when dropped.
pub struct McpServer {
    server: loopback::Server,
    registry: Arc<Mutex<Registry>>,
}

fn lock(r: &Mutex<Registry>) -> MutexGuard<'_, Registry> {
    r.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpServer {
    /// Starts on a free loopback port. Must be called inside a tokio runtime.
    pub async fn start() -> io::Result<McpServer> {
        let registry = Arc::new(Mutex::new(Registry::default()));
        let shared = Arc::clone(&registry);
        let options = Options {
            loopback_only: true,
            ..Options::default()
        };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let server = loopback::Server::start(addr, options, move |req| {
            let reply = handle(&shared, &req);
            async move { reply }
        })
        .await?;
        Ok(McpServer { server, registry })
    }

    /// A new endpoint's key and addresses; it answers once [`McpServer::open`] opens it.
    pub fn reserve(&self) -> Opened {
        let mut r = lock(&self.registry);
        r.next += 1;
        let key = r.next;
        let base = self.server.base_url();
        Opened {
            key,
            url: format!("{base}/mcp/{key}"),
            ref_base: format!("{base}/ref/{key}/"),
        }
    }

    /// Opens endpoint `key` (reserved), listing `tools` as given (their schemas as served: a
    /// network `$ref` already under the endpoint's own path, [`served_schema`]) and answering
    /// `answers`, each once, in order per tool.
    pub fn open(&self, key: u64, tools: &[Tool], answers: &[Answer]) {
        let tools = tools.iter().map(listed).collect();
        let answers = answers.iter().map(|a| (a.clone(), false)).collect();
        let seen = Seen::default();
        let endpoint = Endpoint {
            tools,
            answers,
            seen,
        };
        lock(&self.registry).open.insert(key, endpoint);
    }

    /// What the library did on endpoint `key` so far.
    pub fn seen(&self, key: u64) -> Seen {
        (lock(&self.registry).open.get(&key)).map_or_else(Seen::default, |e| e.seen.clone())
    }

    /// Ends endpoint `key`: later requests to it are 404.
    pub fn close(&self, key: u64) {
        lock(&self.registry).open.remove(&key);
    }
}

/// `schema` as the server lists it: each `$ref` under [`REMOTE_REF`] moved under `ref_base`.
pub fn served_schema(schema: &Value, ref_base: &str) -> Value {
    match schema {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("$ref", Value::String(s)) => match s.strip_prefix(REMOTE_REF) {
                            Some(rest) => Value::String(format!("{ref_base}{rest}")),
                            None => v.clone(),
                        },
                        _ => served_schema(v, ref_base),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| served_schema(v, ref_base)).collect()),
        other => other.clone(),
    }
}

/// A tool as `tools/list` sends it.
fn listed(t: &Tool) -> Value {
    let mut tool = json!({"name": t.name});
    if let Some(d) = &t.description {
        tool["description"] = json!(d);
    }
    tool["inputSchema"] = t.parameters.clone();
    if let Some(o) = &t.output_schema {
        tool["outputSchema"] = o.clone();
    }
    tool
}

/// The `CallToolResult` for a result with `content` (or `parts`, when given as parts) and the
/// error flag; for a tool with an `outputSchema`, a text that is a JSON object is also its
/// `structuredContent` (the text kept beside it, as the specification asks of a server). `None`
/// for a part MCP has no content for (an image by URL).
pub fn call_result(
    content: &str,
    parts: &[ResultPart],
    is_error: bool,
    tool: Option<&Tool>,
) -> Option<Value> {
    let blocks: Option<Vec<Value>> = if parts.is_empty() {
        Some(vec![json!({"type": "text", "text": content})])
    } else {
        parts
            .iter()
            .map(|p| match p {
                ResultPart::Text { text } => Some(json!({"type": "text", "text": text})),
                ResultPart::Image { media_type, data } => {
                    Some(json!({"type": "image", "data": data, "mimeType": media_type}))
                }
                ResultPart::ImageUrl { .. } => None,
            })
            .collect()
    };
    let mut result = json!({"content": blocks?});
    if is_error {
        result["isError"] = json!(true);
    }
    if tool.is_some_and(|t| t.output_schema.is_some())
        && parts.is_empty()
        && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(content)
    {
        result["structuredContent"] = v;
    }
    Some(result)
}

fn reply(status: u16, body: Option<&Value>) -> Reply {
    let mut headers = Vec::new();
    let bytes = match body {
        Some(b) => {
            headers.push(("content-type".to_string(), "application/json".to_string()));
            serde_json::to_vec(b).unwrap_or_default()
        }
        None => Vec::new(),
    };
    if status == 405 {
        headers.push(("allow".to_string(), "POST".to_string()));
    }
    Reply {
        status,
        headers,
        body: loopback::full(bytes),
    }
}

/// The endpoint's key and the rest of the path after `/mcp/N` or `/ref/N`.
fn endpoint_of<'a>(path: &'a str, prefix: &str) -> Option<(u64, &'a str)> {
    let rest = path.strip_prefix(prefix)?;
    let (key, tail) = rest.split_once('/').unwrap_or((rest, ""));
    Some((key.parse().ok()?, tail))
}

fn handle(registry: &Mutex<Registry>, req: &loopback::Request) -> Reply {
    if let Some((key, tail)) = endpoint_of(&req.path, "/ref/") {
        let mut r = lock(registry);
        let Some(e) = r.open.get_mut(&key) else {
            return reply(404, None);
        };
        e.seen.fetched.push(tail.to_string());
        // Any schema will do: the client is already seen fetching it.
        return reply(200, Some(&json!({"type": "string"})));
    }
    let Some((key, "")) = endpoint_of(&req.path, "/mcp/") else {
        return reply(404, None);
    };
    if !lock(registry).open.contains_key(&key) {
        return reply(404, None);
    }
    if req.method != "POST" {
        return reply(405, None);
    }
    let parsed = (req.body.as_ref().ok()).and_then(|b| serde_json::from_slice::<Value>(b).ok());
    let Some(message) = parsed else {
        let error = rpc_error(&Value::Null, -32700, "parse error: the body is not JSON");
        return reply(400, Some(&error));
    };
    let mut r = lock(registry);
    let Some(e) = r.open.get_mut(&key) else {
        return reply(404, None);
    };
    match message {
        Value::Array(batch) => {
            let answers: Vec<Value> = batch.iter().filter_map(|m| answer(e, m)).collect();
            match answers.is_empty() {
                true => reply(202, None),
                false => reply(200, Some(&Value::Array(answers))),
            }
        }
        one => match answer(e, &one) {
            Some(a) => reply(200, Some(&a)),
            None => reply(202, None),
        },
    }
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The answer to one JSON-RPC message: `None` for a notification or a client's response.
fn answer(e: &mut Endpoint, m: &Value) -> Option<Value> {
    let id = m.get("id")?;
    let method = m.get("method").and_then(Value::as_str)?;
    let params = m.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .filter(|v| VERSIONS.contains(v))
                .unwrap_or(VERSIONS[0]);
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": "tooltape", "version": env!("CARGO_PKG_VERSION")},
            })
        }
        "ping" => json!({}),
        "tools/list" => {
            e.seen.listed += 1;
            json!({"tools": e.tools})
        }
        "tools/call" => call(e, &params),
        other => {
            return Some(rpc_error(id, -32601, &format!("method not found: {other}")));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A `tools/call`: the case's next unused result for that tool, or an error result saying the
/// case has none (the library called a tool the model did not, or called it twice).
fn call(e: &mut Endpoint, params: &Value) -> Value {
    let tool = (params.get("name").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string();
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    let next = (e.answers.iter_mut()).find(|(a, used)| !used && a.tool == tool);
    let result = next.map(|(a, used)| {
        *used = true;
        a.result.clone()
    });
    e.seen.calls.push(SeenCall {
        tool: tool.clone(),
        arguments,
        answered: result.is_some(),
    });
    result.unwrap_or_else(|| {
        json!({
            "content": [{"type": "text", "text": format!("tooltape: no result for this call of {tool} in the case")}],
            "isError": true,
        })
    })
}
