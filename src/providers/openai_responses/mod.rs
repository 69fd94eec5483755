//! Provider `openai-responses` (`POST /v1/responses`): request encoding, buffered decoding of
//! `output[]` items (calls, text, reasoning, hosted web search), and status → finish mapping;
//! `state`: a round continued by `previous_response_id`.

mod decode;
mod request;
mod state;
mod stream;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use super::openai_chat::{arguments_string, check_tool_choice};
use crate::http::HttpRequest;
use crate::model::{ChatRequest, HostedTool, Message, ToolChoice};
use crate::model::{EncodeError, Encoded, Provider};
use crate::providers::programmatic;
use crate::providers::tool_names::check_plain;
use crate::providers::tool_search::{self, has_variant};
use crate::schema::{self, PreparedTool};

pub use decode::decode;
pub(crate) use decode::loaded as search_loaded;
pub use request::decode_request;
pub use state::{continue_from, refer_to_reasoning, response_id};
pub use stream::{Stream, synthetic_stream};

pub const PATH: &str = "/v1/responses";

pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    check_plain("Responses", &req.tools)?;
    let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    let has_tools = !req.tools.is_empty() || !req.hosted.is_empty();
    check_tool_choice(req.tool_choice.as_ref(), &names, has_tools)?;
    let (prepared, mut notes) =
        schema::prepare_tools(Provider::OpenaiResponses, &req.tools, req.strict)?;

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        body.insert("instructions".into(), json!(system.join("\n\n")));
    }
    body.insert(
        "input".into(),
        Value::Array(input(&req.messages, &mut notes)),
    );
    let mut tools = function_tools(req, prepared);
    // REQUIRED search (possible only where `capability::check` allowed it): the hosted tool choice
    // `{"type":"web_search_preview"}` is the one form that forces it (ToolChoiceTypes has no
    // plain `web_search`), so the preview variant is sent.
    let force_search = crate::capability::grounding_required(req);
    for h in &req.hosted {
        match h {
            HostedTool::WebSearch { variant, .. } => {
                let ty = if force_search {
                    "web_search_preview"
                } else {
                    variant.as_deref().unwrap_or("web_search")
                };
                tools.push(json!({ "type": ty }));
            }
            HostedTool::ToolSearch { variant }
                if has_variant(Provider::OpenaiResponses, variant) =>
            {
                tools.push(json!({ "type": variant }));
            }
            HostedTool::ToolSearch { variant } => {
                return Err(tool_search::refused(Provider::OpenaiResponses, variant));
            }
            HostedTool::Programmatic { variant }
                if programmatic::has_variant(Provider::OpenaiResponses, variant) =>
            {
                tools.push(json!({ "type": variant }));
            }
            HostedTool::Programmatic { variant } => {
                return Err(programmatic::refused(Provider::OpenaiResponses, variant));
            }
        }
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if force_search {
        body.insert("tool_choice".into(), json!({"type": "web_search_preview"}));
    } else if let Some(choice) = &req.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice));
    } else if req.hosted.iter().any(HostedTool::is_web_search) {
        // Hosted web search: the choice is always explicit, so a REQUIRED that could not be sent is
        // never mistaken for a silent auto.
        body.insert("tool_choice".into(), json!("auto"));
    }
    if let Some(p) = req.parallel_tool_calls {
        if has_tools {
            body.insert("parallel_tool_calls".into(), json!(p));
        } else {
            notes.push("parallel_tool_calls omitted: the request declares no tools".into());
        }
    }
    if let Some(m) = req.max_tokens {
        body.insert("max_output_tokens".into(), json!(m));
    }
    if req.thinking.is_some() {
        notes.push(
            "thinking budget not sent: Responses takes `reasoning.effort`, not a token budget"
                .into(),
        );
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
        body.insert(
            "stream_options".into(),
            json!({"include_obfuscation": false}),
        );
    }
    Ok(Encoded {
        request: HttpRequest::post(PATH, Value::Object(body)),
        notes,
    })
}

/// The function tools as sent: `{"type":"function"}` entries (`defer_loading: true` on a
/// deferred one), those of a namespace grouped in one `{"type":"namespace","name","tools"}`
/// entry where its first function stands.
fn function_tools(req: &ChatRequest, prepared: Vec<PreparedTool>) -> Vec<Value> {
    let mut tools: Vec<Value> = Vec::new();
    let mut spaces: Vec<(String, usize)> = Vec::new();
    for t in prepared {
        let own = req.tool(&t.name);
        let mut f = Map::new();
        f.insert("type".into(), json!("function"));
        f.extend(t.declaration());
        f.insert("parameters".into(), t.parameters);
        // Omitting `strict` here means "strict when possible" (Responses normalizes schemas);
        // the neutral default is non-strict, so an unset value is sent as an explicit false.
        f.insert("strict".into(), json!(t.strict.unwrap_or(false)));
        if own.is_some_and(|t| t.defer_loading) {
            f.insert("defer_loading".into(), json!(true));
        }
        let callers =
            own.and_then(|t| programmatic::wire_callers(Provider::OpenaiResponses, t, req));
        if let Some(c) = callers {
            f.insert("allowed_callers".into(), c);
        }
        let Some(space) = own.and_then(|t| t.namespace.as_deref()) else {
            tools.push(Value::Object(f));
            continue;
        };
        match spaces.iter().find(|(n, _)| n == space) {
            Some(&(_, at)) => {
                if let Some(Value::Array(members)) = tools[at].get_mut("tools") {
                    members.push(Value::Object(f));
                }
            }
            None => {
                spaces.push((space.to_string(), tools.len()));
                tools.push(json!({"type": "namespace", "name": space, "tools": [f]}));
            }
        }
    }
    tools
}

fn tool_choice(choice: &ToolChoice) -> Value {
    let fname = |n: &str| json!({"type": "function", "name": n});
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Forced(n) => fname(n),
        ToolChoice::Allowed { mode, tools } => json!({
            "type": "allowed_tools",
            "mode": mode,
            "tools": tools.iter().map(|n| fname(n)).collect::<Vec<_>>(),
        }),
    }
}

/// Every non-system message as an input item; tool results are keyed by `call_id`.
fn input(msgs: &[Message], notes: &mut Vec<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        match m {
            Message::System { .. } => {} // sent as `instructions`
            Message::Developer { content } => {
                out.push(json!({"role": "developer", "content": content}))
            }
            Message::User { content } => out.push(json!({
                "role": "user", "content": [{"type": "input_text", "text": content}]
            })),
            Message::Assistant {
                text,
                tool_calls,
                opaque,
                phase,
            } => {
                // Reasoning items go back verbatim, before the text and calls they preceded
                // (another API's are dropped: Responses takes back only its own).
                let (own, dropped) = super::opaque::own(Provider::OpenaiResponses, i, opaque);
                out.extend(own);
                notes.extend(dropped);
                if let Some(t) = text.as_deref().filter(|t| !t.is_empty()) {
                    let mut item = json!({
                        "role": "assistant", "content": [{"type": "output_text", "text": t}]
                    });
                    // The message's phase goes back with it (class 32).
                    if let Some(p) = phase {
                        item["phase"] = json!(p.wire());
                    }
                    out.push(item);
                }
                for c in tool_calls {
                    let mut item = json!({
                        "type": "function_call", "call_id": c.id, "name": c.name,
                        "arguments": arguments_string(&c.arguments),
                    });
                    // A namespaced call replayed without its namespace is a 400.
                    if let Some(ns) = &c.namespace {
                        item["namespace"] = json!(ns);
                    }
                    // A call the model's code made goes back with its caller (class 30).
                    if let Some(caller) = &c.caller {
                        item["caller"] = programmatic::wire_caller(caller);
                    }
                    out.push(item);
                }
            }
            Message::Tool {
                call_id,
                content,
                parts,
                is_error,
                ..
            } => {
                if *is_error {
                    // No error flag on function_call_output: the content is sent as is, noted.
                    notes.push(format!(
                        "message {i}: tool result for `{call_id}` is an error; Responses has no error flag, output sent as is"
                    ));
                }
                let output = crate::providers::result_parts::responses(content, parts);
                out.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
        }
    }
    out
}
