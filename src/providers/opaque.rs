//! Whose API an assistant turn's opaque item belongs to: each API takes back only the reasoning
//! and replay items it made (Anthropic `thinking`/`redacted_thinking` blocks, Responses
//! `reasoning` items, Gemini parts) and rejects the others', so an encoder sends its own and
//! drops (with a note) those of another API, as after a conversation changed provider; and a
//! tool-use turn without Anthropic's own thinking continues on Anthropic without thinking.

use serde_json::Value;

use crate::model::{ChatRequest, Message, Provider};

/// The API an opaque item is of, when its shape says so: Gemini parts have no `type`; a
/// `reasoning` item and an `item_reference` (to an item only the Responses server that stored it
/// can resolve) are Responses', and so are its server items (a tool search's, a program, a web
/// search call); `thinking` and `redacted_thinking` blocks are Anthropic's, and so are its server
/// tool blocks (`server_tool_use`, `*_tool_result`).
/// Other items are nobody's in particular: `None`.
pub(crate) fn owner(item: &Value) -> Option<Provider> {
    match item.get("type").and_then(Value::as_str) {
        // A model server's reasoning text on a Chat message.
        None if super::openai_chat::reasoning::is_item(item) => Some(Provider::OpenaiChat),
        None if item.is_object() => Some(Provider::Gemini),
        // Reasoning, stored items, and the server's own items: a tool search (class 28), a
        // program (class 30), a web search.
        Some(
            "reasoning" | "item_reference" | "program" | "program_output" | "tool_search_call"
            | "tool_search_output" | "web_search_call",
        ) => Some(Provider::OpenaiResponses),
        // Thinking, and server tool blocks: their calls and results (tool search, code
        // execution, web search and fetch).
        Some("thinking" | "redacted_thinking" | "server_tool_use") => Some(Provider::Anthropic),
        Some(t) if t.ends_with("_tool_result") => Some(Provider::Anthropic),
        _ => None,
    }
}

/// The items `api` takes back (its own and nobody's in particular), and a note for message `i`
/// when others are dropped.
pub(crate) fn own(api: Provider, i: usize, opaque: &[Value]) -> (Vec<Value>, Option<String>) {
    let (kept, dropped): (Vec<&Value>, Vec<&Value>) =
        (opaque.iter()).partition(|v| owner(v).is_none_or(|p| p == api));
    let note = (!dropped.is_empty()).then(|| {
        format!(
            "message {i}: {} reasoning item(s) of another API dropped: {} verifies only its own",
            dropped.len(),
            api.slug()
        )
    });
    (kept.into_iter().cloned().collect(), note)
}

/// To Anthropic with thinking on: when the last assistant turn with calls carries no thinking
/// block of Anthropic's own (another provider answered it, and its reasoning cannot be verified
/// there), the request goes without thinking, the one configuration that turn can continue in
/// (with thinking on, Anthropic answers 400 for a tool-use turn that does not start with one; one
/// thinking configuration per tool-use loop). `tooltape proxy` applies it to what it sends
/// upstream, the engine's caller to a round it continues on Anthropic.
pub(crate) fn think_only_on_own(provider: Provider, req: &mut ChatRequest) {
    if provider != Provider::Anthropic || req.thinking.is_none() {
        return;
    }
    let last = req.messages.iter().rev().find_map(|m| match m {
        Message::Assistant {
            tool_calls, opaque, ..
        } if !tool_calls.is_empty() => Some(opaque),
        _ => None,
    });
    // Anthropic's own thinking, not its server blocks.
    let own = |v: &Value| matches!(v["type"].as_str(), Some("thinking" | "redacted_thinking"));
    if last.is_some_and(|opaque| !opaque.iter().any(own)) {
        req.thinking = None;
    }
}

#[cfg(test)]
mod tests;
