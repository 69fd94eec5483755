use super::check::{self, RequestView, Severity};
use super::profile::fill;
use crate::model::{ChatRequest, Message, Provider, StrictPolicy, Tool, ToolCall};
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

#[test]
fn text_protocol_calls_and_results_are_read_from_the_prose() {
    let call = |id: &str, name: &str| ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: json!({"city": "Paris \"<&>\""}),
        thought_signature: None,
    };
    let result = |id: &str, name: &str| Message::Tool {
        call_id: id.into(),
        name: name.into(),
        content: "<b>sunny</b>".into(),
        is_error: true,
    };
    let request = ChatRequest {
        messages: vec![
            Message::User {
                content: "weather?".into(),
            },
            Message::Assistant {
                text: Some("checking".into()),
                tool_calls: vec![call("call_1", "get_weather"), call("call_2", "a&\"b")],
                opaque: vec![],
            },
            result("call_1", "get_weather"),
            result("call_2", "a&\"b"),
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
    let client = RequestView::of(&request);
    let body = crate::providers::encode(Provider::TextProtocol, &request)
        .unwrap()
        .request
        .body;
    let sent = check::text_protocol_view(&body);
    let names = |v: &[(String, String)]| v.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&sent.calls), ["get_weather", "a&\"b"]);
    assert_eq!(names(&sent.results), ["get_weather", "a&\"b"]);
    let kept = check::results(&client, &sent);
    assert!(kept.is_empty(), "{kept:?}");

    // A result dropped, and one answering a call the conversation does not hold.
    let mut wrong = body.clone();
    wrong["messages"][2]["content"] =
        json!("<tool_result name=\"get_time\" call_id=\"call>9\">noon</tool_result>");
    let found = check::results(&client, &check::text_protocol_view(&wrong));
    let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "tool result for get_time answers no call",
            "tool results dropped"
        ]
    );
    // Malformed prose is read as nothing, never a panic.
    let odd = json!({"messages": [{"role": "assistant", "content": "<tool_call>{not json</tool_call>"},
        {"role": "user", "content": "<tool_result name=\"x"}, {"role": "user", "content": 3}]});
    assert_eq!(check::text_protocol_view(&odd), RequestView::default());
}

#[test]
fn strict_is_wanted_where_the_projects_encoder_sends_it() {
    let tool = |strict: Option<bool>| Tool {
        name: "book".into(),
        description: None,
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
        strict,
    };
    let view = |strict: Option<bool>| RequestView {
        tools: vec![tool(strict)],
        ..RequestView::default()
    };
    let (client, sent) = (view(Some(true)), view(None));
    let found = |ours: Option<&RequestView>| {
        check::upstream(&client, &sent, ours, Provider::Anthropic, None, false)
            .into_iter()
            .map(|f| f.message)
            .collect::<Vec<_>>()
    };
    // The encoder sends it strict: dropping it is a finding.
    assert_eq!(found(Some(&view(Some(true)))), ["strict dropped for book"]);
    // The encoder drops it too (outside Anthropic's strict subset): the target cannot take it.
    assert!(found(Some(&view(Some(false)))).is_empty());
    // Without the encoder's view, a strict client tool to a strict-capable target is wanted.
    assert_eq!(found(None), ["strict dropped for book"]);
}
