//! The call-id check: an id the target API rejects is a finding, unless the client sent it in
//! its own API where it is invalid too; silence on valid ids.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, upstream_ids};
use crate::model::{ChatRequest, Message, Provider, Severity, ToolCall};

fn conversation(id: &str) -> ChatRequest {
    ChatRequest::new("m").with_user("weather?").with_messages([
        Message::Assistant {
            text: None,
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "get_weather".into(),
                arguments: json!({}),
                thought_signature: None,
            }],
            opaque: Vec::new(),
        },
        Message::Tool {
            call_id: id.into(),
            name: "get_weather".into(),
            content: "{}".into(),
            is_error: false,
            parts: Vec::new(),
        },
    ])
}

#[test]
fn valid_ids_are_silent() {
    let ok = conversation("toolu_01");
    silent(&upstream_ids(
        &ok,
        Provider::Anthropic,
        &ok,
        Provider::OpenaiChat,
    ));
}

#[test]
fn an_id_the_target_rejects_is_one_finding_for_the_call_and_its_result() {
    let kimi = conversation("functions.get_weather:0");
    one(
        &upstream_ids(&kimi, Provider::Anthropic, &kimi, Provider::OpenaiChat),
        FindingKind::CallId,
        Side::Upstream,
        Severity::Breaking,
        "^[a-zA-Z0-9_-]+$",
    );
    let long = conversation(&"c".repeat(41));
    one(
        &upstream_ids(&long, Provider::OpenaiChat, &long, Provider::Anthropic),
        FindingKind::CallId,
        Side::Upstream,
        Severity::Breaking,
        "at most 40",
    );
}

#[test]
fn an_id_invalid_in_the_clients_own_api_is_the_clients_fault() {
    let kimi = conversation("functions.get_weather:0");
    silent(&upstream_ids(
        &kimi,
        Provider::Anthropic,
        &kimi,
        Provider::Anthropic,
    ));
}
