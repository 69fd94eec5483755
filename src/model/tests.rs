//! Tests of the neutral types.

use super::repair::arguments_unfinished;
use super::*;
use serde_json::Value;

#[test]
fn choice_slugs_round_trip() {
    for c in crate::providers::testkit::every_choice() {
        assert_eq!(
            ToolChoice::from_slug(&c.slug()),
            Some(c.clone()),
            "{}",
            c.slug()
        );
    }
    assert_eq!(ToolChoice::from_slug("forced-"), None);
    assert_eq!(ToolChoice::from_slug("allowed-maybe-a"), None);
    assert_eq!(ToolChoice::from_slug("allowed-auto-a++b"), None);
}

#[test]
fn unfinished_arguments_are_empty_or_not_complete_json() {
    assert!(arguments_unfinished(""));
    assert!(arguments_unfinished("  "));
    assert!(arguments_unfinished("{\"city\": \"Port of"));
    assert!(arguments_unfinished("{\"city\": \"Kingston\""));
    assert!(!arguments_unfinished("{\"city\": \"Kingston\"}"));
    assert!(!arguments_unfinished("{}"));
}

#[test]
fn a_withdrawn_call_keeps_its_text_as_received() {
    let call = |id: &str, arguments: Value| ToolCall::unsigned(id, "get_weather", arguments);
    let mut o = Outcome {
        tool_calls: vec![
            call("a", serde_json::json!({"city": "Kingston"})),
            call("b", Value::String("{\"city\": \"Po".into())),
        ],
        finish: Finish::Length,
        diagnostics: vec![Diagnostic {
            kind: DiagnosticKind::InvalidArgumentsJson,
            message: "not JSON".into(),
            offset: None,
            call_index: Some(1),
            recovered: true,
        }],
        ..Outcome::default()
    };
    o.withdraw_truncated_call();
    assert_eq!(o.tool_calls.len(), 1);
    let kinds: Vec<DiagnosticKind> = o.diagnostics.iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::TruncatedCall]);
    assert_eq!(
        o.truncated_call,
        Some(TruncatedCall {
            id: "b".into(),
            name: "get_weather".into(),
            arguments: "{\"city\": \"Po".into(),
        })
    );
    // Not under a length finish: nothing is withdrawn.
    let mut stop = Outcome {
        tool_calls: vec![call("a", serde_json::json!({}))],
        finish: Finish::Stop,
        ..Outcome::default()
    };
    stop.withdraw_truncated_call();
    assert_eq!(stop.tool_calls.len(), 1);
    assert_eq!(stop.truncated_call, None);
}
