//! Provider `gemini` (AI Studio `generateContent` / `streamGenerateContent`, v1beta): the encoder
//! lives here, and which models validate thought signatures; response chunks and buffered
//! decoding in `decode`, the stream decoder (SSE or streamed JSON array, sniffed) in `stream`.

mod decode;
mod request;
mod stream;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::http::HttpRequest;
use crate::model::{AllowedMode, ChatRequest, HostedTool, Message, ToolCall, ToolChoice};
use crate::model::{EncodeError, Encoded, Provider};
use crate::providers::tool_names::check_gemini;
use crate::providers::tool_results::{Turn, Turns};
use crate::schema::prepare_tools;

pub use decode::{SYNTHETIC_ID_PREFIX, decode};
pub use request::decode_request;
pub use stream::{Stream, synthetic_array, synthetic_stream};

/// Whether the API validates thought signatures on `model` (a path's model, `models/` prefix or
/// not): Gemini 3 and later do, thinking whether or not the request asks ("When using Gemini 3
/// models, you must pass back thought signatures during function calling, otherwise you will get
/// a validation error", ai.google.dev/gemini-api/docs/thought-signatures), Gemini 3 Pro Image
/// aside ("doesn't enforce this validation", cloud.google.com vertex-ai thought-signatures);
/// Gemini 2.5 returns them with thinking on but does not validate them.
pub(crate) fn validates_signatures(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or_default();
    let Some(version) = name.strip_prefix("gemini-") else {
        return false;
    };
    let major: String = version.chars().take_while(char::is_ascii_digit).collect();
    major.parse::<u32>().is_ok_and(|m| m >= 3) && !name.contains("-image")
}

/// Builds the `generateContent` request (`streamGenerateContent?alt=sse` when streaming).
pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    check_gemini(&req.tools)?;
    let (prepared, mut notes) = prepare_tools(Provider::Gemini, &req.tools, req.strict)?;
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(req)));
    let system: Vec<Value> = req
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } | Message::Developer { content } => {
                Some(json!({"text": content}))
            }
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": system}));
    }

    let mut tools = Vec::new();
    if !prepared.is_empty() {
        let decls: Vec<Value> = prepared
            .iter()
            .map(|t| {
                let mut o = t.declaration();
                // Mutually exclusive on the wire; `prepare_tools` decides which dialect fits.
                let key = if t.gemini_json_schema {
                    "parametersJsonSchema"
                } else {
                    "parameters"
                };
                // `Null` means "no parameters": Gemini rejects an OBJECT with empty properties.
                if !t.parameters.is_null() {
                    o.insert(key.into(), t.parameters.clone());
                }
                Value::Object(o)
            })
            .collect();
        tools.push(json!({"functionDeclarations": decls}));
    }
    for h in &req.hosted {
        match h {
            // A separate tool entry; grounding policy (required / fail closed) comes later.
            HostedTool::WebSearch { .. } => tools.push(json!({"googleSearch": {}})),
            // Gemini has no tool search: refused, never dropped.
            HostedTool::ToolSearch { variant } => {
                return Err(crate::providers::tool_search::refused(
                    Provider::Gemini,
                    variant,
                ));
            }
            HostedTool::Programmatic { variant } => {
                return Err(crate::providers::programmatic::refused(
                    Provider::Gemini,
                    variant,
                ));
            }
        }
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(cfg) = calling_config(req, &mut notes) {
        if prepared.is_empty() {
            // The API answers 400 "Function calling config is set without
            // function_declarations" (a request with only hosted search, say).
            notes.push("tool_choice not sent: the request declares no functions".into());
        } else {
            body.insert("toolConfig".into(), json!({"functionCallingConfig": cfg}));
        }
    }
    let mut gen_cfg = Map::new();
    if let Some(n) = req.max_tokens {
        gen_cfg.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(budget) = req.thinking {
        gen_cfg.insert("thinkingConfig".into(), json!({"thinkingBudget": budget}));
    }
    if !gen_cfg.is_empty() {
        body.insert("generationConfig".into(), Value::Object(gen_cfg));
    }

    let model = req.model.strip_prefix("models/").unwrap_or(&req.model);
    let method = if req.stream {
        "streamGenerateContent"
    } else {
        "generateContent"
    };
    let mut request = HttpRequest::post(
        format!("/v1beta/models/{model}:{method}"),
        Value::Object(body),
    );
    if req.stream {
        request.query.insert("alt".into(), "sse".into());
    }
    Ok(Encoded { request, notes })
}

fn calling_config(req: &ChatRequest, notes: &mut Vec<String>) -> Option<Value> {
    let (mode, names): (&str, Option<&[String]>) = match req.tool_choice.as_ref()? {
        ToolChoice::Auto => ("AUTO", None),
        // NONE keeps the declarations in the request (never drop the tools).
        ToolChoice::None => ("NONE", None),
        ToolChoice::Required => ("ANY", None),
        ToolChoice::Forced(name) => ("ANY", Some(std::slice::from_ref(name))),
        ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools,
        } => ("ANY", Some(tools.as_slice())),
        ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            tools,
        } => {
            // allowedFunctionNames is honoured only with ANY or VALIDATED; VALIDATED ("calls or
            // text") is the one that keeps auto semantics. UNCONFIRMED (§8.7): VALIDATED is a
            // preview mode, and Vertex v1 may not accept it.
            notes.push(
                "allowed-auto sent as mode VALIDATED (preview) with allowedFunctionNames".into(),
            );
            ("VALIDATED", Some(tools.as_slice()))
        }
    };
    let mut cfg = Map::new();
    cfg.insert("mode".into(), json!(mode));
    if let Some(names) = names {
        cfg.insert("allowedFunctionNames".into(), json!(names));
    }
    Some(Value::Object(cfg))
}

/// The conversation: user text, model turns with their calls (and thought signatures, which
/// Gemini 3 requires back), and each run of tool results as one user content in call order.
fn contents(req: &ChatRequest) -> Vec<Value> {
    let mut out = Vec::new();
    for turn in Turns::new(&req.messages) {
        match turn {
            Turn::Message(_, Message::User { content }) => {
                out.push(json!({"role": "user", "parts": [{"text": content}]}));
            }
            Turn::Message(
                _,
                Message::Assistant {
                    text, tool_calls, ..
                },
            ) => {
                // `opaque` holds other providers' replay items (thinking blocks, reasoning);
                // Gemini's own replay state is the call's thoughtSignature.
                let mut parts = Vec::new();
                if let Some(t) = text.as_deref().filter(|t| !t.is_empty()) {
                    parts.push(json!({"text": t}));
                }
                for c in tool_calls {
                    parts.push(call_part(c));
                }
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            // System and developer text is the request's `systemInstruction`.
            Turn::Message(..) => {}
            Turn::Results(results) => {
                let parts: Vec<Value> = results
                    .into_iter()
                    .map(|r| {
                        let mut fr = Map::new();
                        fr.insert("name".into(), json!(r.name));
                        if !r.call_id.starts_with(SYNTHETIC_ID_PREFIX) && !r.call_id.is_empty() {
                            fr.insert("id".into(), json!(r.call_id));
                        }
                        fr.insert("response".into(), response_object(r.content, r.is_error));
                        let media = crate::providers::result_parts::gemini(r.parts);
                        if !media.is_empty() {
                            fr.insert("parts".into(), Value::Array(media));
                        }
                        json!({"functionResponse": fr})
                    })
                    .collect();
                out.push(json!({"role": "user", "parts": parts}));
            }
        }
    }
    out
}

fn call_part(c: &ToolCall) -> Value {
    let mut fc = Map::new();
    if !c.id.starts_with(SYNTHETIC_ID_PREFIX) && !c.id.is_empty() {
        fc.insert("id".into(), json!(c.id));
    }
    fc.insert("name".into(), json!(c.name));
    fc.insert("args".into(), c.arguments.clone());
    let mut part = Map::new();
    part.insert("functionCall".into(), Value::Object(fc));
    if let Some(sig) = &c.thought_signature {
        part.insert("thoughtSignature".into(), json!(sig));
    }
    Value::Object(part)
}

/// `response` must be a JSON object (a protobuf Struct).
fn response_object(content: &str, is_error: bool) -> Value {
    if is_error {
        return json!({"error": content});
    }
    match serde_json::from_str::<Value>(content) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({"result": content}),
    }
}
