//! The reference driver's MCP client (client mode's MCP routes): the tools listed from the
//! trial's server, each round's results called through it; and the mutants that get it wrong
//! (tools not listed, results not called, `null` arguments dropped, network `$ref`s fetched).

use serde_json::Value;

use super::Mutant;
use crate::client::protocol::DriverResult;
use crate::engine::HandedError;
use crate::mcp::Session;
use crate::model::{ChatRequest, Message, ToolCall};

/// Connects to the server at `url` and puts its tools in `req` (the mutant that bypasses it
/// keeps the tools the caller was told of).
pub(super) async fn open(
    mutant: Mutant,
    url: &str,
    req: &mut ChatRequest,
) -> Result<Session, String> {
    let session = Session::connect(url).await?;
    if mutant == Mutant::McpBypass {
        return Ok(session);
    }
    let listed = session.tools().await?;
    if mutant == Mutant::McpFetchRefs {
        fetch_refs(&listed).await;
    }
    let strict = |name: &str| req.tool(name).and_then(|t| t.strict);
    req.tools = (listed.into_iter())
        .map(|mut t| {
            t.strict = strict(&t.name);
            t
        })
        .collect();
    Ok(session)
}

/// What the caller gets when the server could not be reached.
pub(super) fn failed(message: &str) -> DriverResult {
    DriverResult {
        error: Some(HandedError {
            kind: "McpError".into(),
            message: message.to_string(),
            status: None,
        }),
        ..Default::default()
    }
}

/// The result the library sends for `given` (the result tooltape wrote, naming its call): the
/// server's answer to the call it answers, called with the model's arguments.
pub(super) async fn result(
    mutant: Mutant,
    session: &Session,
    calls: &[ToolCall],
    given: Message,
) -> Message {
    let Message::Tool { call_id, name, .. } = &given else {
        return given;
    };
    // By id; where the API carries none (Gemini, the text protocol), by name, as they link.
    let call = (calls.iter().find(|c| &c.id == call_id))
        .or_else(|| calls.iter().find(|c| &c.name == name));
    let bypassed = matches!(mutant, Mutant::McpBypass | Mutant::McpGivenResults);
    let Some(call) = call.filter(|_| !bypassed) else {
        return given;
    };
    let mut arguments = call.arguments.clone();
    if mutant == Mutant::McpDropNulls
        && let Value::Object(o) = &mut arguments
    {
        o.retain(|_, v| !v.is_null());
    }
    match session.call(name, &arguments).await {
        Ok(answer) => crate::mcp::result_message(call_id, name, &answer),
        Err(e) => Message::Tool {
            call_id: call_id.clone(),
            name: name.clone(),
            content: e,
            parts: Vec::new(),
            is_error: true,
        },
    }
}

/// GETs every `http` `$ref` of `tools`' schemas (the mutant).
async fn fetch_refs(tools: &[crate::model::Tool]) {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    match (k.as_str(), x) {
                        ("$ref", Value::String(s)) if s.starts_with("http") => out.push(s.clone()),
                        _ => refs(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let mut urls = Vec::new();
    tools.iter().for_each(|t| refs(&t.parameters, &mut urls));
    let client = crate::run::client(std::time::Duration::from_secs(5));
    for url in urls {
        let _ = client.get(&url).send().await;
    }
}
