//! Provider `anthropic` (Messages API, `POST /v1/messages`): the encoder lives here; buffered
//! decoding in `decode`, the push-based stream decoder in `stream`.

mod decode;
mod request;
mod stream;
#[cfg(test)]
mod tests;
mod tool_changes;

use serde_json::{Map, Value, json};

use crate::http::HttpRequest;
use crate::model::{AllowedMode, ChatRequest, HostedTool, Message, Tool, ToolChoice};
use crate::model::{EncodeError, Encoded, Provider};
use crate::providers::programmatic;
use crate::providers::tool_names::check_plain;
use crate::providers::tool_results::{Turn, Turns};
use crate::providers::tool_search::{self, has_variant};
use crate::schema::prepare_tools;

pub use decode::decode;
pub use request::decode_request;
pub use stream::{Stream, synthetic_stream};

pub const PATH: &str = "/v1/messages";
pub const VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is sent when the request has none.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// Builds the Messages request. Fails closed (`FORCED_WITH_THINKING`, `ALLOWED_UNKNOWN_TOOL`)
/// rather than sending what the API rejects or would silently reinterpret.
pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    check_plain("Anthropic", &req.tools)?;
    let mut notes = Vec::new();
    let choice = req.tool_choice.as_ref();
    if req.thinking.is_some() && choice.is_some_and(ToolChoice::demands_call) {
        // The API answers 400 "Thinking may not be enabled when tool_choice forces tool use."
        return Err(EncodeError::new(
            "FORCED_WITH_THINKING",
            format!(
                "anthropic refuses a forced tool choice ({}) with extended thinking on; \
                 use auto or turn thinking off",
                choice.map(ToolChoice::slug).unwrap_or_default()
            ),
        ));
    }
    let tools = tools_to_send(req, &mut notes)?;
    let (prepared, prep_notes) = prepare_tools(Provider::Anthropic, &tools, req.strict)?;
    notes.extend(prep_notes);

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("max_tokens".into(), json!(max_tokens(req)));
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } | Message::Developer { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        // Several system/developer messages become one top-level text, in order (the API has
        // no system role inside `messages`).
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages(req, &mut notes)));

    let mut wire_tools: Vec<Value> = prepared
        .iter()
        .map(|t| {
            let mut o = t.declaration();
            o.insert("input_schema".into(), t.parameters.clone());
            if let Some(s) = t.strict {
                o.insert("strict".into(), json!(s));
            }
            if req.tool(&t.name).is_some_and(|t| t.eager_input_streaming) {
                o.insert("eager_input_streaming".into(), json!(true));
            }
            if req.tool(&t.name).is_some_and(|t| t.defer_loading) {
                o.insert("defer_loading".into(), json!(true));
            }
            let callers = req.tool(&t.name);
            if let Some(c) =
                callers.and_then(|t| programmatic::wire_callers(Provider::Anthropic, t, req))
            {
                o.insert("allowed_callers".into(), c);
            }
            Value::Object(o)
        })
        .collect();
    for h in &req.hosted {
        match h {
            // REQUIRED search is forced through tool_choice (see `tool_choice`).
            HostedTool::WebSearch { .. } => {
                wire_tools.push(json!({"type": "web_search_20250305", "name": "web_search"}))
            }
            HostedTool::ToolSearch { variant } if has_variant(Provider::Anthropic, variant) => {
                let name = tool_search::anthropic_name(variant);
                wire_tools.push(json!({"type": variant, "name": name}));
            }
            HostedTool::ToolSearch { variant } => {
                return Err(tool_search::refused(Provider::Anthropic, variant));
            }
            HostedTool::Programmatic { variant }
                if programmatic::has_variant(Provider::Anthropic, variant) =>
            {
                wire_tools.push(json!({"type": variant, "name": programmatic::ANTHROPIC_NAME}));
            }
            HostedTool::Programmatic { variant } => {
                return Err(programmatic::refused(Provider::Anthropic, variant));
            }
        }
    }
    let has_tools = !wire_tools.is_empty();
    if has_tools {
        body.insert("tools".into(), Value::Array(wire_tools));
    }
    if let Some(tc) = tool_choice(req) {
        if has_tools {
            body.insert("tool_choice".into(), tc);
        } else {
            notes.push("tool_choice not sent: the request declares no tools".into());
        }
    }
    if let Some(budget) = req.thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
    }
    // The code-execution container programmatic calls run in, named again to continue them.
    if let Some(c) = &req.server.container {
        body.insert("container".into(), json!(c));
    }
    let mut request = HttpRequest::post(PATH, Value::Object(body));
    request
        .headers
        .insert("anthropic-version".into(), VERSION.into());
    if req.tools.iter().any(|t| !t.allowed_callers.is_empty()) {
        add_beta(&mut request.headers, programmatic::ANTHROPIC_BETA);
    }
    Ok(Encoded { request, notes })
}

/// With thinking on, `budget_tokens` must stay below `max_tokens`: the default leaves room for
/// the budget plus an answer.
fn max_tokens(req: &ChatRequest) -> u32 {
    req.max_tokens.unwrap_or_else(|| match req.thinking {
        Some(b) => b.saturating_add(DEFAULT_MAX_TOKENS),
        None => DEFAULT_MAX_TOKENS,
    })
}

/// Anthropic cannot name an allowed subset in `tool_choice`. Decision: send only the allowed
/// tools (with `auto` or `any`), so the restriction is enforced by the API itself rather than
/// by an instruction the model may ignore; an allowed name that is not declared fails closed.
fn tools_to_send(req: &ChatRequest, notes: &mut Vec<String>) -> Result<Vec<Tool>, EncodeError> {
    let Some(ToolChoice::Allowed { tools: allowed, .. }) = &req.tool_choice else {
        return Ok(req.tools.clone());
    };
    if let Some(missing) = allowed.iter().find(|n| req.tool(n).is_none()) {
        return Err(EncodeError::new(
            "ALLOWED_UNKNOWN_TOOL",
            format!("allowed tool {missing:?} is not declared in the request"),
        ));
    }
    let kept: Vec<Tool> = req
        .tools
        .iter()
        .filter(|t| allowed.contains(&t.name))
        .cloned()
        .collect();
    if kept.len() < req.tools.len() {
        notes.push(format!(
            "allowed tools: anthropic has no allowed-list, sent only {} of {} tools",
            allowed.join(", "),
            req.tools.len()
        ));
    }
    Ok(kept)
}

fn tool_choice(req: &ChatRequest) -> Option<Value> {
    let mut o = Map::new();
    if crate::capability::grounding_required(req) {
        // Source: tool_choice `{"type":"tool","name"}` may name a server tool (capability.rs).
        o.insert("type".into(), json!("tool"));
        o.insert("name".into(), json!("web_search"));
        if req.parallel_tool_calls == Some(false) {
            o.insert("disable_parallel_tool_use".into(), json!(true));
        }
        return Some(Value::Object(o));
    }
    match &req.tool_choice {
        None if req.hosted.iter().any(HostedTool::is_web_search) => {
            // Hosted web search: the choice is always explicit (AUTO sends auto).
            o.insert("type".into(), json!("auto"));
        }
        None if req.parallel_tool_calls == Some(false) => {
            o.insert("type".into(), json!("auto"));
        }
        None => return None,
        Some(
            ToolChoice::Auto
            | ToolChoice::Allowed {
                mode: AllowedMode::Auto,
                ..
            },
        ) => {
            o.insert("type".into(), json!("auto"));
        }
        Some(
            ToolChoice::Required
            | ToolChoice::Allowed {
                mode: AllowedMode::Required,
                ..
            },
        ) => {
            o.insert("type".into(), json!("any"));
        }
        // `none` keeps the tools declared: dropping them instead breaks any history that
        // holds tool_use blocks, and changes the prompt.
        Some(ToolChoice::None) => {
            o.insert("type".into(), json!("none"));
        }
        Some(ToolChoice::Forced(name)) => {
            o.insert("type".into(), json!("tool"));
            o.insert("name".into(), json!(name));
        }
    }
    let none = matches!(req.tool_choice, Some(ToolChoice::None));
    if req.parallel_tool_calls == Some(false) && !none {
        o.insert("disable_parallel_tool_use".into(), json!(true));
    }
    Some(Value::Object(o))
}

/// The conversation without system text. Consecutive tool results become one user message
/// (results first, in the order of the calls they answer); a user message right after them
/// joins that message as a trailing text block, as the API requires results to come first.
fn messages(req: &ChatRequest, notes: &mut Vec<String>) -> Vec<Value> {
    let mut out = Vec::new();
    let mut turns = Turns::new(&req.messages);
    while let Some(turn) = turns.next() {
        match turn {
            Turn::Message(_, Message::User { content }) => {
                out.push(json!({"role": "user", "content": content}));
            }
            Turn::Message(
                i,
                Message::Assistant {
                    text,
                    tool_calls,
                    opaque,
                    ..
                },
            ) => {
                let (mut blocks, dropped) = super::opaque::own(Provider::Anthropic, i, opaque);
                notes.extend(dropped);
                if let Some(t) = text.as_deref().filter(|t| !t.is_empty()) {
                    blocks.push(json!({"type": "text", "text": t}));
                }
                for c in tool_calls {
                    let mut b = json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments});
                    if let Some(caller) = &c.caller {
                        b["caller"] = programmatic::wire_caller(caller);
                    }
                    blocks.push(b);
                }
                if blocks.is_empty() {
                    notes.push(format!("assistant message {i} has no content: not sent"));
                } else {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            // System and developer text is the request's `system`.
            Turn::Message(..) => {}
            Turn::Results(results) => {
                let mut blocks: Vec<Value> = results
                    .into_iter()
                    .map(|r| {
                        let mut b = json!({"type": "tool_result", "tool_use_id": r.call_id,
                            "content": crate::providers::result_parts::anthropic(r.content, r.parts)});
                        if r.is_error {
                            b["is_error"] = json!(true);
                        }
                        b
                    })
                    .collect();
                if let Some(content) = turns.take_user() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                out.push(json!({"role": "user", "content": blocks}));
            }
        }
    }
    out
}

/// Adds `beta` to an Anthropic request's `anthropic-beta` header, beside any other.
pub(crate) fn add_beta(headers: &mut std::collections::BTreeMap<String, String>, beta: &str) {
    let value = match headers.get("anthropic-beta") {
        Some(b) if !b.split(',').any(|x| x.trim() == beta) => format!("{b},{beta}"),
        Some(b) => b.clone(),
        None => beta.to_string(),
    };
    headers.insert("anthropic-beta".into(), value);
}
