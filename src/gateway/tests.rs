use super::profile::fill;
use super::view;
use crate::model::{Provider, ToolChoice};
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
fn reads_choice_meaning_in_every_format() {
    let chat = view::read(
        Provider::OpenaiChat,
        "/v1/chat/completions",
        &json!({"tool_choice": "required"}),
    );
    assert_eq!(chat.choice, Some(ToolChoice::Required));
    let anth = view::read(
        Provider::Anthropic,
        "/v1/messages",
        &json!({"tool_choice": {"type": "tool", "name": "a", "disable_parallel_tool_use": true}}),
    );
    assert_eq!(anth.choice, Some(ToolChoice::Forced("a".into())));
    assert_eq!(anth.parallel, Some(false));
    let gem = view::read(
        Provider::Gemini,
        "/v1beta/models/m:generateContent",
        &json!({"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}}),
    );
    assert_eq!(gem.choice, Some(ToolChoice::Required));
}
