//! Responses conversation state on the client's side (class 22): the id of the response an
//! answer carries, buffered or streamed, and a round continued from it: only the items after
//! the model's last turn (its results) and `previous_response_id`, the earlier context left to
//! the server that stored it.

use serde_json::{Value, json};

/// The id of the response in a Responses answer: a buffered body's `id`, or a stream's first
/// event carrying `response.id` (`response.created`).
pub fn response_id(body: &[u8]) -> Option<String> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return v.get("id").and_then(Value::as_str).map(str::to_string);
    }
    let text = String::from_utf8_lossy(body);
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find_map(|e| e.pointer("/response/id")?.as_str().map(str::to_string))
}

/// Whether an input item is part of a model's turn (what a stored response already holds; an
/// `item_reference` names such an item).
fn answered(item: &Value) -> bool {
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    match kind {
        "message" => item.get("role").and_then(Value::as_str) == Some("assistant"),
        "function_call_output" | "custom_tool_call_output" => false,
        "input_text" | "input_image" | "input_file" => false,
        _ => true,
    }
}

/// `body` (a whole-conversation Responses request) stored (`store: true`) with each reasoning
/// item of its input sent as an `item_reference` to its id: what an SDK sends for items the
/// server stored (the Vercel AI SDK with OpenAI's default `store: true`).
pub fn refer_to_reasoning(body: &mut Value) {
    if let Some(items) = body.get_mut("input").and_then(Value::as_array_mut) {
        for item in items.iter_mut() {
            if item.get("type").and_then(Value::as_str) == Some("reasoning")
                && let Some(id) = item.get("id").cloned()
            {
                *item = json!({"type": "item_reference", "id": id});
            }
        }
    }
    body["store"] = json!(true);
}

/// `body` (a whole-conversation Responses request) continued from response `id`: its input cut
/// to the items after the model's last turn, `previous_response_id` set.
pub fn continue_from(body: &mut Value, id: &str) {
    if let Some(items) = body.get_mut("input").and_then(Value::as_array_mut) {
        let last = items.iter().rposition(answered).map_or(0, |i| i + 1);
        items.drain(..last);
    }
    body["previous_response_id"] = json!(id);
}
