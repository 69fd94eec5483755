//! A tool search the upstream ran (`Outcome::tool_search`), written back in the client's
//! format as the server activity it is, never as a call of the client's (class 28): Anthropic a
//! `server_tool_use` block and its `tool_search_tool_result` with one `tool_reference` per tool
//! loaded; Responses a `tool_search_call` item and its `tool_search_output` naming the functions
//! loaded (their names only: the outcome keeps no definitions; docs/wire-formats.md). Chat and
//! Gemini have no form for it: a request that could cause one is refused before it is sent.
//! A call the model's code made goes back with its `caller`, and Anthropic's answer with the
//! `container` that code runs in (class 30).

use serde_json::{Value, json};

use super::format::Meta;
use crate::model::{Caller, Outcome};

/// Anthropic's blocks for the outcome's tool search (none without one).
pub(super) fn anthropic_blocks(o: &Outcome, meta: &Meta) -> Vec<Value> {
    let Some(ts) = &o.tool_search else {
        return Vec::new();
    };
    let id = format!("srvtoolu_{}", id_part(&meta.id));
    let name = ts.tool.as_deref().unwrap_or("tool_search_tool_regex");
    let refs: Vec<Value> = (ts.loaded.iter())
        .map(|t| json!({"type": "tool_reference", "tool_name": t}))
        .collect();
    vec![
        json!({"type": "server_tool_use", "id": id, "name": name, "input": {}}),
        json!({"type": "tool_search_tool_result", "tool_use_id": id,
               "content": {"type": "tool_search_tool_search_result", "tool_references": refs}}),
    ]
}

/// Responses' items for the outcome's tool search (none without one).
pub(super) fn responses_items(o: &Outcome, meta: &Meta) -> Vec<Value> {
    let Some(ts) = &o.tool_search else {
        return Vec::new();
    };
    let tools: Vec<Value> = (ts.loaded.iter())
        .map(|t| json!({"type": "function", "name": t, "defer_loading": true}))
        .collect();
    let id = id_part(&meta.id);
    vec![
        json!({"id": format!("tsc_{id}"), "type": "tool_search_call", "execution": "server",
               "call_id": null, "status": "completed", "arguments": {"paths": ts.loaded}}),
        json!({"id": format!("tso_{id}"), "type": "tool_search_output", "execution": "server",
               "call_id": null, "status": "completed", "tools": tools}),
    ]
}

/// A Responses `function_call` item with the call's `namespace`, when it has one.
pub(super) fn with_namespace(mut item: Value, namespace: Option<&str>) -> Value {
    if let Some(space) = namespace {
        item["namespace"] = json!(space);
    }
    item
}

/// A call (Responses `function_call` item, Anthropic `tool_use` block) with the code that made
/// it, when the model's code did (class 30), written as the call's own API writes it.
pub(super) fn with_caller(mut call: Value, caller: Option<&Caller>) -> Value {
    if let Some(c) = caller {
        call["caller"] = crate::providers::programmatic::wire_caller(c);
    }
    call
}

/// Anthropic's `container` of an answer, from its id (the expiry is the upstream's: not kept).
pub(super) fn container(id: &str) -> Value {
    json!({"id": id})
}

/// The answer's id without its own prefix, to build the search's ids from.
fn id_part(id: &str) -> &str {
    id.split_once('_').map_or(id, |(_, rest)| rest)
}
