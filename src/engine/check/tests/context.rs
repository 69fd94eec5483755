//! The response-context check: a round continued by `previous_response_id` must reach upstream
//! with its earlier context, or with an id a Responses upstream knows; the result sent alone is
//! the finding; an id sent with the earlier items again (`repeated_upstream`), and a library
//! asked to continue by id that names another or none (`continued_by_id`), are findings too.

use serde_json::{Value, json};

use super::{one, silent};
use crate::engine::check::{
    Continued, FindingKind, Side, continued_by_id, repeated_upstream, response_context,
};
use crate::model::{ChatRequest, Message, Provider, Severity};
use crate::providers::testkit::weather_call;

const ASKED: &str = "Umbrella in Bergen?";

/// The whole conversation the caller's continued round means.
fn meant() -> ChatRequest {
    let mut req = ChatRequest::empty("m", false);
    req.messages = vec![
        Message::User {
            content: ASKED.into(),
        },
        Message::Assistant {
            phase: None,
            text: None,
            tool_calls: vec![weather_call("call_1", json!({"city": "Bergen"}))],
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

/// A Responses body continued by `resp_1`, with `input`.
fn by_id(input: &[Value]) -> Value {
    json!({"model": "m", "previous_response_id": "resp_1", "input": input})
}

#[test]
fn an_id_with_only_the_new_items_repeats_nothing() {
    let whole = meant();
    let mut result_only = ChatRequest::empty("m", false);
    result_only.messages = vec![whole.messages[2].clone()];
    let sent =
        by_id(&[json!({"type": "function_call_output", "call_id": "call_1", "output": "rain"})]);
    let target = Provider::OpenaiResponses;
    silent(&repeated_upstream(
        &whole,
        target,
        (&sent, Some(&result_only)),
        (200, b"{}"),
    ));
}

#[test]
fn an_id_with_the_earlier_items_again_is_the_finding() {
    let whole = meant();
    let sent = by_id(&[]);
    let target = Provider::OpenaiResponses;
    one(
        &repeated_upstream(&whole, target, (&sent, Some(&whole)), (200, b"{}")),
        FindingKind::ResponseContext,
        Side::Upstream,
        Severity::Behaviour,
        "the earlier items again (the user message \"Umbrella in Bergen?\", the call `get_weather`)",
    );
    // An id upstream did not know holds nothing: that is the lost context's finding.
    let gone = br#"{"error": {"code": "previous_response_not_found"}}"#;
    silent(&repeated_upstream(
        &whole,
        target,
        (&sent, Some(&whole)),
        (400, gone),
    ));
    // Without an id, the whole conversation is what must be sent.
    let chat = chat_body(&[]);
    silent(&repeated_upstream(
        &whole,
        Provider::OpenaiChat,
        (&chat, Some(&whole)),
        (200, b"{}"),
    ));
}

#[test]
fn a_library_asked_to_continue_by_id_names_the_last_answers() {
    let target = Provider::OpenaiResponses;
    let sent = by_id(&[]);
    assert!(continued_by_id(&sent, target, Some("resp_1"), false).is_none());
    let other = continued_by_id(&sent, target, Some("resp_0"), false);
    one(
        &Vec::from_iter(other),
        FindingKind::ResponseContext,
        Side::Upstream,
        Severity::Behaviour,
        "not the id of upstream's last answer",
    );
    let whole = json!({"model": "m", "input": []});
    one(
        &Vec::from_iter(continued_by_id(&whole, target, Some("resp_1"), false)),
        FindingKind::ResponseContext,
        Side::Upstream,
        Severity::Behaviour,
        "the whole conversation sent again",
    );
    // Neither the id nor the context: the lost context's finding says it already.
    assert!(continued_by_id(&whole, target, Some("resp_1"), true).is_none());
    assert!(continued_by_id(&whole, Provider::OpenaiChat, Some("resp_1"), false).is_none());
}
