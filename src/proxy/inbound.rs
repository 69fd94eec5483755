//! Inbound requests: the path says the format, the body becomes the neutral request. A malformed
//! request is refused with a message naming the field.
//!
//! The body decoding below reads the tool-calling subset of each format (model, messages with
//! tool calls and results, tools, tool_choice, the parallel switch, hosted web search, stream,
//! max tokens). It is replaced by `providers::decode_request` (issue 14) once that lands.

use serde_json::Value;

use crate::model::{
    AllowedMode, ChatRequest, Grounding, HostedTool, Message, StrictPolicy, Tool, ToolCall,
    ToolChoice, empty_parameters,
};
use crate::respond::Inbound;

/// The inbound format of a path, with Gemini's model and stream flag from the path.
pub(crate) fn route(path: &str, query: Option<&str>) -> Option<(Inbound, Option<String>, bool)> {
    match path {
        "/v1/chat/completions" | "/chat/completions" => Some((Inbound::Chat, None, false)),
        "/v1/responses" | "/responses" => Some((Inbound::Responses, None, false)),
        "/v1/messages" => Some((Inbound::Messages, None, false)),
        p => {
            let rest = p
                .strip_prefix("/v1beta/models/")
                .or_else(|| p.strip_prefix("/v1/models/"))?;
            let (model, method) = rest.rsplit_once(':')?;
            let stream = match method {
                "generateContent" => false,
                "streamGenerateContent" => true,
                _ => return None,
            };
            let sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
            Some((
                Inbound::Gemini { sse: stream && sse },
                Some(model.to_string()),
                stream,
            ))
        }
    }
}

type Bad = String;

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn obj_args(raw: &Value) -> Value {
    match raw {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        v => v.clone(),
    }
}

fn base(model: String, stream: bool) -> ChatRequest {
    ChatRequest {
        model,
        messages: Vec::new(),
        tools: Vec::new(),
        hosted: Vec::new(),
        tool_choice: None,
        parallel_tool_calls: None,
        stream,
        max_tokens: None,
        strict: StrictPolicy::Auto,
        thinking: None,
    }
}

fn need_str<'a>(v: &'a Value, field: &str) -> Result<&'a str, Bad> {
    v.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("`{field}` is required and must be a non-empty string"))
}

fn need_array<'a>(v: &'a Value, field: &str) -> Result<&'a [Value], Bad> {
    v.get(field)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| format!("`{field}` is required and must be an array"))
}

fn tools_array(v: &Value) -> Result<&[Value], Bad> {
    match v.get("tools") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err("`tools` must be an array".into()),
    }
}

fn web_search(choice_required: bool) -> HostedTool {
    HostedTool::WebSearch {
        grounding: if choice_required {
            Grounding::Required
        } else {
            Grounding::Auto
        },
        variant: None,
    }
}

/// The neutral request of a body in `inbound`'s format.
pub(crate) fn decode(
    inbound: Inbound,
    body: &Value,
    path_model: Option<&str>,
    stream: bool,
) -> Result<ChatRequest, Bad> {
    if !body.is_object() {
        return Err("the request body must be a JSON object".into());
    }
    match inbound {
        Inbound::Chat => chat(body),
        Inbound::Responses => responses(body),
        Inbound::Messages => messages(body),
        Inbound::Gemini { .. } => gemini(body, path_model.unwrap_or(""), stream),
    }
}

fn openai_choice(raw: Option<&Value>, flat: bool) -> Result<Option<ToolChoice>, Bad> {
    let Some(raw) = raw.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let name = |v: &Value| {
        if flat {
            v.get("name")
        } else {
            v.pointer("/function/name")
        }
        .and_then(Value::as_str)
        .map(str::to_string)
    };
    Ok(Some(match raw {
        Value::String(s) => match s.as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            other => return Err(format!("`tool_choice`: unknown value `{other}`")),
        },
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("function") => {
                ToolChoice::Forced(name(raw).ok_or("`tool_choice.function.name` is required")?)
            }
            Some("allowed_tools") => {
                let spec = if flat { raw } else { &raw["allowed_tools"] };
                let mode = match spec.get("mode").and_then(Value::as_str) {
                    Some("required") => AllowedMode::Required,
                    _ => AllowedMode::Auto,
                };
                let tools = spec
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(name)
                    .collect();
                ToolChoice::Allowed { mode, tools }
            }
            Some(t) if t.starts_with("web_search") => ToolChoice::Required,
            _ => return Err("`tool_choice`: unknown object".into()),
        },
        _ => return Err("`tool_choice` must be a string or an object".into()),
    }))
}

fn chat(b: &Value) -> Result<ChatRequest, Bad> {
    let mut r = base(
        need_str(b, "model")?.to_string(),
        b.get("stream") == Some(&Value::Bool(true)),
    );
    for (i, t) in tools_array(b)?.iter().enumerate() {
        let f = t
            .get("function")
            .ok_or_else(|| format!("`tools[{i}].function` is required"))?;
        r.tools.push(Tool {
            name: need_str(f, "name")
                .map_err(|e| format!("`tools[{i}].function`: {e}"))?
                .to_string(),
            description: f
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            parameters: f
                .get("parameters")
                .cloned()
                .unwrap_or_else(empty_parameters),
            strict: f.get("strict").and_then(Value::as_bool),
        });
    }
    r.tool_choice = openai_choice(b.get("tool_choice"), false)?;
    r.parallel_tool_calls = b.get("parallel_tool_calls").and_then(Value::as_bool);
    r.max_tokens = b
        .get("max_completion_tokens")
        .or_else(|| b.get("max_tokens"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    for (i, m) in need_array(b, "messages")?.iter().enumerate() {
        let content = text_of(m.get("content").unwrap_or(&Value::Null));
        r.messages
            .push(match m.get("role").and_then(Value::as_str) {
                Some("system") => Message::System { content },
                Some("developer") => Message::Developer { content },
                Some("user") => Message::User { content },
                Some("assistant") => Message::Assistant {
                    text: (!content.is_empty()).then_some(content),
                    tool_calls: m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(|c| ToolCall {
                            id: c
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            name: c
                                .pointer("/function/name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            arguments: obj_args(
                                c.pointer("/function/arguments").unwrap_or(&Value::Null),
                            ),
                            thought_signature: None,
                        })
                        .collect(),
                    opaque: Vec::new(),
                },
                Some("tool") => Message::Tool {
                    call_id: m
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    name: String::new(),
                    content,
                    is_error: false,
                },
                _ => {
                    return Err(format!(
                        "`messages[{i}].role` must be system, developer, user, assistant or tool"
                    ));
                }
            });
    }
    Ok(r)
}

fn responses(b: &Value) -> Result<ChatRequest, Bad> {
    let mut r = base(
        need_str(b, "model")?.to_string(),
        b.get("stream") == Some(&Value::Bool(true)),
    );
    r.tool_choice = openai_choice(b.get("tool_choice"), true)?;
    let required = matches!(r.tool_choice, Some(ToolChoice::Required));
    for (i, t) in tools_array(b)?.iter().enumerate() {
        match t.get("type").and_then(Value::as_str) {
            Some("function") => r.tools.push(Tool {
                name: need_str(t, "name")
                    .map_err(|e| format!("`tools[{i}]`: {e}"))?
                    .to_string(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                parameters: match t.get("parameters") {
                    None | Some(Value::Null) => empty_parameters(),
                    Some(p) => p.clone(),
                },
                strict: t.get("strict").and_then(Value::as_bool),
            }),
            Some(w) if w.starts_with("web_search") => {
                r.hosted.push(web_search(required));
            }
            _ => {
                return Err(format!(
                    "`tools[{i}].type` must be `function` or a web_search tool"
                ));
            }
        }
    }
    if required && !r.hosted.is_empty() && r.tools.is_empty() {
        r.tool_choice = None; // the choice forced the search; it travels in `grounding`
    }
    r.parallel_tool_calls = b.get("parallel_tool_calls").and_then(Value::as_bool);
    r.max_tokens = b
        .get("max_output_tokens")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    if let Some(ins) = b.get("instructions").and_then(Value::as_str) {
        r.messages.push(Message::System {
            content: ins.to_string(),
        });
    }
    match b.get("input") {
        Some(Value::String(s)) => r.messages.push(Message::User { content: s.clone() }),
        Some(Value::Array(items)) => {
            for (i, it) in items.iter().enumerate() {
                match it.get("type").and_then(Value::as_str).unwrap_or("message") {
                    "message" => {
                        let content = text_of(it.get("content").unwrap_or(&Value::Null));
                        r.messages
                            .push(match it.get("role").and_then(Value::as_str) {
                                Some("system") => Message::System { content },
                                Some("developer") => Message::Developer { content },
                                Some("assistant") => Message::Assistant {
                                    text: Some(content),
                                    tool_calls: vec![],
                                    opaque: vec![],
                                },
                                _ => Message::User { content },
                            });
                    }
                    "function_call" => {
                        let call = ToolCall {
                            id: it
                                .get("call_id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            name: it
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            arguments: obj_args(it.get("arguments").unwrap_or(&Value::Null)),
                            thought_signature: None,
                        };
                        match r.messages.last_mut() {
                            Some(Message::Assistant { tool_calls, .. }) => tool_calls.push(call),
                            _ => r.messages.push(Message::Assistant {
                                text: None,
                                tool_calls: vec![call],
                                opaque: vec![],
                            }),
                        }
                    }
                    "function_call_output" => r.messages.push(Message::Tool {
                        call_id: it
                            .get("call_id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        name: String::new(),
                        content: text_of(it.get("output").unwrap_or(&Value::Null)),
                        is_error: false,
                    }),
                    other => return Err(format!("`input[{i}].type` `{other}` is not supported")),
                }
            }
        }
        _ => return Err("`input` is required (a string or an array of items)".into()),
    }
    Ok(r)
}

fn messages(b: &Value) -> Result<ChatRequest, Bad> {
    let mut r = base(
        need_str(b, "model")?.to_string(),
        b.get("stream") == Some(&Value::Bool(true)),
    );
    r.max_tokens = Some(
        b.get("max_tokens")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or("`max_tokens` is required and must be a positive integer")?,
    );
    let choice = b.get("tool_choice");
    let required = choice.and_then(|c| c.get("type")).and_then(Value::as_str) == Some("any");
    for (i, t) in tools_array(b)?.iter().enumerate() {
        match t.get("type").and_then(Value::as_str) {
            None | Some("custom") => r.tools.push(Tool {
                name: need_str(t, "name")
                    .map_err(|e| format!("`tools.{i}`: {e}"))?
                    .to_string(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                parameters: t
                    .get("input_schema")
                    .cloned()
                    .ok_or_else(|| format!("`tools.{i}.input_schema` is required"))?,
                strict: t.get("strict").and_then(Value::as_bool),
            }),
            Some(w) if w.starts_with("web_search") => r.hosted.push(web_search(required)),
            Some(other) => return Err(format!("`tools.{i}.type` `{other}` is not supported")),
        }
    }
    if let Some(c) = choice.filter(|c| !c.is_null()) {
        r.tool_choice = Some(match c.get("type").and_then(Value::as_str) {
            Some("auto") => ToolChoice::Auto,
            Some("any") => ToolChoice::Required,
            Some("none") => ToolChoice::None,
            Some("tool") => ToolChoice::Forced(
                need_str(c, "name")
                    .map_err(|e| format!("`tool_choice`: {e}"))?
                    .to_string(),
            ),
            _ => return Err("`tool_choice.type` must be auto, any, none or tool".into()),
        });
        if c.get("disable_parallel_tool_use") == Some(&Value::Bool(true)) {
            r.parallel_tool_calls = Some(false);
        }
    }
    match b.get("system") {
        None | Some(Value::Null) => {}
        Some(s) => r.messages.push(Message::System {
            content: text_of(s),
        }),
    }
    for (i, m) in need_array(b, "messages")?.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str);
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(a)) => a.clone(),
            _ => return Err(format!("`messages.{i}.content` is required")),
        };
        match role {
            Some("user") => {
                let mut text = String::new();
                for bl in &blocks {
                    match bl.get("type").and_then(Value::as_str) {
                        Some("tool_result") => r.messages.push(Message::Tool {
                            call_id: bl
                                .get("tool_use_id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            name: String::new(),
                            content: text_of(bl.get("content").unwrap_or(&Value::Null)),
                            is_error: bl.get("is_error") == Some(&Value::Bool(true)),
                        }),
                        _ => text.push_str(bl.get("text").and_then(Value::as_str).unwrap_or("")),
                    }
                }
                if !text.is_empty() {
                    r.messages.push(Message::User { content: text });
                }
            }
            Some("assistant") => {
                let mut text = String::new();
                let mut calls = Vec::new();
                for bl in &blocks {
                    match bl.get("type").and_then(Value::as_str) {
                        Some("tool_use") => calls.push(ToolCall {
                            id: bl
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            name: bl
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            arguments: bl
                                .get("input")
                                .cloned()
                                .unwrap_or_else(|| serde_json::json!({})),
                            thought_signature: None,
                        }),
                        _ => text.push_str(bl.get("text").and_then(Value::as_str).unwrap_or("")),
                    }
                }
                r.messages.push(Message::Assistant {
                    text: (!text.is_empty()).then_some(text),
                    tool_calls: calls,
                    opaque: vec![],
                });
            }
            _ => return Err(format!("`messages.{i}.role` must be user or assistant")),
        }
    }
    Ok(r)
}

fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

fn gemini(b: &Value, model: &str, stream: bool) -> Result<ChatRequest, Bad> {
    if model.is_empty() {
        return Err("the path names no model".into());
    }
    let mut r = base(model.to_string(), stream);
    let cfg = field(b, "toolConfig", "tool_config")
        .and_then(|c| field(c, "functionCallingConfig", "function_calling_config"));
    for (i, t) in b
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (k, spec) in t.as_object().into_iter().flatten() {
            match k.as_str() {
                "functionDeclarations" | "function_declarations" => {
                    for (j, d) in spec.as_array().into_iter().flatten().enumerate() {
                        r.tools.push(Tool {
                            name: need_str(d, "name")
                                .map_err(|e| {
                                    format!("`tools[{i}].functionDeclarations[{j}]`: {e}")
                                })?
                                .to_string(),
                            description: d
                                .get("description")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                            parameters: field(d, "parametersJsonSchema", "parameters_json_schema")
                                .or_else(|| d.get("parameters"))
                                .cloned()
                                .unwrap_or_else(empty_parameters),
                            strict: None,
                        });
                    }
                }
                "googleSearch" | "google_search" => r.hosted.push(web_search(false)),
                other => return Err(format!("`tools[{i}].{other}` is not supported")),
            }
        }
    }
    if let Some(c) = cfg {
        let names: Vec<String> = field(c, "allowedFunctionNames", "allowed_function_names")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        r.tool_choice = Some(
            match (
                c.get("mode").and_then(Value::as_str).unwrap_or("AUTO"),
                names.len(),
            ) {
                ("NONE", _) => ToolChoice::None,
                ("ANY", 0) => ToolChoice::Required,
                ("ANY", 1) => ToolChoice::Forced(names[0].clone()),
                ("ANY", _) => ToolChoice::Allowed {
                    mode: AllowedMode::Required,
                    tools: names,
                },
                (_, 0) => ToolChoice::Auto,
                (_, _) => ToolChoice::Allowed {
                    mode: AllowedMode::Auto,
                    tools: names,
                },
            },
        );
    }
    if let Some(si) = field(b, "systemInstruction", "system_instruction") {
        r.messages.push(Message::System {
            content: text_of(si.get("parts").unwrap_or(&Value::Null)),
        });
    }
    r.max_tokens = field(b, "generationConfig", "generation_config")
        .and_then(|g| field(g, "maxOutputTokens", "max_output_tokens"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    for (i, c) in need_array(b, "contents")?.iter().enumerate() {
        let parts = c
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("`contents[{i}].parts` is required"))?;
        let model_turn = c.get("role").and_then(Value::as_str) == Some("model");
        let mut text = String::new();
        let mut calls = Vec::new();
        for p in parts {
            if let Some(fc) = field(p, "functionCall", "function_call") {
                calls.push(ToolCall {
                    id: fc
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    name: fc
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: fc
                        .get("args")
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({})),
                    thought_signature: field(p, "thoughtSignature", "thought_signature")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            } else if let Some(fr) = field(p, "functionResponse", "function_response") {
                r.messages.push(Message::Tool {
                    call_id: fr
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    name: fr
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    content: fr.get("response").map(Value::to_string).unwrap_or_default(),
                    is_error: false,
                });
            } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                text.push_str(t);
            }
        }
        if model_turn {
            r.messages.push(Message::Assistant {
                text: (!text.is_empty()).then_some(text),
                tool_calls: calls,
                opaque: vec![],
            });
        } else if !text.is_empty() {
            r.messages.push(Message::User { content: text });
        }
    }
    Ok(r)
}
