//! `eager_input_streaming` (Anthropic's fine-grained tool streaming): read from a Messages body,
//! put back on an Anthropic upstream's tools, dropped with a note elsewhere.

use serde_json::json;

use crate::model::Provider;
use crate::proxy::eager::{apply, eager_tools};
use crate::respond::Inbound;

#[test]
fn an_eager_tool_is_kept_for_anthropic_and_dropped_with_a_note_elsewhere() {
    let asked = json!({"tools": [
        {"name": "make_file", "input_schema": {"type": "object"}, "eager_input_streaming": true},
        {"name": "get_time", "input_schema": {"type": "object"}, "eager_input_streaming": false}]});
    let eager = eager_tools(Inbound::Messages, &asked);
    assert_eq!(eager, ["make_file"]);
    assert!(eager_tools(Inbound::Chat, &asked).is_empty());
    let mut upstream = json!({"tools": [
        {"name": "make_file", "input_schema": {"type": "object"}},
        {"name": "get_time", "input_schema": {"type": "object"}}]});
    assert_eq!(apply(Provider::Anthropic, &mut upstream, &eager), None);
    assert_eq!(upstream["tools"][0]["eager_input_streaming"], true);
    assert!(upstream["tools"][1].get("eager_input_streaming").is_none());
    let mut chat = json!({"tools": [{"type": "function", "function": {"name": "make_file"}}]});
    let note = apply(Provider::OpenaiChat, &mut chat, &eager).unwrap_or_default();
    assert!(
        note.starts_with("eager_input_streaming dropped for openai-chat"),
        "{note}"
    );
    assert!(chat["tools"][0].get("eager_input_streaming").is_none());
    assert_eq!(apply(Provider::Gemini, &mut chat, &[]), None);
}
