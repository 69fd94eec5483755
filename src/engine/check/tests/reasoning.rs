//! The reasoning check: each piece of reasoning state upstream answered with its calls must be
//! in the follow-up, unchanged; silence when it is, and when the answer called nothing.

use serde_json::{Value, json};

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, reasoning};
use crate::model::{ChatRequest, Message, Outcome, Severity, ToolCall};

fn call(signature: Option<&str>) -> ToolCall {
    ToolCall {
        id: "toolu_1".into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Bern"}),
        thought_signature: signature.map(str::to_string),
    }
}

fn thinking(signature: &str) -> Value {
    json!({"type": "thinking", "thinking": "I need the weather.", "signature": signature})
}

fn answered(opaque: Vec<Value>, signature: Option<&str>) -> Outcome {
    Outcome {
        tool_calls: vec![call(signature)],
        opaque,
        ..Outcome::default()
    }
}

fn follow_up(opaque: Vec<Value>, signature: Option<&str>) -> ChatRequest {
    ChatRequest::new("m").with_user("weather?").with_messages([
        Message::Assistant {
            text: None,
            tool_calls: vec![call(signature)],
            opaque,
        },
        Message::Tool {
            call_id: "toolu_1".into(),
            name: "get_weather".into(),
            content: "{}".into(),
            is_error: false,
            parts: Vec::new(),
        },
    ])
}

#[track_caller]
fn lost(found: &[crate::engine::check::Finding], gist: &str) {
    one(
        found,
        FindingKind::Reasoning,
        Side::Upstream,
        Severity::Breaking,
        gist,
    );
}

#[test]
fn reasoning_carried_back_unchanged_is_silent() {
    let redacted = json!({"type": "redacted_thinking", "data": "EmwKAhgB"});
    let items = vec![thinking("EqQBsig"), redacted];
    silent(&reasoning(
        &answered(items.clone(), None),
        &follow_up(items, None),
    ));
    let rs = vec![json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB"})];
    silent(&reasoning(
        &answered(rs.clone(), None),
        &follow_up(rs, None),
    ));
    silent(&reasoning(
        &answered(vec![], Some("CiQB")),
        &follow_up(vec![], Some("CiQB")),
    ));
}

#[test]
fn an_answer_without_calls_or_reasoning_has_nothing_to_carry() {
    let text_only = Outcome {
        opaque: vec![thinking("EqQBsig")],
        ..Outcome::default()
    };
    silent(&reasoning(&text_only, &follow_up(vec![], None)));
    silent(&reasoning(
        &answered(vec![], None),
        &follow_up(vec![], None),
    ));
    // Hosted-tool blocks and Gemini thought parts are not reasoning state.
    let other = vec![json!({"type": "server_tool_use", "id": "srvtoolu_1"})];
    silent(&reasoning(&answered(other, None), &follow_up(vec![], None)));
}

#[test]
fn a_dropped_or_altered_thinking_block_is_found() {
    let sent = follow_up(vec![], None);
    lost(
        &reasoning(&answered(vec![thinking("EqQBsig")], None), &sent),
        "thinking block with its signature",
    );
    let altered = follow_up(vec![thinking("EqQBother")], None);
    lost(
        &reasoning(&answered(vec![thinking("EqQBsig")], None), &altered),
        "thinking block",
    );
}

#[test]
fn a_dropped_redacted_block_is_found_even_when_the_thinking_block_came_back() {
    let redacted = json!({"type": "redacted_thinking", "data": "EmwKAhgB"});
    let up = answered(vec![thinking("EqQBsig"), redacted], None);
    lost(
        &reasoning(&up, &follow_up(vec![thinking("EqQBsig")], None)),
        "redacted_thinking block",
    );
}

#[test]
fn a_reasoning_item_without_its_encrypted_content_is_found() {
    let rs = json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB"});
    let bare = json!({"type": "reasoning", "id": "rs_1", "summary": []});
    lost(
        &reasoning(&answered(vec![rs], None), &follow_up(vec![bare], None)),
        "encrypted_content",
    );
}

#[test]
fn a_call_without_its_thought_signature_is_found_when_the_round_thinks() {
    let mut sent = follow_up(vec![], None);
    sent.thinking = Some(1024);
    lost(
        &reasoning(&answered(vec![], Some("CiQB")), &sent),
        "thoughtSignature of the get_weather call",
    );
    // A round that asks for no thinking is not judged on signatures.
    silent(&reasoning(
        &answered(vec![], Some("CiQB")),
        &follow_up(vec![], None),
    ));
}
