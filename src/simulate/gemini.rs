//! Google Gemini (`POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`):
//! request reading, `GenerateContentResponse` bodies with grounding metadata, SSE (CRLF) and
//! JSON-array streams.

use serde_json::{Map, Value, json};

use super::decide::{Ask, FnTool, Turn};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::wire;
use crate::model::{AllowedMode, ToolChoice, empty_parameters};

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
        if !results.is_empty() {
            ask.tool_results = Some(results);
        }
    }
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
    if turn.has_text() {
        parts.push(json!({"text": turn.text()}));
    }
    for (i, c) in turn.calls.iter().enumerate() {
        let mut p = json!({"functionCall": {"name": c.name, "args": c.arguments}});
        // Gemini signs only the first call of a parallel batch.
        if i == 0 {
            p["thoughtSignature"] = json!(wire::id("CiQB", ctx.seed, "signature", 0, 60));
        }
        parts.push(p);
    }
    parts
}

pub(crate) fn render(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn, sse: bool) -> SimResponse {
    let parts = parts(ctx, turn);
    let written: usize = parts.iter().map(|p| p.to_string().len()).sum();
    let out_tokens = wire::tokens(written / 2);
    let usage = json!({"promptTokenCount": ctx.input_tokens, "candidatesTokenCount": out_tokens,
                       "totalTokenCount": ctx.input_tokens + out_tokens});
    let response_id = wire::id("", ctx.seed, "responseId", 0, 23);
    let wrap = |candidate: Value, usage: Value| json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": ask.model, "responseId": response_id});
    let grounding = grounding(turn);
    let finish = |parts: Vec<Value>| {
        let mut c = json!({"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0});
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
    for part in &parts {
        let pieces: Vec<Value> = match part.get("text").and_then(Value::as_str) {
            // Text arrives in pieces; each functionCall arrives whole.
            Some(text) => wire::fragments(text, ctx.seed)
                .chunks(4)
                .map(|c| json!({"text": c.concat()}))
                .collect(),
            None => vec![part.clone()],
        };
        for p in pieces {
            let c = json!({"content": {"parts": [p], "role": "model"}, "index": 0});
            events.push(wrap(c, partial_usage.clone()));
        }
    }
    events.push(wrap(finish(vec![json!({"text": ""})]), usage));
    let count = events.len();
    let chunks = events.iter().enumerate().map(|(i, e)| {
        let json = e.to_string();
        if sse {
            format!("data: {json}\r\n\r\n").into_bytes()
        } else {
            let lead = if i == 0 { "[" } else { "\n,\r\n" };
            let tail = if i + 1 == count { "]" } else { "" };
            format!("{lead}{json}{tail}").into_bytes()
        }
    });
    let content_type = if sse { "text/event-stream" } else { JSON_TYPE };
    wire::stream_response(content_type, chunks.collect())
}
