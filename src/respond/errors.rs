//! Error envelopes of the three API families (OpenAI `error{message,type,param,code}`,
//! Anthropic `{"type":"error",...}`, Google RPC `error{code,message,status,details}`), with each
//! family's usual type or status for an HTTP status.

use serde_json::{Value, json};

/// Which error envelope an API uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    OpenAi,
    Anthropic,
    Gemini,
}

/// What an envelope says; unset fields get the family's usual value for the status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Envelope<'a> {
    pub status: u16,
    pub message: &'a str,
    /// OpenAI `param`.
    pub param: Option<&'a str>,
    /// OpenAI `code`.
    pub code: Option<&'a str>,
    /// OpenAI `type` / Anthropic `error.type` / Google `status`, when not the status default.
    pub kind: Option<&'a str>,
    /// Google `details[]` entries.
    pub details: &'a [Value],
    /// Anthropic `request_id`.
    pub request_id: Option<&'a str>,
}

pub(crate) fn openai_type(status: u16) -> &'static str {
    match status {
        403 => "permission_error",
        429 => "requests",
        s if s >= 500 => "server_error",
        _ => "invalid_request_error",
    }
}

fn openai_code(status: u16) -> Option<&'static str> {
    match status {
        401 => Some("invalid_api_key"),
        404 => Some("model_not_found"),
        429 => Some("rate_limit_exceeded"),
        _ => None,
    }
}

pub(crate) fn anthropic_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    }
}

pub(crate) fn google_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        s if s >= 500 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    }
}

/// The error body in `family`'s envelope.
pub(crate) fn envelope(family: Family, e: &Envelope<'_>) -> Value {
    match family {
        Family::OpenAi => json!({"error": {
            "message": e.message,
            "type": e.kind.unwrap_or(openai_type(e.status)),
            "param": e.param,
            "code": e.code.or(if e.status == 400 { None } else { openai_code(e.status) }),
        }}),
        Family::Anthropic => json!({
            "type": "error",
            "error": {
                "type": e.kind.unwrap_or(anthropic_type(e.status)),
                "message": e.message,
            },
        })
        .as_object()
        .cloned()
        .map(|mut o| {
            if let Some(id) = e.request_id {
                o.insert("request_id".into(), json!(id));
            }
            Value::Object(o)
        })
        .unwrap_or_default(),
        Family::Gemini => {
            let mut err = json!({
                "code": e.status,
                "message": e.message,
                "status": e.kind.unwrap_or(google_status(e.status)),
            });
            if !e.details.is_empty() {
                err["details"] = Value::Array(e.details.to_vec());
            }
            json!({ "error": err })
        }
    }
}
