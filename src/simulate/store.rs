//! The simulated Responses API's conversation state: what it answered (the input items and the
//! output items of each response it stored) by response id, so a request naming
//! `previous_response_id` continues that conversation as OpenAI's does. One store per simulator
//! (and per recording upstream); bounded, oldest forgotten first; and an `item_reference` in the
//! input resolved to the stored item it names. The only state of the simulator's core: without
//! a store every `previous_response_id` and every referenced item is unknown.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};

use super::errors::Rejection;

/// How many responses a store keeps.
const KEPT: usize = 1024;

/// Conversations by response id.
#[derive(Default)]
pub(crate) struct Store {
    kept: Mutex<VecDeque<(String, Vec<Value>)>>,
}

impl Store {
    /// Keeps `items` (the whole conversation up to and with response `id`'s output).
    pub(crate) fn keep(&self, id: &str, items: Vec<Value>) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|(k, _)| k != id);
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((id.to_string(), items));
    }

    /// The item with `id` of any kept conversation (the newest), when kept.
    pub(crate) fn item(&self, id: &str) -> Option<Value> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        (kept.iter().rev())
            .flat_map(|(_, items)| items.iter())
            .find(|i| i.get("id").and_then(Value::as_str) == Some(id))
            .cloned()
    }

    /// The conversation up to and with response `id`, when kept.
    pub(crate) fn get(&self, id: &str) -> Option<Vec<Value>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter().find(|(k, _)| k == id).map(|(_, v)| v.clone())
    }
}

/// The request's `input` as items (a string input is one user message).
pub(crate) fn input_items(body: &Value) -> Vec<Value> {
    match body.get("input") {
        Some(Value::String(s)) => vec![json!({"role": "user", "content": s})],
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

/// The id a Responses request continues from, when it names one.
pub(crate) fn previous_id(body: &Value) -> Option<&str> {
    body.get("previous_response_id").and_then(Value::as_str)
}

/// A Responses request naming `previous_response_id`, continued: the kept conversation's items
/// before its own input. An id the store does not have (never answered, answered with
/// `store: false`, forgotten, or no store at all) is OpenAI's 400 `previous_response_not_found`
/// (docs/wire-formats.md, "Responses state").
pub(crate) fn continued(body: &mut Value, store: Option<&Store>) -> Result<(), Rejection> {
    let Some(id) = previous_id(body).map(str::to_string) else {
        return Ok(());
    };
    let Some(mut items) = store.and_then(|s| s.get(&id)) else {
        return Err(
            Rejection::bad_request(format!("Previous response with id '{id}' not found."))
                .param("previous_response_id")
                .code("previous_response_not_found"),
        );
    };
    items.extend(input_items(body));
    body["input"] = Value::Array(items);
    Ok(())
}

/// Each `item_reference` of the request's input replaced by the stored item it names, as
/// OpenAI's server reads it: a reference is the item (a reasoning item so referred to is the
/// reasoning sent back). An id the store does not have (never answered, answered with
/// `store: false`, forgotten, or no store at all) is OpenAI's 400 naming the item, `param:
/// "input"` (docs/wire-formats.md, "Item references").
pub(crate) fn resolved(body: &mut Value, store: Option<&Store>) -> Result<(), Rejection> {
    let Some(items) = body.get_mut("input").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    for item in items.iter_mut() {
        if item.get("type").and_then(Value::as_str) != Some("item_reference") {
            continue;
        }
        let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
        match store.and_then(|s| s.item(id)) {
            Some(found) => *item = found,
            None => {
                return Err(Rejection::bad_request(format!(
                    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                ))
                .param("input"));
            }
        }
    }
    Ok(())
}

/// Whether a response to this request is stored (`store` defaults to true).
pub(crate) fn stores(body: &Value) -> bool {
    body.get("store") != Some(&Value::Bool(false))
}

/// A continued request as one whole conversation (`previous_response_id` removed): what the
/// unlinked-result rule (`providers::unlinked_result`) reads, since its input now holds the calls.
pub(crate) fn whole(body: &Value) -> Cow<'_, Value> {
    if previous_id(body).is_none() {
        return Cow::Borrowed(body);
    }
    let mut whole = body.clone();
    if let Some(o) = whole.as_object_mut() {
        o.remove("previous_response_id");
    }
    Cow::Owned(whole)
}
