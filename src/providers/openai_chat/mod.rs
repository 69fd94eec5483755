//! Provider `openai-chat` (`POST /v1/chat/completions`): request encoding, buffered decoding,
//! error envelopes (OpenAI, Mistral, OpenRouter/vLLM) and helpers the Responses codec shares.

mod chunk;
mod decode;
mod dialect;
pub(crate) mod reasoning;
mod request;
mod state;
mod stream;
pub(crate) mod wire;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::http::HttpRequest;
use crate::model::{ChatRequest, Message, ToolChoice};
use crate::model::{EncodeError, Encoded, Provider};
use crate::providers::tool_names::check_plain;
use crate::schema;

pub use decode::decode;
pub(crate) use decode::{body_text, error_from_response, error_from_value, parse_arguments};
pub use dialect::Dialect;
pub(crate) use request::{allowed, string_choice};
pub use request::{decode_request, decode_request_as};
pub use stream::{Stream, synthetic_stream};

pub const PATH: &str = "/v1/chat/completions";

pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    if !req.hosted.is_empty() {
        return Err(EncodeError::new(
            "HOSTED_TOOL_NOT_SUPPORTED",
            "Chat Completions has no hosted tools in `tools` (use openai-responses for web search)",
        ));
    }
    check_plain("Chat Completions", &req.tools)?;
    let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    check_tool_choice(req.tool_choice.as_ref(), &names, !req.tools.is_empty())?;
    let (prepared, mut notes) =
        schema::prepare_tools(Provider::OpenaiChat, &req.tools, req.strict)?;

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "messages".into(),
        Value::Array(messages(&req.messages, &mut notes)),
    );
    if !prepared.is_empty() {
        let tools = prepared
            .into_iter()
            .map(|t| {
                let mut f = t.declaration();
                f.insert("parameters".into(), t.parameters);
                if let Some(s) = t.strict {
                    f.insert("strict".into(), json!(s));
                }
                json!({"type": "function", "function": f})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &req.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice));
    }
    if let Some(p) = req.parallel_tool_calls {
        if req.tools.is_empty() {
            // OpenAI answers 400 "'parallel_tool_calls' is only allowed when 'tools' are specified";
            // without tools the switch means nothing, so it is dropped rather than failing the trial.
            notes.push("parallel_tool_calls omitted: the request declares no tools".into());
        } else {
            body.insert("parallel_tool_calls".into(), json!(p));
        }
    }
    if let Some(m) = req.max_tokens {
        body.insert("max_completion_tokens".into(), json!(m));
    }
    if req.thinking.is_some() {
        notes.push("thinking budget not sent: Chat Completions has only `reasoning_effort`".into());
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
        body.insert(
            "stream_options".into(),
            json!({"include_usage": true, "include_obfuscation": false}),
        );
    }
    Ok(Encoded {
        request: HttpRequest::post(PATH, Value::Object(body)),
        notes,
    })
}

/// Fails closed on a tool choice the API would reject: any choice without tools (OpenAI: "'tool_choice'
/// is only allowed when 'tools' are specified"), and forced/allowed names that are not declared.
pub(crate) fn check_tool_choice(
    choice: Option<&ToolChoice>,
    names: &[&str],
    has_tools: bool,
) -> Result<(), EncodeError> {
    let Some(choice) = choice else { return Ok(()) };
    if !has_tools {
        return Err(EncodeError::new(
            "TOOL_CHOICE_WITHOUT_TOOLS",
            format!(
                "tool_choice `{}` needs at least one declared tool",
                choice.slug()
            ),
        ));
    }
    let wanted: &[String] = match choice {
        ToolChoice::Forced(name) => std::slice::from_ref(name),
        ToolChoice::Allowed { tools, .. } if tools.is_empty() => {
            return Err(EncodeError::new(
                "ALLOWED_TOOLS_EMPTY",
                "tool_choice allowed_tools lists no tools",
            ));
        }
        ToolChoice::Allowed { tools, .. } => tools,
        _ => &[],
    };
    match wanted.iter().find(|w| !names.contains(&w.as_str())) {
        Some(unknown) => Err(EncodeError::new(
            "TOOL_CHOICE_UNKNOWN_TOOL",
            format!("tool_choice names `{unknown}`, which is not a declared function tool"),
        )),
        None => Ok(()),
    }
}

fn tool_choice(choice: &ToolChoice) -> Value {
    let fname = |n: &str| json!({"type": "function", "function": {"name": n}});
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Forced(n) => fname(n),
        ToolChoice::Allowed { mode, tools } => json!({
            "type": "allowed_tools",
            "allowed_tools": {"mode": mode, "tools": tools.iter().map(|n| fname(n)).collect::<Vec<_>>()},
        }),
    }
}

fn messages(msgs: &[Message], notes: &mut Vec<String>) -> Vec<Value> {
    msgs.iter()
        .enumerate()
        .map(|(i, m)| match m {
            Message::System { content } => json!({"role": "system", "content": content}),
            Message::Developer { content } => json!({"role": "developer", "content": content}),
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant {
                text,
                tool_calls,
                opaque,
                ..
            } => {
                let mut a = Map::new();
                a.insert("role".into(), json!("assistant"));
                a.insert("content".into(), text.as_ref().map_or(Value::Null, |t| json!(t)));
                // A model server's reasoning text goes back on its message; nothing else can.
                let dropped = opaque.len() - reasoning::write(&mut a, opaque);
                if dropped > 0 {
                    notes.push(format!(
                        "message {i}: {dropped} opaque item(s) dropped: Chat Completions cannot carry them"
                    ));
                }
                if !tool_calls.is_empty() {
                    let calls = tool_calls.iter().map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": arguments_string(&c.arguments)}})
                    });
                    a.insert("tool_calls".into(), Value::Array(calls.collect()));
                }
                Value::Object(a)
            }
            Message::Tool {
                call_id,
                content,
                parts,
                is_error,
                ..
            } => {
                if *is_error {
                    // Chat has no error flag on tool messages; the content is sent unchanged (it
                    // already says what failed) rather than rewritten, and the loss is noted.
                    notes.push(format!(
                        "message {i}: tool result for `{call_id}` is an error; Chat has no error flag, content sent as is"
                    ));
                }
                json!({"role": "tool", "tool_call_id": call_id,
                    "content": crate::providers::result_parts::chat(content, parts)})
            }
        })
        .collect()
}

/// Arguments as the compact JSON string the wire wants. A `String` value is arguments that were
/// not valid JSON when decoded: they are echoed raw, not re-quoted.
pub(crate) fn arguments_string(args: &Value) -> String {
    match args {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}
