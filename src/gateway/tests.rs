use super::check::{self, RequestView, Severity};
use super::profile::fill;
use crate::model::{ChatRequest, Message, Provider, StrictPolicy, ToolCall};
use serde_json::json;

#[test]
fn fills_placeholders() {
    assert_eq!(
        fill(
            "a {{port}} {{upstream}}/v1",
            &[("port", "1"), ("upstream", "http://x")]
        ),
        "a 1 http://x/v1"
    );
}

#[test]
fn a_result_that_answers_no_call_is_breaking() {
    let call = ToolCall {
        id: "call_1".into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Paris"}),
        thought_signature: None,
    };
    let result = |id: &str| Message::Tool {
        call_id: id.into(),
        name: "get_weather".into(),
        content: "sunny".into(),
        is_error: false,
    };
    let request = |id: &str| ChatRequest {
        messages: vec![
            Message::Assistant {
                text: None,
                tool_calls: vec![call.clone()],
                opaque: vec![],
            },
            result(id),
        ],
        model: "m".into(),
        tools: vec![],
        hosted: vec![],
        tool_choice: None,
        parallel_tool_calls: None,
        stream: false,
        max_tokens: None,
        strict: StrictPolicy::Off,
        thinking: None,
    };
    let client = RequestView::of(&request("call_1"));
    assert_eq!(
        client.results,
        vec![("call_1".into(), "get_weather".into())]
    );
    let kept = check::upstream(&client, &client, None, Provider::OpenaiChat, None, false);
    assert!(kept.is_empty(), "{kept:?}");
    let moved = RequestView::of(&request("call_2"));
    let found = check::upstream(&client, &moved, None, Provider::OpenaiChat, None, false);
    assert!(
        found
            .iter()
            .any(|f| f.severity == Severity::Breaking && f.message.contains("answers no call")),
        "{found:?}"
    );
}
