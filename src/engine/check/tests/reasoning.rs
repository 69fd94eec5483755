//! The reasoning check: each piece of reasoning state upstream answered with its calls must be
//! in the follow-up, unchanged; silence when it is, and when the answer called nothing.

use serde_json::{Value, json};

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, foreign_reasoning, reasoning};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity, ToolCall};

fn call(signature: Option<&str>) -> ToolCall {
    ToolCall {
        caller: None,
        id: "toolu_1".into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Bern"}),
        thought_signature: signature.map(str::to_string),
        namespace: None,
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
            phase: None,
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

#[test]
fn on_gemini_3_a_call_without_its_thought_signature_is_found_whatever_the_thinking_asked() {
    // Gemini 3 thinks and validates signatures whether or not the request asks (a thinkingLevel
    // is no budget); Gemini 2.5 without a thinking budget does not need them back.
    let mut sent = follow_up(vec![], None);
    sent.model = "gemini-3.8-flash".into();
    lost(
        &reasoning(&answered(vec![], Some("CiQB")), &sent),
        "thoughtSignature of the get_weather call",
    );
    sent.model = "gemini-2.5-flash".into();
    silent(&reasoning(&answered(vec![], Some("CiQB")), &sent));
}

#[test]
fn another_providers_reasoning_sent_as_the_targets_own_is_found() {
    use Provider::{Anthropic, Gemini, OpenaiResponses};
    let up = answered(vec![thinking("EqQBsig")], None);
    // Dropped, or the documented skip value in its place: silent.
    silent(&foreign_reasoning(
        Anthropic,
        Gemini,
        &up,
        &follow_up(vec![], None),
    ));
    let skip = follow_up(vec![], Some("skip_thought_signature_validator"));
    silent(&foreign_reasoning(Anthropic, Gemini, &up, &skip));
    // The Anthropic signature put into the Gemini call's thoughtSignature.
    let copied = follow_up(vec![], Some("EqQBsig"));
    lost(
        &foreign_reasoning(Anthropic, Gemini, &up, &copied),
        "anthropic's reasoning state (`EqQBsig…`) sent to gemini as its own",
    );
    // A Responses reasoning item sent on to Anthropic as it was.
    let rs = json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB"});
    let up = answered(vec![rs.clone()], None);
    lost(
        &foreign_reasoning(OpenaiResponses, Anthropic, &up, &follow_up(vec![rs], None)),
        "openai-responses's reasoning state (`gAAAAB…`) sent to anthropic",
    );
}

#[test]
fn an_item_reference_to_the_answered_reasoning_item_is_the_reasoning_kept() {
    let rs =
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"});
    let by_reference = json!({"type": "item_reference", "id": "rs_1"});
    silent(&reasoning(
        &answered(vec![rs], None),
        &follow_up(vec![by_reference], None),
    ));
}

#[test]
fn an_item_reference_to_an_id_never_answered_is_found() {
    let rs =
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"});
    let stale = json!({"type": "item_reference", "id": "rs_other"});
    let found = reasoning(&answered(vec![rs], None), &follow_up(vec![stale], None));
    lost(
        &found,
        "an item_reference names `rs_other`, an id upstream did not answer",
    );
}

#[test]
fn a_model_servers_reasoning_text_kept_is_silent_and_lost_or_altered_is_behaviour() {
    for field in ["reasoning", "reasoning_content"] {
        let text = json!({ field: "I need the weather in Bern." });
        silent(&reasoning(
            &answered(vec![text.clone()], None),
            &follow_up(vec![text.clone()], None),
        ));
        let gist = format!("the `{field}` text of the assistant message");
        for sent in [vec![], vec![json!({ field: "I need the weather." })]] {
            let found = reasoning(&answered(vec![text.clone()], None), &follow_up(sent, None));
            one(
                &found,
                FindingKind::Reasoning,
                Side::Upstream,
                Severity::Behaviour,
                &gist,
            );
        }
    }
}
