//! The response-context check: a round continued by `previous_response_id` must reach upstream
//! with its earlier context, or with an id a Responses upstream knows; the result sent alone is
//! the finding.

use serde_json::{Value, json};

use super::{one, silent};
use crate::engine::check::{Continued, FindingKind, Side, response_context};
use crate::model::{ChatRequest, Message, Provider, Severity, ToolCall};

const ASKED: &str = "Umbrella in Bergen?";

/// The whole conversation the caller's continued round means.
fn meant() -> ChatRequest {
    let mut req = ChatRequest::empty("m", false);
    req.messages = vec![
        Message::User {
            content: ASKED.into(),
        },
        Message::Assistant {
            text: None,
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: json!({"city": "Bergen"}),
                thought_signature: None,
            }],
            opaque: Vec::new(),
        },
        Message::Tool {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: "rain".into(),
            is_error: false,
            parts: Vec::new(),
        },
    ];
    req
}

fn chat_body(messages: &[Value]) -> Value {
    json!({"model": "m", "messages": messages})
}

fn check(
    target: Provider,
    sent: &Value,
    decoded: Option<&ChatRequest>,
    status: u16,
    answer: &str,
) -> Vec<crate::engine::check::Finding> {
    let whole = meant();
    response_context(
        &Continued::of(&whole),
        target,
        (sent, decoded),
        (status, answer.as_bytes()),
    )
}

#[test]
fn the_whole_context_upstream_is_silent() {
    let whole = meant();
    let sent = chat_body(&[
        json!({"role": "user", "content": ASKED}),
        json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "rain"}),
    ]);
    silent(&check(Provider::OpenaiChat, &sent, Some(&whole), 200, "{}"));
}

#[test]
fn an_id_a_responses_upstream_knows_is_silent() {
    let sent = json!({"model": "m", "previous_response_id": "resp_1",
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "rain"}]});
    let result_only = ChatRequest::empty("m", false);
    silent(&check(
        Provider::OpenaiResponses,
        &sent,
        Some(&result_only),
        200,
        "{}",
    ));
}

#[test]
fn the_result_alone_is_the_finding() {
    let mut result_only = ChatRequest::empty("m", false);
    result_only.messages = vec![meant().messages[2].clone()];
    let sent = chat_body(&[json!({"role": "tool", "tool_call_id": "call_1", "content": "rain"})]);
    for status in [200, 400] {
        let found = check(
            Provider::OpenaiChat,
            &sent,
            Some(&result_only),
            status,
            "{}",
        );
        one(
            &found,
            FindingKind::ResponseContext,
            Side::Upstream,
            Severity::Breaking,
            "without the first user message \"Umbrella in Bergen?\" and the call `get_weather`",
        );
    }
}

#[test]
fn an_id_upstream_does_not_know_is_the_finding() {
    let sent = json!({"model": "m", "previous_response_id": "resp_gone",
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "rain"}]});
    let answer = r#"{"error": {"code": "previous_response_not_found"}}"#;
    let found = check(Provider::OpenaiResponses, &sent, None, 400, answer);
    one(
        &found,
        FindingKind::ResponseContext,
        Side::Upstream,
        Severity::Breaking,
        "a previous_response_id upstream did not know (400)",
    );
}
