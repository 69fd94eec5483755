//! Call ids each API accepts: Anthropic `^[a-zA-Z0-9_-]+$`, Chat Completions ids and Responses
//! `call_id` at most 64 characters; Gemini and the text protocol take any. `invalid` says why an
//! id is not valid in an API; `fit` rewrites one that is not, deterministically (the same id
//! always becomes the same, distinct ids stay distinct), so a call and the result that answers it
//! keep one id; `fit_request` does so for a whole conversation. The encoders send ids as given (a
//! client sends back what it got); a gateway fits them to its upstream (`proxy`) and fits the ids
//! of an answer to its client (`fit_answer`: valid there and distinct, two calls upstream gave one
//! id included). `rejection` is each API's 400 for an id it rejects.

use serde_json::Value;

use super::rejection::Rejection;
use crate::model::{ChatRequest, Message, Outcome, Provider};

/// The most characters OpenAI takes in a Chat Completions `tool_calls[].id`/`tool_call_id` and a
/// Responses `call_id`: 64 in both since 2026 (Chat answered 40 before; docs/wire-formats.md).
const OPENAI_ID_MAX: usize = 64;

/// The calls of an answer given ids valid in `api` and distinct from each other: an id `api`
/// rejects is fitted; a call repeating an earlier call's id gets `{id}-{k}` (its position),
/// fitted too. An answer whose ids are valid and distinct is unchanged.
pub(crate) fn fit_answer(api: Provider, outcome: &mut Outcome) {
    let mut seen: Vec<String> = Vec::new();
    for (k, c) in outcome.tool_calls.iter_mut().enumerate() {
        c.id = answer_id(api, &c.id, k, &seen);
        seen.push(c.id.clone());
    }
}

/// The id the call at position `k` of an answer gets in `api`, given the ids of the calls
/// before it (`fit_answer`; the proxy's stream relay calls it per call as calls start).
pub(crate) fn answer_id(api: Provider, id: &str, k: usize, before: &[String]) -> String {
    let fitted = fit(api, id);
    if id.is_empty() || !before.contains(&fitted) {
        return fitted;
    }
    fit(api, &format!("{id}-{k}"))
}

/// The 400 `api` answers for a request carrying a call or result id it rejects, in its own
/// wording (Chat's and Responses' `string_above_max_length`, Anthropic's pattern message), or
/// `None`. Gemini and the text protocol reject no id.
pub(crate) fn rejection(api: Provider, body: &Value) -> Option<Rejection> {
    let at = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let list = |key: &str| body.get(key).and_then(Value::as_array).cloned();
    match api {
        Provider::OpenaiChat => {
            for (i, m) in list("messages")?.iter().enumerate() {
                let calls = m.get("tool_calls").and_then(Value::as_array);
                let mut ids: Vec<(String, String)> = calls
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .filter_map(|(k, c)| {
                        Some((format!("messages[{i}].tool_calls[{k}].id"), at(c, "id")?))
                    })
                    .collect();
                ids.extend(
                    at(m, "tool_call_id").map(|id| (format!("messages[{i}].tool_call_id"), id)),
                );
                if let Some(rej) = too_long(api, OPENAI_ID_MAX, ids) {
                    return Some(rej);
                }
            }
            None
        }
        Provider::OpenaiResponses => {
            let ids = list("input")?
                .iter()
                .enumerate()
                .filter_map(|(i, item)| Some((format!("input[{i}].call_id"), at(item, "call_id")?)))
                .collect();
            too_long(api, OPENAI_ID_MAX, ids)
        }
        Provider::Anthropic => {
            for (i, m) in list("messages")?.iter().enumerate() {
                let blocks = m.get("content").and_then(Value::as_array);
                for (k, b) in blocks.into_iter().flatten().enumerate() {
                    let (kind, key) = match b.get("type").and_then(Value::as_str) {
                        Some("tool_use") => ("tool_use", "id"),
                        Some("tool_result") => ("tool_result", "tool_use_id"),
                        _ => continue,
                    };
                    if let Some(id) = at(b, key)
                        && invalid(api, &id).is_some()
                    {
                        return Some(Rejection::bad_request(format!(
                            "messages.{i}.content.{k}.{kind}.{key}: String should match pattern '^[a-zA-Z0-9_-]+$'"
                        )));
                    }
                }
            }
            None
        }
        Provider::Gemini | Provider::TextProtocol => None,
    }
}

/// OpenAI's 400 for the first of `ids` (`(param, id)`) over `max` characters.
fn too_long(api: Provider, max: usize, ids: Vec<(String, String)>) -> Option<Rejection> {
    let (param, id) = ids.into_iter().find(|(_, id)| invalid(api, id).is_some())?;
    Some(
        Rejection::bad_request(format!(
            "Invalid '{param}': string too long. Expected a string with maximum length {max}, but got a string with length {} instead.",
            id.chars().count()
        ))
        .param(&param)
        .code("string_above_max_length"),
    )
}

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
        Provider::OpenaiChat if len > OPENAI_ID_MAX => {
            Some("Chat Completions ids are at most 64 characters")
        }
        Provider::OpenaiResponses if len > OPENAI_ID_MAX => {
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
