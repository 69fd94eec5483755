//! Provider `openai-chat` (`POST /v1/chat/completions`): request encoding, buffered decoding,
//! error envelopes (OpenAI, Mistral, OpenRouter/vLLM) and helpers the Responses codec shares.

mod chunk;
mod stream;
pub(crate) mod wire;

#[cfg(test)]
mod tests;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::http::{HttpRequest, HttpResponse};
use crate::model::{
    ChatRequest, Diagnostic, DiagnosticKind, Finish, Message, Outcome, ProviderError, ToolCall,
    ToolChoice,
};
use crate::providers::{DecodeError, EncodeError, Encoded, Provider};
use crate::schema;

pub use stream::{Stream, synthetic_stream};
use wire::{ArgsWire, BStr, First, UsageWire};

pub const PATH: &str = "/v1/chat/completions";

pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    if !req.hosted.is_empty() {
        return Err(EncodeError::new(
            "HOSTED_TOOL_NOT_SUPPORTED",
            "Chat Completions has no hosted tools in `tools` (use openai-responses for web search)",
        ));
    }
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
                let mut f = Map::new();
                f.insert("name".into(), json!(t.name));
                if let Some(d) = t.description {
                    f.insert("description".into(), json!(d));
                }
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
            } => {
                if !opaque.is_empty() {
                    notes.push(format!(
                        "message {i}: {} opaque item(s) dropped: Chat Completions cannot carry them",
                        opaque.len()
                    ));
                }
                let mut a = Map::new();
                a.insert("role".into(), json!("assistant"));
                a.insert("content".into(), text.as_ref().map_or(Value::Null, |t| json!(t)));
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
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
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

/// Decodes a buffered response, or any non-2xx answer as an error envelope.
pub fn decode(_req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    if !resp.is_success() {
        return Ok(Outcome::from_error(error_from_response(resp)));
    }
    let text = std::str::from_utf8(&resp.body).map_err(|e| {
        DecodeError::new(format!(
            "openai-chat body: invalid UTF-8 at byte {}",
            e.valid_up_to()
        ))
    })?;
    let body: BodyWire<'_> =
        serde_json::from_str(text).map_err(|e| DecodeError::json("openai-chat body", &e, 1))?;
    if let Some(err) = body
        .error
        .as_ref()
        .and_then(|e| error_from_value(e, resp.status))
    {
        // Some gateways answer 200 with an error envelope.
        return Ok(Outcome::from_error(err));
    }
    let mut out = Outcome {
        model: body.model.map(|m| m.0.into_owned()),
        usage: body.usage.as_ref().map(UsageWire::to_usage),
        ..Outcome::default()
    };
    let Some(choice) = body.choices.0 else {
        return Ok(out);
    };
    if let Some(msg) = choice.message {
        if let Some(c) = msg.content.filter(|c| !c.0.is_empty()) {
            out.push_text(c.as_str());
        }
        // A refusal is what the model said instead of answering: it is the outcome's text
        // (there is no separate field), so checks see a text answer rather than nothing.
        if let Some(r) = msg.refusal.filter(|r| !r.0.is_empty()) {
            out.push_text(r.as_str());
        }
        for call in msg.tool_calls.unwrap_or_default() {
            // `type: custom` calls (free-text input) are skipped: tooltape never declares custom tools.
            let Some(f) = call.function else { continue };
            let mut raw = String::new();
            if let Some(a) = &f.arguments {
                a.append_to(&mut raw);
            }
            let index = out.tool_calls.len();
            let arguments = parse_arguments(&raw, index, &mut out.diagnostics);
            out.tool_calls.push(ToolCall {
                id: call.id.map(|s| s.0.into_owned()).unwrap_or_default(),
                name: f.name.map(|s| s.0.into_owned()).unwrap_or_default(),
                arguments,
                thought_signature: None,
            });
        }
    }
    set_finish(&mut out, choice.finish_reason.map(|f| f.0.into_owned()));
    Ok(out)
}

#[derive(Deserialize)]
struct BodyWire<'a> {
    #[serde(default, borrow)]
    choices: First<ChoiceWire<'a>>,
    #[serde(default, borrow)]
    model: Option<BStr<'a>>,
    #[serde(default)]
    usage: Option<UsageWire>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChoiceWire<'a> {
    #[serde(default, borrow)]
    message: Option<MessageWire<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<BStr<'a>>,
}

#[derive(Deserialize)]
struct MessageWire<'a> {
    #[serde(default, borrow)]
    content: Option<BStr<'a>>,
    #[serde(default, borrow)]
    refusal: Option<BStr<'a>>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<CallWire<'a>>>,
}

#[derive(Deserialize)]
struct CallWire<'a> {
    #[serde(default, borrow)]
    id: Option<BStr<'a>>,
    #[serde(default, borrow)]
    function: Option<FunctionWire<'a>>,
}

#[derive(Deserialize)]
struct FunctionWire<'a> {
    #[serde(default, borrow)]
    name: Option<BStr<'a>>,
    #[serde(default, borrow)]
    arguments: Option<ArgsWire<'a>>,
}

/// Sets `raw_finish` and the normalized `finish` from a Chat `finish_reason`.
pub(crate) fn set_finish(out: &mut Outcome, raw: Option<String>) {
    out.finish = match raw.as_deref() {
        Some("tool_calls" | "function_call") => Finish::ToolCalls,
        Some("stop") => Finish::Stop,
        Some("length") => Finish::Length,
        Some("content_filter") => Finish::ContentFilter,
        _ => Finish::Other,
    };
    out.raw_finish = raw;
    // UNCONFIRMED (reference §8.3): a forced tool_choice may end with "stop" while carrying calls.
    out.normalize_finish_for_calls();
}

/// Arguments text → JSON. Empty means `{}`; text that is not JSON is kept as a string with an
/// `InvalidArgumentsJson` diagnostic (the call itself is still reported).
pub(crate) fn parse_arguments(raw: &str, call_index: usize, diags: &mut Vec<Diagnostic>) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => v,
        Err(e) => {
            diags.push(Diagnostic {
                kind: DiagnosticKind::InvalidArgumentsJson,
                message: format!("arguments of call {call_index} are not valid JSON: {e}").into(),
                offset: None,
                call_index: Some(call_index),
                recovered: true,
            });
            Value::String(raw.to_string())
        }
    }
}

/// A non-2xx answer as a typed error; a body that is not a known envelope still gives one.
pub(crate) fn error_from_response(resp: &HttpResponse) -> ProviderError {
    let text = String::from_utf8_lossy(&resp.body);
    let mut err = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| error_from_value(&v, resp.status))
        .unwrap_or_else(|| ProviderError {
            status: resp.status,
            message: text.trim().to_string(),
            ..ProviderError::default()
        });
    err.retry_after_ms = retry_after_ms(resp);
    err
}

/// Reads an error envelope: `{"error":{message,type,code,param}}` (OpenAI, vLLM, OpenRouter with
/// a numeric code), `{"error":"text"}`, flat `{"object":"error","message",…}` (Mistral, old vLLM)
/// and `{"detail":…}`. `None` when `v` is none of them.
pub(crate) fn error_from_value(v: &Value, status: u16) -> Option<ProviderError> {
    let obj = v.as_object()?;
    let inner = match obj.get("error") {
        Some(Value::Object(e)) => e,
        Some(Value::String(s)) => {
            return Some(ProviderError {
                status,
                message: s.clone(),
                ..ProviderError::default()
            });
        }
        _ if obj.contains_key("message") => obj,
        _ => {
            let detail = obj.get("detail")?;
            return Some(ProviderError {
                status,
                message: detail
                    .as_str()
                    .map_or_else(|| detail.to_string(), str::to_string),
                ..ProviderError::default()
            });
        }
    };
    let message = match inner.get("message") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => v.to_string(),
        Some(other) => other.to_string(),
    };
    Some(ProviderError {
        status,
        kind: inner
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string),
        code: match inner.get("code") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        },
        message,
        retry_after_ms: None,
    })
}

/// `retry-after-ms` (the SDK's non-standard header, milliseconds) wins over `retry-after`
/// (seconds; an HTTP-date form is ignored).
pub(crate) fn retry_after_ms(resp: &HttpResponse) -> Option<u64> {
    let num = |name: &str| {
        resp.header(name)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = num("retry-after-ms") {
        return Some(ms.round() as u64);
    }
    num("retry-after").map(|s| (s * 1000.0).round() as u64)
}
