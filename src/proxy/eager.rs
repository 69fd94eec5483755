//! Anthropic's fine-grained tool streaming (`eager_input_streaming: true` on a tool, stable; it
//! replaced the `fine-grained-tool-streaming-2025-05-14` beta): the neutral request has no place
//! for it, so the proxy reads it from a Messages body and puts it back on the same tools of an
//! Anthropic upstream's request. Another upstream has no such switch: it is dropped there, with
//! a note (`x-tooltape-notes`).

use serde_json::Value;

use crate::model::Provider;
use crate::respond::Inbound;

/// The names of the tools a Messages body asks to stream eagerly (none for other formats).
pub(super) fn eager_tools(inbound: Inbound, body: &Value) -> Vec<String> {
    if inbound != Inbound::Messages {
        return Vec::new();
    }
    let tools = body.get("tools").and_then(Value::as_array);
    (tools.into_iter().flatten())
        .filter(|t| t.get("eager_input_streaming") == Some(&Value::Bool(true)))
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Puts `eager_input_streaming: true` back on the named tools of an Anthropic request body;
/// for another upstream, the note saying it was dropped.
pub(super) fn apply(provider: Provider, body: &mut Value, eager: &[String]) -> Option<String> {
    if eager.is_empty() {
        return None;
    }
    if provider != Provider::Anthropic {
        return Some(format!(
            "eager_input_streaming dropped for {}: its stream has no such switch ({})",
            provider.slug(),
            eager.join(", ")
        ));
    }
    let tools = body.get_mut("tools").and_then(Value::as_array_mut);
    for t in tools.into_iter().flatten() {
        let named = t.get("name").and_then(Value::as_str);
        if named.is_some_and(|n| eager.iter().any(|e| e == n))
            && let Some(o) = t.as_object_mut()
        {
            o.insert("eager_input_streaming".into(), Value::Bool(true));
        }
    }
    None
}
