//! What the upstream checks compare, read from a request body in any of the four formats: the
//! tools (name, description, schema, strict), the tool choice's meaning, the parallel switch,
//! hosted search, and tool results with the call ids they answer.
//! (Interim reader until `providers::decode_request` lands; the checks use only this view.)

use serde_json::Value;

use crate::model::{AllowedMode, Provider, ToolChoice};

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ToolView {
    pub name: String,
    pub description: Option<String>,
    pub parameters: Value,
    pub strict: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct RequestView {
    pub tools: Vec<ToolView>,
    /// `None`: omitted (the provider's default, auto).
    pub choice: Option<ToolChoice>,
    /// `Some(false)`: parallel calls switched off.
    pub parallel: Option<bool>,
    pub hosted_search: bool,
    /// `(call id, tool name or "")` of every tool call in the conversation.
    pub calls: Vec<(String, String)>,
    /// Call ids every tool result answers.
    pub results: Vec<String>,
    /// Whether the request asks for a stream.
    pub stream: bool,
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

/// Reads `body` as a request of `provider` (`path` tells Gemini's stream method).
pub(super) fn read(provider: Provider, path: &str, body: &Value) -> RequestView {
    let mut view = RequestView {
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false)
            || path.contains(":streamGenerateContent"),
        ..RequestView::default()
    };
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match provider {
        Provider::OpenaiChat | Provider::TextProtocol => {
            for t in &tools {
                if let Some(f) = t.get("function") {
                    view.tools.push(ToolView {
                        name: s(f, "name").unwrap_or_default(),
                        description: s(f, "description"),
                        parameters: f.get("parameters").cloned().unwrap_or(Value::Null),
                        strict: f.get("strict").and_then(Value::as_bool),
                    });
                } else if s(t, "type").is_some_and(|x| x.starts_with("web_search")) {
                    view.hosted_search = true;
                }
            }
            view.hosted_search |= body.get("web_search_options").is_some();
            view.choice = body.get("tool_choice").map(openai_choice);
            view.parallel = body.get("parallel_tool_calls").and_then(Value::as_bool);
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for c in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let name = c
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    view.calls
                        .push((s(c, "id").unwrap_or_default(), name.to_string()));
                }
                if let Some(id) = s(m, "tool_call_id") {
                    view.results.push(id);
                }
            }
        }
        Provider::OpenaiResponses => {
            for t in &tools {
                match t.get("type").and_then(Value::as_str) {
                    Some("function") => view.tools.push(ToolView {
                        name: s(t, "name").unwrap_or_default(),
                        description: s(t, "description"),
                        parameters: t.get("parameters").cloned().unwrap_or(Value::Null),
                        strict: t.get("strict").and_then(Value::as_bool),
                    }),
                    Some(x) if x.starts_with("web_search") => view.hosted_search = true,
                    _ => {}
                }
            }
            view.choice = body.get("tool_choice").map(openai_choice);
            view.parallel = body.get("parallel_tool_calls").and_then(Value::as_bool);
            for item in body
                .get("input")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match item.get("type").and_then(Value::as_str) {
                    Some("function_call") => view.calls.push((
                        s(item, "call_id").unwrap_or_default(),
                        s(item, "name").unwrap_or_default(),
                    )),
                    Some("function_call_output") => {
                        view.results.push(s(item, "call_id").unwrap_or_default())
                    }
                    _ => {}
                }
            }
        }
        Provider::Anthropic => {
            for t in &tools {
                if t.get("input_schema").is_some() {
                    view.tools.push(ToolView {
                        name: s(t, "name").unwrap_or_default(),
                        description: s(t, "description"),
                        parameters: t.get("input_schema").cloned().unwrap_or(Value::Null),
                        strict: t.get("strict").and_then(Value::as_bool),
                    });
                } else if s(t, "type").is_some_and(|x| x.starts_with("web_search")) {
                    view.hosted_search = true;
                }
            }
            if let Some(tc) = body.get("tool_choice") {
                view.choice = match tc.get("type").and_then(Value::as_str) {
                    Some("auto") => Some(ToolChoice::Auto),
                    Some("any") => Some(ToolChoice::Required),
                    Some("none") => Some(ToolChoice::None),
                    Some("tool") => Some(ToolChoice::Forced(s(tc, "name").unwrap_or_default())),
                    _ => None,
                };
                if tc.get("disable_parallel_tool_use").and_then(Value::as_bool) == Some(true) {
                    view.parallel = Some(false);
                }
            }
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for b in m
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_use") => view.calls.push((
                            s(b, "id").unwrap_or_default(),
                            s(b, "name").unwrap_or_default(),
                        )),
                        Some("tool_result") => {
                            view.results.push(s(b, "tool_use_id").unwrap_or_default())
                        }
                        _ => {}
                    }
                }
            }
        }
        Provider::Gemini => {
            for t in &tools {
                for f in t
                    .get("functionDeclarations")
                    .or_else(|| t.get("function_declarations"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    view.tools.push(ToolView {
                        name: s(f, "name").unwrap_or_default(),
                        description: s(f, "description"),
                        parameters: f
                            .get("parametersJsonSchema")
                            .or_else(|| f.get("parameters"))
                            .cloned()
                            .unwrap_or(Value::Null),
                        strict: None,
                    });
                }
                if t.get("googleSearch").is_some() || t.get("google_search").is_some() {
                    view.hosted_search = true;
                }
            }
            let fcc = body
                .pointer("/toolConfig/functionCallingConfig")
                .or_else(|| body.pointer("/tool_config/function_calling_config"));
            if let Some(c) = fcc {
                let allowed: Vec<String> = c
                    .get("allowedFunctionNames")
                    .or_else(|| c.get("allowed_function_names"))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                // As the request decoder reads it: names count only with ANY or VALIDATED
                // (AUTO ignores them); VALIDATED with names is an allowed subset, auto.
                view.choice = match c.get("mode").and_then(Value::as_str) {
                    Some("AUTO") => Some(ToolChoice::Auto),
                    Some("VALIDATED") if !allowed.is_empty() => Some(ToolChoice::Allowed {
                        mode: AllowedMode::Auto,
                        tools: allowed,
                    }),
                    Some("NONE") => Some(ToolChoice::None),
                    Some("ANY") if allowed.len() == 1 => {
                        Some(ToolChoice::Forced(allowed[0].clone()))
                    }
                    Some("ANY") if allowed.is_empty() => Some(ToolChoice::Required),
                    Some("ANY") => Some(ToolChoice::Allowed {
                        mode: AllowedMode::Required,
                        tools: allowed,
                    }),
                    Some("VALIDATED") => Some(ToolChoice::Auto),
                    _ => None,
                };
            }
            for c in body
                .get("contents")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for p in c
                    .get("parts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(fc) = p.get("functionCall") {
                        view.calls.push((
                            s(fc, "id").unwrap_or_default(),
                            s(fc, "name").unwrap_or_default(),
                        ));
                    }
                    if let Some(fr) = p.get("functionResponse") {
                        view.results
                            .push(s(fr, "id").or_else(|| s(fr, "name")).unwrap_or_default());
                    }
                }
            }
        }
    }
    view
}

fn openai_choice(v: &Value) -> ToolChoice {
    match v {
        Value::String(x) if x == "none" => ToolChoice::None,
        Value::String(x) if x == "required" => ToolChoice::Required,
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("allowed_tools") => {
            let inner = o.get("allowed_tools").unwrap_or(v);
            let mode = if inner.get("mode").and_then(Value::as_str) == Some("required") {
                AllowedMode::Required
            } else {
                AllowedMode::Auto
            };
            let tools = inner
                .get("tools")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.pointer("/function/name").or_else(|| t.get("name")))
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            ToolChoice::Allowed { mode, tools }
        }
        Value::Object(o) => {
            let name = o
                .get("function")
                .and_then(|f| f.get("name"))
                .or_else(|| o.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            ToolChoice::Forced(name.to_string())
        }
        _ => ToolChoice::Auto,
    }
}

/// The upstream provider a request path belongs to.
pub(super) fn provider_for_path(path: &str) -> Option<Provider> {
    match path {
        "/v1/chat/completions" | "/chat/completions" => Some(Provider::OpenaiChat),
        "/v1/responses" | "/responses" => Some(Provider::OpenaiResponses),
        "/v1/messages" => Some(Provider::Anthropic),
        p if p.contains(":generateContent") || p.contains(":streamGenerateContent") => {
            Some(Provider::Gemini)
        }
        _ => None,
    }
}
