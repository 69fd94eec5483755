//! Decoding a Gemini request (`POST …/models/M:generateContent` or `:streamGenerateContent`)
//! back to the neutral request: the inverse of `encode`, pure. Fields are read in camelCase or
//! snake_case (the API accepts both; gateways send either).
//!
//! Read: the model and stream flag from the path, `systemInstruction` (one system message per
//! part), `contents` (user text; model turns: text, `functionCall` parts with their
//! `thoughtSignature`, thought and other parts as opaque items, verbatim; `functionResponse`
//! parts as tool results linked by `id` when it is a call's id of the latest model turn, else —
//! no id, or one no call has — by name to the first unanswered call of that name, as Gemini
//! links them: its `id` is only echoed), `tools` (`functionDeclarations` with `parameters` or `parametersJsonSchema`, the key
//! kept as a wire extra; `googleSearch` as hosted search), `toolConfig.functionCallingConfig`
//! (`AUTO`, `NONE`, `ANY` = required, names in any case or the enum's numbers, `ANY` with one name = forced, with several = allowed
//! required, `VALIDATED` with names = allowed auto), `generationConfig.maxOutputTokens` and
//! `thinkingConfig.thinkingBudget`.
//!
//! Undone where reversible: a declaration without parameters gets `{"type":"object",
//! "properties":{}}`; a call without id gets the id the response decoder gives it
//! (`gemini-call-INDEX-NAME`); a response `{"result": "text"}` is the text, `{"error": X}` is an
//! error result, any other object its JSON text. Not recoverable: system versus developer, the
//! parallel switch (never sent), `ANY` with one name versus an allowed subset of one.

use serde_json::{Map, Value};

use super::decode::SYNTHETIC_ID_PREFIX;
use crate::http::HttpRequest;
use crate::model::{
    AllowedMode, DecodeError, Grounding, HostedTool, Message, ResultPart, Tool, ToolCall,
    ToolChoice, empty_parameters,
};
use crate::pointer::push;
use crate::providers::decoded::{
    DecodedRequest, Extra, ExtraKind, Fields, empty_request, field_error, query_extras, type_error,
    wire,
};
use crate::providers::result_parts::read_gemini;
use crate::providers::route::gemini_method;

/// Decodes a Gemini `generateContent` / `streamGenerateContent` request.
pub fn decode_request(req: &HttpRequest) -> Result<DecodedRequest, DecodeError> {
    if !req.method.eq_ignore_ascii_case("POST") {
        return Err(DecodeError::new(format!(
            "method: Gemini requests are POST, found {}",
            req.method
        )));
    }
    let (model, stream) = model_and_stream(&req.path)?;
    let mut extras = Vec::new();
    query_extras(req, &mut extras);
    let mut out = empty_request(model, stream);
    let mut body = Fields::of(&req.body, "", "a Gemini generateContent request")?;

    if let Some((ptr, si)) = body.get_any(&["systemInstruction", "system_instruction"]) {
        let mut f = Fields::of(si, &ptr, "a system instruction")?;
        f.get("role");
        let parts = f.array("parts")?.map(Vec::as_slice).unwrap_or_default();
        for (i, p) in parts.iter().enumerate() {
            let pp = push(&f.at("parts"), &i.to_string());
            let mut g = Fields::of(p, &pp, "a part")?;
            match g.str("text")? {
                Some(t) => out.messages.push(Message::System {
                    content: t.to_string(),
                }),
                None => extras.push(Extra {
                    pointer: pp.clone(),
                    kind: ExtraKind::NotCarried,
                    value: p.clone(),
                }),
            }
            g.finish(&mut extras);
        }
        f.finish(&mut extras);
    }
    let Some((cptr, contents)) = body.array_any(&["contents"])? else {
        return Err(field_error(
            "/contents",
            "missing (a generateContent request carries `contents`)",
        ));
    };
    for (i, c) in contents.iter().enumerate() {
        content(
            c,
            &push(&cptr, &i.to_string()),
            &mut out.messages,
            &mut extras,
        )?;
    }
    // `tools` is a list; one Tool object on its own is taken as a list of one, as the API does.
    match body.get_any(&["tools"]) {
        None => {}
        Some((tptr, Value::Array(tools))) => {
            for (i, t) in tools.iter().enumerate() {
                tool(t, &push(&tptr, &i.to_string()), &mut out, &mut extras)?;
            }
        }
        Some((tptr, t @ Value::Object(_))) => tool(t, &tptr, &mut out, &mut extras)?,
        Some((tptr, other)) => return Err(type_error(&tptr, "an array", other)),
    }
    if let Some((ptr, tc)) = body.get_any(&["toolConfig", "tool_config"]) {
        let mut f = Fields::of(tc, &ptr, "a tool configuration")?;
        if let Some((fptr, fcc)) = f.get_any(&["functionCallingConfig", "function_calling_config"])
        {
            out.tool_choice = calling_config(fcc, &fptr, &mut extras)?;
        }
        f.keep(
            &["retrievalConfig", "retrieval_config"],
            ExtraKind::NotCarried,
            &mut extras,
        );
        f.finish(&mut extras);
    }
    if let Some((ptr, gc)) = body.get_any(&["generationConfig", "generation_config"]) {
        let mut f = Fields::of(gc, &ptr, "a generation configuration")?;
        out.max_tokens = f.count_any(&["maxOutputTokens", "max_output_tokens"])?;
        if let Some((tptr, th)) = f.get_any(&["thinkingConfig", "thinking_config"]) {
            let mut g = Fields::of(th, &tptr, "a thinking configuration")?;
            out.thinking = g.count_any(&["thinkingBudget", "thinking_budget"])?;
            g.keep(
                &[
                    "includeThoughts",
                    "include_thoughts",
                    "thinkingLevel",
                    "thinking_level",
                ],
                ExtraKind::NotCarried,
                &mut extras,
            );
            g.finish(&mut extras);
        }
        // Sampling, stop sequences, response format: not carried (read keys are skipped).
        let rest: Vec<&str> = gc
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        f.keep(&rest, ExtraKind::NotCarried, &mut extras);
        f.finish(&mut extras);
    }
    body.keep(
        &[
            "safetySettings",
            "safety_settings",
            "cachedContent",
            "cached_content",
            "labels",
        ],
        ExtraKind::NotCarried,
        &mut extras,
    );
    body.finish(&mut extras);
    Ok(DecodedRequest {
        request: out,
        extras,
    })
}

/// `…/models/MODEL:generateContent` → (model, stream): any prefix, Vertex's project paths too.
fn model_and_stream(path: &str) -> Result<(String, bool), DecodeError> {
    let at = path.rfind("models/");
    at.and_then(|at| gemini_method(&path[at + "models/".len()..]))
        .map(|(model, stream)| (model.to_string(), stream))
        .ok_or_else(|| {
            DecodeError::new(format!(
                "path: `{path}` is not a Gemini path (…/models/MODEL:generateContent or :streamGenerateContent)"
            ))
        })
}

fn content(
    c: &Value,
    ptr: &str,
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut f = Fields::of(c, ptr, "a content")?;
    let role = f.str("role")?.unwrap_or("user");
    let parts_ptr = f.at("parts");
    let parts = f.array("parts")?.map(Vec::as_slice).unwrap_or_default();
    f.finish(extras);
    match role {
        "model" => {
            let mut text: Option<String> = None;
            let mut tool_calls = Vec::new();
            let mut opaque = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                let pp = push(&parts_ptr, &i.to_string());
                let mut g = Fields::of(p, &pp, "a part")?;
                let thought = g.bool("thought")?.unwrap_or(false);
                if let Some((fptr, fc)) = g.get_any(&["functionCall", "function_call"]) {
                    let sig = g
                        .get_any(&["thoughtSignature", "thought_signature"])
                        .and_then(|(_, v)| v.as_str().map(str::to_string));
                    let index = tool_calls.len();
                    tool_calls.push(function_call(fc, &fptr, index, sig, extras)?);
                    g.finish(extras);
                } else if !thought && let Some(t) = g.str("text")? {
                    text.get_or_insert_with(String::new).push_str(t);
                    // A signature on a text part has no place in the neutral model.
                    g.keep(
                        &["thoughtSignature", "thought_signature"],
                        ExtraKind::NotCarried,
                        extras,
                    );
                    g.finish(extras);
                } else {
                    // Thought text, code execution, anything else: sent back verbatim.
                    opaque.push(p.clone());
                }
            }
            out.push(Message::Assistant {
                phase: None,
                text,
                tool_calls,
                opaque,
            });
        }
        "user" | "function" => {
            let mut pending_text: Option<String> = None;
            for (i, p) in parts.iter().enumerate() {
                let pp = push(&parts_ptr, &i.to_string());
                let mut g = Fields::of(p, &pp, "a part")?;
                if let Some((rptr, fr)) = g.get_any(&["functionResponse", "function_response"]) {
                    if let Some(t) = pending_text.take() {
                        out.push(Message::User { content: t });
                    }
                    let msg = function_response(fr, &rptr, out, extras)?;
                    out.push(msg);
                } else if let Some(t) = g.str("text")? {
                    pending_text.get_or_insert_with(String::new).push_str(t);
                } else {
                    extras.push(Extra {
                        pointer: pp,
                        kind: ExtraKind::NotCarried,
                        value: p.clone(),
                    });
                    continue;
                }
                g.finish(extras);
            }
            if let Some(t) = pending_text {
                out.push(Message::User { content: t });
            }
        }
        other => {
            return Err(field_error(
                &push(ptr, "role"),
                format!("unknown role `{other}` (user or model)"),
            ));
        }
    }
    Ok(())
}

fn function_call(
    fc: &Value,
    ptr: &str,
    index: usize,
    thought_signature: Option<String>,
    extras: &mut Vec<Extra>,
) -> Result<ToolCall, DecodeError> {
    let mut f = Fields::of(fc, ptr, "a function call")?;
    let name = f.req_str("name", "a function call names its function")?;
    let id = match f.str("id")? {
        Some(id) if !id.is_empty() => id.to_string(),
        // The id the response decoder gave the call (the encoder does not send it back).
        _ => format!("{SYNTHETIC_ID_PREFIX}{index}-{name}"),
    };
    let arguments = match f.get("args") {
        None => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => return Err(type_error(&f.at("args"), "an object", other)),
    };
    f.finish(extras);
    Ok(ToolCall {
        caller: None,
        id,
        name: name.to_string(),
        arguments,
        thought_signature,
        namespace: None,
    })
}

fn function_response(
    fr: &Value,
    ptr: &str,
    earlier: &[Message],
    extras: &mut Vec<Extra>,
) -> Result<Message, DecodeError> {
    let mut f = Fields::of(fr, ptr, "a function response")?;
    let name = f.req_str("name", "a function response names its function")?;
    let call_id = match f.str("id")? {
        Some(id) if !id.is_empty() && latest_calls(earlier).iter().any(|c| c.id == id) => {
            id.to_string()
        }
        // Gemini links by name; an id no call has is kept only when no call of that name waits.
        Some(id) if !id.is_empty() => {
            unanswered_call(earlier, name).unwrap_or_else(|| id.to_string())
        }
        _ => unanswered_call(earlier, name).unwrap_or_default(),
    };
    let (content, is_error) = match f.get("response") {
        None => (String::new(), false),
        Some(Value::Object(o)) => response_content(o),
        Some(other) => return Err(type_error(&f.at("response"), "an object", other)),
    };
    // Multimodal parts (Gemini 3): the result becomes its text, then its images.
    let parts = match f.array("parts")? {
        Some(items) => {
            let media = read_gemini(items, &f.at("parts"), extras)?;
            let text = (!content.is_empty()).then(|| ResultPart::Text {
                text: content.clone(),
            });
            match media.is_empty() {
                true => Vec::new(),
                false => text.into_iter().chain(media).collect(),
            }
        }
        None => Vec::new(),
    };
    f.keep(
        &["willContinue", "scheduling"],
        ExtraKind::NotCarried,
        extras,
    );
    f.finish(extras);
    Ok(Message::Tool {
        call_id,
        name: name.to_string(),
        content,
        parts,
        is_error,
    })
}

/// The calls of the latest model turn (none before the first).
fn latest_calls(earlier: &[Message]) -> &[ToolCall] {
    earlier
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls.as_slice()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The id of the first call named `name` in the latest model turn that no later result answers.
fn unanswered_call(earlier: &[Message], name: &str) -> Option<String> {
    let turn = earlier
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))?;
    let Message::Assistant { tool_calls, .. } = &earlier[turn] else {
        return None;
    };
    let answered: Vec<&str> = earlier[turn..]
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    tool_calls
        .iter()
        .find(|c| c.name == name && !answered.contains(&c.id.as_str()))
        .map(|c| c.id.clone())
}

/// `{"error": X}` → an error result; `{"result": "text"}` → the text; any other object → its JSON.
/// A `functionResponse.response` as its text and error flag. Gemini's `FunctionResponse`: "Use
/// 'output' key to specify function output and 'error' key to specify error details (if any). If
/// 'output' and 'error' keys are not specified, then whole 'response' is treated as function
/// output": an `error` key flags an error whatever sits beside it.
fn response_content(o: &Map<String, Value>) -> (String, bool) {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let is_error = o.contains_key("error");
    if o.len() == 1 {
        if let Some(e) = o.get("error") {
            return (text(e), true);
        }
        if let Some(Value::String(s)) = o.get("result").or_else(|| o.get("output")) {
            return (s.clone(), false);
        }
    }
    (Value::Object(o.clone()).to_string(), is_error)
}

fn tool(
    t: &Value,
    ptr: &str,
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut f = Fields::of(t, ptr, "a tool")?;
    if let Some((dptr, decls)) = f.array_any(&["functionDeclarations", "function_declarations"])? {
        for (i, d) in decls.iter().enumerate() {
            let pp = push(&dptr, &i.to_string());
            let mut g = Fields::of(d, &pp, "a function declaration")?;
            let name = g.req_str("name", "a function declaration has a name")?;
            let description = g.str("description")?.map(str::to_string);
            let parameters = match g.get_any(&[
                "parameters",
                "parametersJsonSchema",
                "parameters_json_schema",
            ]) {
                None => empty_parameters(),
                Some((kptr, v @ Value::Object(_))) => {
                    if !kptr.ends_with("/parameters") {
                        wire(extras, kptr, Value::Bool(true));
                    }
                    v.clone()
                }
                Some((kptr, other)) => return Err(type_error(&kptr, "a schema object", other)),
            };
            g.keep(
                &["response", "responseJsonSchema", "behavior"],
                ExtraKind::NotCarried,
                extras,
            );
            g.finish(extras);
            out.tools
                .push(Tool::function(name, description, parameters));
        }
    }
    if let Some((sptr, opts)) = f.get_any(&["googleSearch", "google_search"]) {
        out.hosted.push(HostedTool::WebSearch {
            grounding: Grounding::Auto,
            variant: None,
        });
        if opts.as_object().is_some_and(|o| !o.is_empty()) {
            extras.push(Extra {
                pointer: sptr,
                kind: ExtraKind::NotCarried,
                value: opts.clone(),
            });
        }
    }
    if let Some((sptr, opts)) = f.get_any(&["googleSearchRetrieval", "google_search_retrieval"]) {
        out.hosted.push(HostedTool::WebSearch {
            grounding: Grounding::Auto,
            variant: Some("googleSearchRetrieval".into()),
        });
        extras.push(Extra {
            pointer: sptr,
            kind: ExtraKind::NotCarried,
            value: opts.clone(),
        });
    }
    f.keep(
        &crate::providers::decoded::GEMINI_TOOL_KINDS,
        ExtraKind::NotCarried,
        extras,
    );
    f.finish(extras);
    Ok(())
}

fn calling_config(
    v: &Value,
    ptr: &str,
    extras: &mut Vec<Extra>,
) -> Result<Option<ToolChoice>, DecodeError> {
    let mut f = Fields::of(v, ptr, "a function calling configuration")?;
    // An enum in proto3 JSON: its name (any case here) or its number.
    let mode = match f.get("mode") {
        None => None,
        Some(Value::String(s)) => Some(s.to_ascii_uppercase()),
        Some(Value::Number(n)) => {
            const MODES: [&str; 5] = ["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"];
            let name = n.as_u64().and_then(|i| MODES.get(usize::try_from(i).ok()?));
            match name {
                Some(m) => Some((*m).to_string()),
                None => {
                    return Err(field_error(
                        &f.at("mode"),
                        format!("unknown mode number {n} (0 to 4)"),
                    ));
                }
            }
        }
        Some(other) => return Err(type_error(&f.at("mode"), "a mode name or number", other)),
    };
    let names: Option<Vec<String>> =
        match f.get_any(&["allowedFunctionNames", "allowed_function_names"]) {
            None => None,
            Some((nptr, Value::Array(a))) => Some(
                a.iter()
                    .enumerate()
                    .map(|(i, n)| {
                        n.as_str().map(str::to_string).ok_or_else(|| {
                            type_error(&push(&nptr, &i.to_string()), "a function name", n)
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some((nptr, other)) => return Err(type_error(&nptr, "an array of names", other)),
        };
    let names = names.filter(|n| !n.is_empty());
    if let Some(m) = &mode {
        wire(extras, f.at("mode"), Value::String(m.clone()));
    }
    let names_ptr = f.at("allowedFunctionNames");
    let names_not_carried = |extras: &mut Vec<Extra>, n: Vec<String>| {
        extras.push(Extra {
            pointer: names_ptr.clone(),
            kind: ExtraKind::NotCarried,
            value: serde_json::json!(n),
        });
    };
    let choice = match (mode.as_deref(), names) {
        (None | Some("MODE_UNSPECIFIED"), None) => None,
        (Some("AUTO") | None | Some("MODE_UNSPECIFIED"), Some(n)) => {
            // Names are honoured only with ANY or VALIDATED: kept as an extra, choice auto.
            names_not_carried(extras, n);
            Some(ToolChoice::Auto)
        }
        (Some("AUTO"), None) => Some(ToolChoice::Auto),
        (Some("NONE"), names) => {
            if let Some(n) = names {
                names_not_carried(extras, n);
            }
            Some(ToolChoice::None)
        }
        (Some("ANY"), None) => Some(ToolChoice::Required),
        (Some("ANY"), Some(n)) if n.len() == 1 => Some(ToolChoice::Forced(n[0].clone())),
        (Some("ANY"), Some(tools)) => Some(ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools,
        }),
        (Some("VALIDATED"), None) => Some(ToolChoice::Auto),
        (Some("VALIDATED"), Some(tools)) => Some(ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            tools,
        }),
        (Some(other), _) => {
            return Err(field_error(
                &f.at("mode"),
                format!("unknown mode `{other}` (AUTO, ANY, NONE, VALIDATED)"),
            ));
        }
    };
    f.finish(extras);
    Ok(choice)
}
