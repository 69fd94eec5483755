//! Decoding a Chat Completions request (`POST …/chat/completions`) back to the neutral request:
//! the inverse of `encode`, pure.
//!
//! Read: `model`, `messages` (system, developer, user, assistant with `tool_calls`, tool results
//! linked by `tool_call_id`, the name taken from the call they answer), `tools` (function tools;
//! `strict` inside `function` kept as `Tool::strict`, its placement as a wire extra),
//! `web_search_options` (hosted search, variant `web_search_options`), `tool_choice` (`auto`,
//! `none`, `required`, a forced function, `allowed_tools` with its mode), `parallel_tool_calls`,
//! `max_completion_tokens` (or the older `max_tokens`), `stream`.
//! Also read: the legacy function-calling fields OpenAI still accepts (`functions` as tools,
//! `function_call` as the tool choice, assistant `function_call` as a call and `function`
//! messages as its result; ids the legacy form lacks are made up as `function_call-N` with a
//! wire extra), and the OpenAI-compatible dialects (`Dialect`, given or detected): their
//! tool choices (Mistral `any` = required) and documented fields (not-carried extras), with the
//! dialect as a wire extra at pointer `dialect` when it is not OpenAI's.
//! An assistant message's reasoning text (`reasoning`, `reasoning_content`: a model server's) is
//! its opaque item. Not recoverable: a tool result's error flag (Chat has none: always `false`),
//! other opaque items (never sent), a thinking budget (Chat has only `reasoning_effort`, kept as
//! an extra).

use serde_json::Value;

use crate::http::HttpRequest;
use crate::model::{
    AllowedMode, DecodeError, Grounding, HostedTool, Message, Tool, ToolCall, ToolChoice,
};
use crate::pointer::push;
use crate::providers::decoded::{
    DecodedRequest, Extra, ExtraKind, Fields, arguments, call_name, check_path, content_text,
    empty_request, field_error, query_extras, type_error, wire,
};
use crate::providers::result_parts::{Api, read as read_parts};

use super::dialect::Dialect;

/// Fields of the format the neutral request has no place for.
const NOT_CARRIED: &[&str] = &[
    "stream_options",
    "reasoning_effort",
    "temperature",
    "top_p",
    "n",
    "stop",
    "seed",
    "user",
    "metadata",
    "response_format",
    "logprobs",
    "top_logprobs",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "store",
    "service_tier",
    "modalities",
    "audio",
    "prediction",
    "prompt_cache_key",
    "safety_identifier",
    "verbosity",
];

const TEXT: &[&str] = &["text"];

/// Decodes a Chat Completions request in the dialect its body shows ([`Dialect::detect`]).
pub fn decode_request(req: &HttpRequest) -> Result<DecodedRequest, DecodeError> {
    decode_request_as(req, None)
}

/// Decodes a Chat Completions request written for `dialect` (detected when `None`).
pub fn decode_request_as(
    req: &HttpRequest,
    dialect: Option<Dialect>,
) -> Result<DecodedRequest, DecodeError> {
    check_path(req, "/chat/completions", "Chat Completions")?;
    let dialect = dialect.unwrap_or_else(|| Dialect::detect(&req.body));
    let mut extras = Vec::new();
    if dialect != Dialect::OpenAi {
        wire(
            &mut extras,
            "dialect".into(),
            Value::String(dialect.slug().into()),
        );
    }
    query_extras(req, &mut extras);
    let mut body = Fields::of(&req.body, "", "a Chat Completions request")?;
    let model = body.req_str("model", "a Chat Completions request names its model")?;
    let stream = body.bool("stream")?.unwrap_or(false);
    let mut out = empty_request(model.to_string(), stream);

    let msgs = body.req_array("messages", "a Chat Completions request carries `messages`")?;
    for (i, m) in msgs.iter().enumerate() {
        let msg = message(
            m,
            &push("/messages", &i.to_string()),
            &out.messages,
            &mut extras,
        )?;
        out.messages.extend(msg);
    }
    if let Some(tools) = body.array("tools")? {
        for (i, t) in tools.iter().enumerate() {
            if let Some(tool) = tool(t, &push("/tools", &i.to_string()), &mut extras)? {
                out.tools.push(tool);
            }
        }
    }
    legacy_functions(&mut body, &mut out, &mut extras)?;
    if let Some(opts) = body.get("web_search_options") {
        out.hosted.push(HostedTool::WebSearch {
            grounding: Grounding::Auto,
            variant: Some("web_search_options".into()),
        });
        if opts.as_object().is_some_and(|o| !o.is_empty()) {
            extras.push(Extra {
                pointer: "/web_search_options".into(),
                kind: ExtraKind::NotCarried,
                value: opts.clone(),
            });
        }
    }
    if let Some(tc) = body.get("tool_choice") {
        let dialect_choice =
            (tc.as_str().and_then(|s| dialect.choice(s))).or_else(|| typeless_function(tc));
        if dialect_choice.is_some() {
            wire(&mut extras, "/tool_choice".into(), tc.clone());
        }
        out.tool_choice = Some(match dialect_choice {
            Some(c) => c,
            None => tool_choice(tc, "/tool_choice")?,
        });
    }
    out.parallel_tool_calls = body.bool("parallel_tool_calls")?;
    out.max_tokens = body.count_any(&["max_completion_tokens", "max_tokens"])?;
    body.keep(NOT_CARRIED, ExtraKind::NotCarried, &mut extras);
    body.keep(dialect.fields(), ExtraKind::NotCarried, &mut extras);
    body.finish(&mut extras);
    Ok(DecodedRequest {
        request: out,
        extras,
    })
}

/// One message; `None` for one the neutral model cannot hold (kept as an extra).
fn message(
    m: &Value,
    ptr: &str,
    earlier: &[Message],
    extras: &mut Vec<Extra>,
) -> Result<Option<Message>, DecodeError> {
    let mut f = Fields::of(m, ptr, "a message")?;
    let role = f.req_str("role", "every message has a role")?;
    let content_ptr = f.at("content");
    let out = match role {
        "system" | "developer" | "user" => {
            let content =
                content_text(f.get("content"), &content_ptr, TEXT, extras)?.unwrap_or_default();
            f.keep(&["name"], ExtraKind::NotCarried, extras);
            match role {
                "system" => Message::System { content },
                "developer" => Message::Developer { content },
                _ => Message::User { content },
            }
        }
        "assistant" => {
            let text = content_text(f.get("content"), &content_ptr, TEXT, extras)?;
            let mut tool_calls = Vec::new();
            if let Some(calls) = f.array("tool_calls")? {
                for (i, c) in calls.iter().enumerate() {
                    tool_calls.push(call(c, &push(&f.at("tool_calls"), &i.to_string()), extras)?);
                }
            }
            if let Some((fptr, fc)) = f.get_any(&["function_call"]) {
                tool_calls.push(legacy_call(fc, &fptr, earlier, extras)?);
            }
            // A model server's reasoning text, given back (`reasoning.rs`).
            let texts = super::reasoning::FIELDS
                .iter()
                .filter_map(|k| Some((*k, f.get(k)?.as_str()?)));
            let opaque = super::reasoning::item(texts.collect::<Vec<_>>())
                .into_iter()
                .collect();
            f.keep(
                &["refusal", "name", "audio", "annotations"],
                ExtraKind::NotCarried,
                extras,
            );
            Message::Assistant {
                phase: None,
                text,
                tool_calls,
                opaque,
            }
        }
        "tool" => {
            let call_id = f.req_str("tool_call_id", "a tool result names the call it answers")?;
            let (content, parts) = read_parts(Api::Chat, f.get("content"), &content_ptr, extras)?;
            Message::Tool {
                call_id: call_id.to_string(),
                name: call_name(earlier, call_id),
                content,
                parts,
                is_error: false,
            }
        }
        "function" => {
            // The legacy result: answers the latest legacy call of that name.
            let name = f.req_str("name", "a function message names its function")?;
            let content =
                content_text(f.get("content"), &content_ptr, TEXT, extras)?.unwrap_or_default();
            wire(extras, push(ptr, "role"), Value::String("function".into()));
            Message::Tool {
                call_id: legacy_id(earlier, name)
                    .unwrap_or_else(|| format!("function_call-{name}")),
                name: name.to_string(),
                content,
                parts: Vec::new(),
                is_error: false,
            }
        }
        _ => {
            // Anything newer: kept whole.
            extras.push(Extra {
                pointer: ptr.to_string(),
                kind: ExtraKind::Unknown,
                value: m.clone(),
            });
            return Ok(None);
        }
    };
    f.finish(extras);
    Ok(Some(out))
}

/// The id given to the legacy assistant `function_call` of message `n` (the legacy form has none).
fn legacy_call(
    fc: &Value,
    ptr: &str,
    earlier: &[Message],
    extras: &mut Vec<Extra>,
) -> Result<ToolCall, DecodeError> {
    let mut g = Fields::of(fc, ptr, "a legacy function call")?;
    let name = g.req_str("name", "a function call names its function")?;
    let arguments = match g.get("arguments") {
        Some(a) => arguments(a, &g.at("arguments"))?,
        None => Value::Object(Default::default()),
    };
    g.finish(extras);
    let id = format!("function_call-{}", earlier.len());
    wire(extras, ptr.to_string(), Value::String(id.clone()));
    Ok(ToolCall {
        caller: None,
        id,
        name: name.to_string(),
        arguments,
        thought_signature: None,
        namespace: None,
    })
}

/// The made-up id of the latest legacy call of `name` (see [`legacy_call`]).
fn legacy_id(earlier: &[Message], name: &str) -> Option<String> {
    earlier.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|c| c.name == name && c.id.starts_with("function_call-"))
            .map(|c| c.id.clone()),
        _ => None,
    })
}

/// The legacy `functions` (tools, each a bare function definition) and `function_call` (the
/// tool choice: `none`, `auto`, or `{"name": …}`), each with a wire extra saying so. A request
/// with both `tool_choice` and `function_call` keeps `tool_choice`.
fn legacy_functions(
    body: &mut Fields<'_>,
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    if let Some(funcs) = body.array("functions")? {
        wire(
            extras,
            "/functions".into(),
            Value::String("functions".into()),
        );
        for (i, func) in funcs.iter().enumerate() {
            let ptr = push("/functions", &i.to_string());
            let mut g = Fields::of(func, &ptr, "a function definition")?;
            let name = g.req_str("name", "a function has a name")?;
            let description = g.str("description")?.map(str::to_string);
            let parameters = g.schema("parameters", None)?;
            g.finish(extras);
            out.tools
                .push(Tool::function(name, description, parameters));
        }
    }
    if let Some(fc) = body.get("function_call") {
        let choice = match fc {
            Value::String(s) if s == "auto" => ToolChoice::Auto,
            Value::String(s) if s == "none" => ToolChoice::None,
            Value::Object(o) => match o.get("name") {
                Some(Value::String(n)) => ToolChoice::Forced(n.clone()),
                _ => {
                    return Err(field_error(
                        "/function_call/name",
                        "missing (a forced function is named)",
                    ));
                }
            },
            other => {
                return Err(type_error(
                    "/function_call",
                    "`auto`, `none` or {\"name\": …}",
                    other,
                ));
            }
        };
        wire(extras, "/function_call".into(), fc.clone());
        if out.tool_choice.is_none() {
            out.tool_choice = Some(choice);
        }
    }
    Ok(())
}

fn call(c: &Value, ptr: &str, extras: &mut Vec<Extra>) -> Result<ToolCall, DecodeError> {
    let mut f = Fields::of(c, ptr, "a tool call")?;
    let id = f.req_str("id", "a tool call has an id")?;
    match f.str("type")? {
        None | Some("function") => {}
        Some(other) => {
            return Err(field_error(
                &f.at("type"),
                format!("`{other}` calls cannot be decoded (only `function`)"),
            ));
        }
    }
    let mut g = f.req_object(
        "function",
        "a tool call names its function",
        "the called function",
    )?;
    let name = g.req_str("name", "a tool call names its function")?;
    let arguments = match g.get("arguments") {
        Some(a) => arguments(a, &g.at("arguments"))?,
        None => Value::Object(Default::default()),
    };
    g.finish(extras);
    f.finish(extras);
    Ok(ToolCall::unsigned(
        id.to_string(),
        name.to_string(),
        arguments,
    ))
}

/// A function tool (`type` may be left out, as Mistral's SDK does); another tool type
/// (`custom`, …) is kept as an extra.
fn tool(t: &Value, ptr: &str, extras: &mut Vec<Extra>) -> Result<Option<Tool>, DecodeError> {
    let mut f = Fields::of(t, ptr, "a tool")?;
    match f.str("type")? {
        Some("function") => {}
        // Mistral's own SDK sends function tools without `type`; its API takes them.
        None if t.get("function").is_some() => {}
        None => return Err(field_error(&f.at("type"), "missing (`function`)")),
        Some(_) => {
            extras.push(Extra {
                pointer: ptr.to_string(),
                kind: ExtraKind::NotCarried,
                value: t.clone(),
            });
            return Ok(None);
        }
    }
    let mut g = f.req_object(
        "function",
        "a function tool defines `function`",
        "a function definition",
    )?;
    let name = g.req_str("name", "a function tool has a name")?;
    let description = g.str("description")?.map(str::to_string);
    let parameters = g.schema("parameters", None)?;
    let strict = g.strict(extras)?;
    g.finish(extras);
    f.finish(extras);
    Ok(Some(Tool {
        strict,
        ..Tool::function(name, description, parameters)
    }))
}

/// `{"type":"function","function":{"name":…}}` → the name.
fn function_name(v: &Value, ptr: &str) -> Result<String, DecodeError> {
    let func = v
        .get("function")
        .ok_or_else(|| field_error(ptr, "missing `function` (a named function)"))?;
    match func.get("name") {
        Some(Value::String(n)) => Ok(n.clone()),
        Some(other) => Err(type_error(
            &format!("{ptr}/function/name"),
            "a string",
            other,
        )),
        None => Err(field_error(&format!("{ptr}/function/name"), "missing")),
    }
}

/// `{"function": {"name": …}}` without `type`: a named function, as Hugging Face's clients
/// spell it (huggingface_hub's `ChatCompletionInputToolChoiceClass`, the router's TGI spec)
/// and OpenAI-compatible servers take it; OpenAI's own spelling has `"type": "function"`.
fn typeless_function(v: &Value) -> Option<ToolChoice> {
    let o = v.as_object()?;
    if o.contains_key("type") {
        return None;
    }
    let name = o.get("function")?.get("name")?.as_str()?;
    Some(ToolChoice::Forced(name.to_string()))
}

fn tool_choice(v: &Value, ptr: &str) -> Result<ToolChoice, DecodeError> {
    match v {
        Value::String(s) => string_choice(s, ptr),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("function") => Ok(ToolChoice::Forced(function_name(v, ptr)?)),
            Some("allowed_tools") => {
                let at = o
                    .get("allowed_tools")
                    .ok_or_else(|| field_error(ptr, "missing `allowed_tools`"))?;
                allowed(at, &format!("{ptr}/allowed_tools"), |t, p| {
                    function_name(t, p)
                })
            }
            _ => Err(field_error(
                &format!("{ptr}/type"),
                "expected `function` or `allowed_tools`",
            )),
        },
        other => Err(type_error(ptr, "a string or an object", other)),
    }
}

/// A tool choice given as a string, spelled alike in Chat and Responses.
pub(crate) fn string_choice(s: &str, ptr: &str) -> Result<ToolChoice, DecodeError> {
    match s {
        "auto" => Ok(ToolChoice::Auto),
        "none" => Ok(ToolChoice::None),
        "required" => Ok(ToolChoice::Required),
        other => Err(field_error(
            ptr,
            format!("unknown tool choice `{other}` (auto, none, required, or an object)"),
        )),
    }
}

/// `{"mode": "auto"|"required", "tools": [...]}` (Chat nests it; Responses puts it flat).
pub(crate) fn allowed(
    v: &Value,
    ptr: &str,
    name_of: impl Fn(&Value, &str) -> Result<String, DecodeError>,
) -> Result<ToolChoice, DecodeError> {
    let mode = match v.get("mode").and_then(Value::as_str) {
        Some("auto") => AllowedMode::Auto,
        Some("required") => AllowedMode::Required,
        _ => {
            return Err(field_error(
                &format!("{ptr}/mode"),
                "expected `auto` or `required`",
            ));
        }
    };
    let Some(tools) = v.get("tools").and_then(Value::as_array) else {
        return Err(field_error(
            &format!("{ptr}/tools"),
            "expected an array of tools",
        ));
    };
    let tools = tools
        .iter()
        .enumerate()
        .map(|(i, t)| name_of(t, &format!("{ptr}/tools/{i}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ToolChoice::Allowed { mode, tools })
}
