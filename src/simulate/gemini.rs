//! Google Gemini (`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`):
//! request reading, `GenerateContentResponse` bodies with grounding metadata, SSE (CRLF) and
//! JSON-array streams.

use serde_json::{Map, Value, json};

use super::decide::{Ask, FnTool, Turn};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::wire;
use crate::model::{AllowedMode, Provider, ToolChoice, empty_parameters};
use crate::scenario::{StreamFault, StreamShape};

const JSON_TYPE: &str = "application/json; charset=UTF-8";

/// `camelCase` or `snake_case` field (the REST API accepts both).
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

fn invalid(message: String) -> Rejection {
    Rejection::bad_request(message)
}

pub(crate) fn parse(body: &Value, model: &str, stream: bool) -> Result<Ask, Rejection> {
    let Some(contents) = body.get("contents").and_then(Value::as_array) else {
        return Err(invalid(
            "* GenerateContentRequest.contents: contents is not specified\n".into(),
        ));
    };
    let mut ask = Ask::new(model);
    ask.stream = stream;
    for (i, tool) in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(obj) = tool.as_object() else {
            continue;
        };
        for (key, spec) in obj {
            match key.as_str() {
                "functionDeclarations" | "function_declarations" => {
                    read_declarations(i, spec, &mut ask)?;
                }
                other => {
                    if matches!(
                        other,
                        "googleSearch"
                            | "google_search"
                            | "googleSearchRetrieval"
                            | "google_search_retrieval"
                    ) && ask.search.is_none()
                    {
                        ask.search = Some(other.to_string());
                    }
                    ask.hosted_types.push(other.to_string());
                }
            }
        }
    }
    read_config(body, &mut ask)?;
    read_contents(contents, &mut ask);
    Ok(ask)
}

fn read_declarations(i: usize, spec: &Value, ask: &mut Ask) -> Result<(), Rejection> {
    for (j, d) in spec.as_array().into_iter().flatten().enumerate() {
        let name = d.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            return Err(invalid(format!(
                "* GenerateContentRequest.tools[{i}].function_declarations[{j}].name: Name cannot be empty.\n"
            )));
        }
        let schema = field(d, "parametersJsonSchema", "parameters_json_schema")
            .or_else(|| d.get("parameters"))
            .cloned()
            .unwrap_or_else(empty_parameters);
        ask.tools.push(FnTool {
            name: name.to_string(),
            schema,
            strict: false, // Gemini has no strict flag (ANY/VALIDATED modes enforce schemas)
        });
    }
    Ok(())
}

fn read_config(body: &Value, ask: &mut Ask) -> Result<(), Rejection> {
    let Some(cfg) = field(body, "toolConfig", "tool_config")
        .and_then(|c| field(c, "functionCallingConfig", "function_calling_config"))
    else {
        return Ok(());
    };
    ask.raw_choice = cfg.clone();
    if ask.tools.is_empty() {
        return Err(invalid(
            "Function calling config is set without function_declarations.".into(),
        ));
    }
    let names: Vec<String> = field(cfg, "allowedFunctionNames", "allowed_function_names")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if let Some((k, n)) = names.iter().enumerate().find(|(_, n)| !ask.has_tool(n)) {
        return Err(invalid(format!(
            "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names[{k}]: function '{n}' is not declared in tools.\n"
        )));
    }
    let mode = cfg.get("mode").and_then(Value::as_str).unwrap_or("AUTO");
    ask.choice = match (mode, names.len()) {
        ("NONE", _) => ToolChoice::None,
        ("ANY", 0) => ToolChoice::Required,
        ("ANY", 1) => ToolChoice::Forced(names[0].clone()),
        ("ANY", _) => ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools: names,
        },
        ("AUTO" | "VALIDATED" | "MODE_UNSPECIFIED", 0) => ToolChoice::Auto,
        ("AUTO" | "VALIDATED" | "MODE_UNSPECIFIED", _) => ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            tools: names,
        },
        (other, _) => {
            return Err(invalid(format!(
                "Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), \"{other}\""
            )));
        }
    };
    Ok(())
}

fn read_contents(contents: &[Value], ask: &mut Ask) {
    let parts = |c: &Value| {
        c.get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if let Some(last) = contents.last() {
        let results: Vec<String> = parts(last)
            .iter()
            .filter_map(|p| field(p, "functionResponse", "function_response"))
            .map(|r| wire::compact(r.get("response").unwrap_or(&Value::Null)))
            .collect();
        ask.set_tool_results(results);
    }
    ask.rounds_done = contents
        .iter()
        .filter(|c| {
            parts(c)
                .iter()
                .any(|p| field(p, "functionResponse", "function_response").is_some())
        })
        .count();
    let is_user = |c: &&Value| {
        c.get("role")
            .and_then(Value::as_str)
            .is_none_or(|r| r == "user")
    };
    if let Some(u) = contents.iter().rev().find(is_user) {
        ask.user_text = parts(u)
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect();
    }
}

fn grounding(turn: &Turn) -> Option<Value> {
    let search = turn.search.as_ref()?;
    let mut g = Map::new();
    g.insert("searchEntryPoint".into(), json!({"renderedContent": format!(
        "<div class=\"container\"><a class=\"chip\" href=\"https://www.google.com/search?q=example\">{}</a></div>",
        search.query)}));
    if !search.hits.is_empty() {
        let chunks: Vec<Value> = search
            .hits
            .iter()
            .map(|h| json!({"web": {"uri": h.url, "title": h.title}}))
            .collect();
        g.insert("groundingChunks".into(), Value::Array(chunks));
        let mut supports = Vec::new();
        let mut at = 0usize;
        for seg in &turn.segments {
            if let Some(i) = seg.cites {
                supports.push(json!({"segment": {"startIndex": at, "endIndex": at + seg.text.len(), "text": seg.text},
                                     "groundingChunkIndices": [i]}));
            }
            at += seg.text.len();
        }
        g.insert("groundingSupports".into(), Value::Array(supports));
    }
    g.insert("webSearchQueries".into(), json!([search.query]));
    Some(Value::Object(g))
}

fn parts(ctx: &Ctx<'_>, turn: &Turn) -> Vec<Value> {
    let mut parts = Vec::new();
    if let Some(r) = &turn.wire.reasoning {
        parts.push(json!({"text": r, "thought": true}));
    }
    if turn.has_text() {
        parts.push(json!({"text": turn.text()}));
    }
    // A call cut by the token limit is never emitted: Gemini sends calls whole.
    let emitted = turn.calls.len() - usize::from(turn.wire.cut_last_call);
    let ids = super::decide::call_ids(Provider::Gemini, &turn.calls, |_| None);
    for (i, c) in turn.calls.iter().take(emitted).enumerate() {
        let mut call = json!({"name": c.name});
        // Gemini's calls carry no id unless the scenario pins one (`functionCall.id`).
        if let Some(id) = &ids[i] {
            call["id"] = json!(id);
        }
        if let Some(args) = c.arguments_object() {
            call["args"] = args.clone();
        }
        let mut p = json!({ "functionCall": call });
        // Gemini signs only the first call of a parallel batch.
        if i == 0 {
            p["thoughtSignature"] = json!(wire::id("CiQB", ctx.seed, "signature", 0, 60));
        }
        parts.push(p);
    }
    parts
}

fn finish_reason(turn: &Turn) -> &'static str {
    if turn.wire.refusal.is_some() {
        "SAFETY"
    } else if turn.wire.cut_last_call {
        "MAX_TOKENS"
    } else {
        "STOP"
    }
}

/// Whether the API validates thought signatures on `model`, a path's model with maybe a
/// `~scenario` suffix (the rule: [`crate::providers::gemini::validates_signatures`]).
pub(crate) fn validates_signatures(model: &str) -> bool {
    let model = model.split(super::named::MODEL_SEPARATOR).next();
    crate::providers::gemini::validates_signatures(model.unwrap_or_default())
}

/// Where the current turn starts: after the last user content with a part that is not a
/// `functionResponse` (Google validates only the current turn's steps, "we don't validate
/// previous turns").
fn current_turn(contents: &[Value]) -> usize {
    contents
        .iter()
        .rposition(|c| {
            c.get("role").and_then(Value::as_str) == Some("user")
                && c.get("parts")
                    .and_then(Value::as_array)
                    .is_some_and(|parts| {
                        parts
                            .iter()
                            .any(|p| field(p, "functionResponse", "function_response").is_none())
                    })
        })
        .map_or(0, |i| i + 1)
}

/// A model content of the current turn whose first `functionCall` part lost its
/// `thoughtSignature`: Gemini 3's 400 (see [`validates_signatures`] for the models).
pub(crate) fn missing_signature(body: &Value) -> Option<String> {
    let contents = body.get("contents")?.as_array()?;
    for c in &contents[current_turn(contents)..] {
        if c.get("role").and_then(Value::as_str) != Some("model") {
            continue;
        }
        let parts = c.get("parts").and_then(Value::as_array)?;
        let Some((pos, first)) = parts
            .iter()
            .enumerate()
            .find(|(_, p)| field(p, "functionCall", "function_call").is_some())
        else {
            continue;
        };
        if field(first, "thoughtSignature", "thought_signature").is_none() {
            let name = first
                .pointer("/functionCall/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Some(format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                pos + 1
            ));
        }
    }
    None
}

const SAFETY_RATINGS: &str = r#"[{"category":"HARM_CATEGORY_HATE_SPEECH","probability":"NEGLIGIBLE"},{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true},{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE"},{"category":"HARM_CATEGORY_SEXUALLY_EXPLICIT","probability":"NEGLIGIBLE"}]"#;

pub(crate) fn render(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn, sse: bool) -> SimResponse {
    let parts = parts(ctx, turn);
    let written: usize = parts.iter().map(|p| p.to_string().len()).sum();
    let out_tokens = wire::tokens(written / 2);
    let usage = json!({"promptTokenCount": ctx.input_tokens, "candidatesTokenCount": out_tokens,
                       "totalTokenCount": ctx.input_tokens + out_tokens});
    let response_id = wire::id("", ctx.seed, "responseId", 0, 23);
    let wrap = |candidate: Value, usage: Value| json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": ask.model, "responseId": response_id});
    let grounding = grounding(turn);
    let reason = finish_reason(turn);
    let finish = |parts: Vec<Value>| {
        if turn.wire.refusal.is_some() {
            // Blocked: no content, the ratings say why.
            let ratings: Value = serde_json::from_str(SAFETY_RATINGS).unwrap_or(Value::Null);
            return json!({"finishReason": reason, "index": 0, "safetyRatings": ratings});
        }
        let mut c = json!({"content": {"parts": parts, "role": "model"}, "finishReason": reason, "index": 0});
        if let Some(g) = &grounding {
            c["groundingMetadata"] = g.clone();
        }
        c
    };
    if !ask.stream {
        let mut resp = wire::json_response(200, &wrap(finish(parts), usage), true);
        resp.headers.insert("content-type".into(), JSON_TYPE.into());
        return resp;
    }
    let partial_usage =
        json!({"promptTokenCount": ctx.input_tokens, "totalTokenCount": ctx.input_tokens});
    let mut events = Vec::new();
    if turn.wire.is(StreamShape::SameChunk) {
        // Text and every functionCall part in one chunk.
        if !parts.is_empty() {
            let c = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
            events.push(wrap(c, partial_usage.clone()));
        }
    } else {
        for part in &parts {
            let pieces: Vec<Value> = match part.get("text").and_then(Value::as_str) {
                // Text arrives in pieces; each functionCall arrives whole.
                Some(text) => wire::fragments(text, ctx.seed)
                    .chunks(4)
                    .map(|c| {
                        let mut p = json!({"text": c.concat()});
                        if part.get("thought").is_some() {
                            p["thought"] = json!(true);
                        }
                        p
                    })
                    .collect(),
                None => vec![part.clone()],
            };
            for p in pieces {
                let c = json!({"content": {"parts": [p], "role": "model"}, "index": 0});
                events.push(wrap(c, partial_usage.clone()));
            }
        }
    }
    events.push(wrap(finish(vec![json!({"text": ""})]), usage));
    match turn.wire.fault {
        Some(StreamFault::ErrorEvent) => {
            events.truncate((events.len() / 2).max(1));
            events.push(json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}));
        }
        Some(StreamFault::Cut) => events.truncate((events.len() / 2).max(1)),
        None => {}
    }
    let count = events.len();
    let cut = turn.wire.fault == Some(StreamFault::Cut);
    let chunks = events.iter().enumerate().map(|(i, e)| {
        let json = e.to_string();
        if sse {
            format!("data: {json}\r\n\r\n").into_bytes()
        } else {
            let lead = if i == 0 { "[" } else { "\n,\r\n" };
            // A cut array never closes.
            let tail = if i + 1 == count && !cut { "]" } else { "" };
            format!("{lead}{json}{tail}").into_bytes()
        }
    });
    let content_type = if sse { "text/event-stream" } else { JSON_TYPE };
    wire::stream_response(content_type, chunks.collect())
}
