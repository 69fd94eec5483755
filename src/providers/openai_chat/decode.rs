//! Chat Completions answers, buffered: the response body or an error envelope into an
//! `Outcome`, and the helpers the stream decoder and the Responses decoder share (finish
//! mapping, argument parsing, error envelopes, retry hints).

use serde::Deserialize;
use serde_json::{Map, Value};

use super::wire::{ArgsWire, BStr, First, UsageWire};
use crate::http::HttpResponse;
use crate::model::{
    ChatRequest, DecodeError, Diagnostic, Finish, Outcome, ProviderError, ToolCall,
};

/// A success answer's body as text; `what` (`openai-chat body`) names it in the error.
pub(crate) fn body_text<'a>(resp: &'a HttpResponse, what: &str) -> Result<&'a str, DecodeError> {
    std::str::from_utf8(&resp.body)
        .map_err(|e| DecodeError::new(format!("{what}: invalid UTF-8 at byte {}", e.valid_up_to())))
}

/// Decodes a buffered response, or any non-2xx answer as an error envelope.
pub fn decode(_req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    if !resp.is_success() {
        return Ok(Outcome::from_error(error_from_response(resp)));
    }
    let text = body_text(resp, "openai-chat body")?;
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
    let Some(First(choice)) = body.choices else {
        return Err(DecodeError::new(
            "openai-chat body: missing required field `choices` (not a Chat Completions response)",
        ));
    };
    let Some(choice) = choice else {
        return Err(DecodeError::new(
            "openai-chat body: `choices` is empty: the response holds no answer",
        ));
    };
    let mut last_raw = None;
    if let Some(msg) = choice.message {
        if let Some(c) = msg.content.filter(|c| !c.0.is_empty()) {
            out.push_text(c.as_str());
        }
        // A refusal is what the model said instead of answering: it is the outcome's text
        // (there is no separate field), so checks see a text answer rather than nothing.
        if let Some(r) = msg.refusal.filter(|r| !r.0.is_empty()) {
            out.push_text(r.as_str());
        }
        let reasoning = [
            ("reasoning", msg.reasoning.as_ref()),
            ("reasoning_content", msg.reasoning_content.as_ref()),
        ];
        out.opaque.extend(super::reasoning::item(
            reasoning
                .iter()
                .filter_map(|(f, t)| Some((*f, t.as_ref()?.as_str()))),
        ));
        for call in msg.tool_calls.unwrap_or_default() {
            // `type: custom` calls (free-text input) are skipped: tooltape never declares custom tools.
            let Some(f) = call.function else { continue };
            let mut raw = String::new();
            if let Some(a) = &f.arguments {
                a.append_to(&mut raw);
            }
            let index = out.tool_calls.len();
            let arguments = parse_arguments(&raw, index, &mut out.diagnostics);
            out.tool_calls.push(ToolCall::unsigned(
                call.id.map(|s| s.0.into_owned()).unwrap_or_default(),
                f.name.map(|s| s.0.into_owned()).unwrap_or_default(),
                arguments,
            ));
            last_raw = Some(raw);
        }
    }
    set_finish(
        &mut out,
        choice.finish_reason.map(|f| f.0.into_owned()),
        last_raw.as_deref(),
    );
    Ok(out)
}

#[derive(Deserialize)]
struct BodyWire<'a> {
    #[serde(default, borrow)]
    choices: Option<First<ChoiceWire<'a>>>,
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
    /// A model server's reasoning text (`reasoning.rs`).
    #[serde(default, borrow)]
    reasoning: Option<BStr<'a>>,
    #[serde(default, borrow)]
    reasoning_content: Option<BStr<'a>>,
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
///
/// Under `length` the last call is withdrawn as truncated only when `last_raw`, its arguments
/// text, is empty or not complete JSON ([`Outcome::withdraw_unfinished_call`]). A cut JSON object
/// never parses, so every call the limit really cut is still withdrawn; a last call whose
/// arguments are complete was finished before the limit hit (the limit cut what came after it),
/// and withdrawing it would drop a valid call. That is what a Gemini `MAX_TOKENS` answer means
/// (Gemini sends calls whole and drops a cut one), so a gateway answering it in Chat keeps its
/// calls.
pub(crate) fn set_finish(out: &mut Outcome, raw: Option<String>, last_raw: Option<&str>) {
    out.finish = match raw.as_deref() {
        Some("tool_calls" | "function_call") => Finish::ToolCalls,
        Some("stop") => Finish::Stop,
        Some("length") => Finish::Length,
        Some("content_filter") => Finish::ContentFilter,
        _ => Finish::Other,
    };
    out.raw_finish = raw;
    out.withdraw_unfinished_call(last_raw, false);
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
            let message = format!("arguments of call {call_index} are not valid JSON: {e}");
            diags.push(Diagnostic::invalid_arguments(call_index, message, true));
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
