//! Inbound requests: the path says the format; the library's request decoder
//! (`providers::decode_request`) makes the body the neutral request. A malformed request is
//! refused with the decoder's message, which names the field; a well-formed one its own API
//! would reject (an invalid tool, a tool result answering no call) with that API's 400; one with
//! a tool the neutral request cannot carry (a `custom` tool, a hosted tool other than web
//! search) with a 400 naming it, never dropped.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::http::HttpRequest;
use crate::model::{ChatRequest, Provider};
use crate::providers::Rejection;
use crate::providers::{self, Framing};
use crate::respond::Inbound;

/// The inbound format of a request, from the one route table (Gemini's model and stream flag
/// are read again by its decoder).
pub(crate) fn format_of(
    method: &str,
    path: &str,
    query: &BTreeMap<String, String>,
) -> Option<Inbound> {
    let r = providers::route(method, path, query)?;
    Some(match r.provider {
        Provider::OpenaiChat | Provider::TextProtocol => Inbound::Chat,
        Provider::OpenaiResponses => Inbound::Responses,
        Provider::Anthropic => Inbound::Messages,
        Provider::Gemini => Inbound::Gemini {
            sse: r.framing == Framing::Sse,
        },
    })
}

/// The provider whose request decoder reads `inbound`'s bodies.
pub(super) fn provider(inbound: Inbound) -> Provider {
    match inbound {
        Inbound::Chat => Provider::OpenaiChat,
        Inbound::Responses => Provider::OpenaiResponses,
        Inbound::Messages => Provider::Anthropic,
        Inbound::Gemini { .. } => Provider::Gemini,
    }
}

/// What the client's own API rejects in `body` (an invalid tool schema; a result whose id answers
/// no earlier call, where the format links results by id): its 400 with the API's wording and
/// field, answered before anything goes upstream, so that no route invents a link or a schema
/// the client's API would refuse. Gemini links results by name: the decoder does that instead.
pub(crate) fn rejection(inbound: Inbound, body: &Value) -> Option<Rejection> {
    crate::providers::request_rejection(provider(inbound), body)
}

/// The neutral request of a body in `inbound`'s format, sent to `path` with `query`. The error
/// is the decoder's: it names the field (`/tools/0/function/name: missing …`).
pub(crate) fn decode(
    inbound: Inbound,
    path: &str,
    query: &BTreeMap<String, String>,
    body: Value,
) -> Result<ChatRequest, String> {
    let req = HttpRequest {
        method: "POST".into(),
        path: path.to_string(),
        query: query.clone(),
        headers: BTreeMap::new(),
        body,
    };
    match providers::decode_request(provider(inbound), &req) {
        Ok(decoded) => match decoded.uncarried_tools().first() {
            // Re-encoded, the tool would be lost: refused, never dropped or sent as a function.
            Some((at, ty)) => Err(format!(
                "{at}: a `{ty}` tool{} cannot be translated (this proxy carries function tools and hosted web search only)",
                tool_name(&req.body, at).map_or_else(String::new, |n| format!(" `{n}`"))
            )),
            None => Ok(decoded.request),
        },
        Err(e) => Err(match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{} (line {l}, column {c})", e.message),
            (Some(l), None) => format!("{} (line {l})", e.message),
            _ => e.message,
        }),
    }
}

/// The name of the tool at `at` in `body`, when it has one (Chat's `custom.name`, the others'
/// `name`; Gemini's tool kinds have none): a refusal names the tool the caller knows it by.
fn tool_name<'a>(body: &'a Value, at: &str) -> Option<&'a str> {
    let tool = body.pointer(at)?;
    (tool.pointer("/custom/name").or_else(|| tool.get("name")))?.as_str()
}
