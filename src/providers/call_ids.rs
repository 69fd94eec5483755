//! Call ids each API accepts: Anthropic `^[a-zA-Z0-9_-]+$`, Chat Completions at most 40
//! characters, Responses `call_id` at most 64; Gemini and the text protocol take any. `invalid`
//! says why an id is not valid in an API; `fit` rewrites one that is not, deterministically (the
//! same id always becomes the same, distinct ids stay distinct), so a call and the result that
//! answers it keep one id; `fit_request` does so for a whole conversation. The encoders send ids
//! as given (a client sends back what it got); a gateway fits them to its upstream (`proxy`).

use crate::model::{ChatRequest, Message, Provider};

/// Every call id and result id of `req`'s conversation made valid for `api` by [`fit`].
pub(crate) fn fit_request(api: Provider, req: &mut ChatRequest) {
    for m in &mut req.messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    c.id = fit(api, &c.id);
                }
            }
            Message::Tool { call_id, .. } => *call_id = fit(api, call_id),
            _ => {}
        }
    }
}

/// Why `id` is not a valid call id in `api`, or `None`.
pub(crate) fn invalid(api: Provider, id: &str) -> Option<&'static str> {
    let len = id.chars().count();
    match api {
        Provider::Anthropic
            if id.is_empty()
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
        {
            Some("Anthropic ids match ^[a-zA-Z0-9_-]+$")
        }
        Provider::OpenaiChat if len > 40 => Some("Chat Completions ids are at most 40 characters"),
        Provider::OpenaiResponses if len > 64 => {
            Some("a Responses call_id is at most 64 characters")
        }
        _ => None,
    }
}

/// `id` unchanged when `api` takes it; otherwise its letters, digits, `_` and `-` (others made
/// `_`), cut to leave room for a hash of the whole id: valid in every API.
pub(crate) fn fit(api: Provider, id: &str) -> String {
    if invalid(api, id).is_none() {
        return id.to_string();
    }
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(23)
        .collect();
    format!("{clean}_{:016x}", crate::fnv::fnv1a(id.as_bytes()))
}

#[cfg(test)]
mod tests;
