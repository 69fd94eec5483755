use serde_json::json;

use super::*;

#[test]
fn owners_by_shape() {
    assert_eq!(
        owner(&json!({"type": "thinking", "thinking": "t", "signature": "Eq"})),
        Some(Provider::Anthropic)
    );
    assert_eq!(
        owner(&json!({"type": "redacted_thinking", "data": "x"})),
        Some(Provider::Anthropic)
    );
    assert_eq!(
        owner(&json!({"type": "reasoning", "id": "rs_1"})),
        Some(Provider::OpenaiResponses)
    );
    assert_eq!(
        owner(&json!({"type": "item_reference", "id": "rs_1"})),
        Some(Provider::OpenaiResponses)
    );
    assert_eq!(
        owner(&json!({"text": "t", "thought": true})),
        Some(Provider::Gemini)
    );
    // Server items are their API's too: Anthropic's server tool blocks, Responses' items.
    for block in [
        "server_tool_use",
        "tool_search_tool_result",
        "code_execution_tool_result",
    ] {
        assert_eq!(
            owner(&json!({"type": block, "id": "srvtoolu_1"})),
            Some(Provider::Anthropic)
        );
    }
    for item in [
        "tool_search_call",
        "tool_search_output",
        "program",
        "web_search_call",
    ] {
        assert_eq!(
            owner(&json!({"type": item, "id": "x_1"})),
            Some(Provider::OpenaiResponses)
        );
    }
    assert_eq!(owner(&json!({"type": "mcp_list_tools"})), None);
}

#[test]
fn keeps_its_own_and_nobodys_drops_others_with_a_note() {
    let items = vec![
        json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA"}),
        json!({"type": "thinking", "thinking": "t", "signature": "Eq"}),
        json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1"}),
    ];
    let (kept, note) = own(Provider::Anthropic, 2, &items);
    assert_eq!(kept, vec![items[1].clone(), items[2].clone()]);
    assert_eq!(
        note.as_deref(),
        Some(
            "message 2: 1 reasoning item(s) of another API dropped: anthropic verifies only its own"
        )
    );
    let (kept, note) = own(Provider::OpenaiResponses, 0, &items[..1]);
    assert_eq!(kept, vec![items[0].clone()]);
    assert_eq!(note, None);
}

#[test]
fn a_tool_turn_another_provider_answered_goes_to_anthropic_without_thinking() {
    let follow_up = |id: &str, opaque: Vec<Value>| {
        let call = crate::model::ToolCall::unsigned(id, "get_weather", json!({}));
        let mut req = ChatRequest::new("m").with_messages([Message::Assistant {
            phase: None,
            text: None,
            tool_calls: vec![call],
            opaque,
        }]);
        req.thinking = Some(1024);
        req
    };
    let signed = json!({"type": "thinking", "thinking": "t", "signature": "EqQB"});
    let mut own = follow_up("toolu_1", vec![signed]);
    think_only_on_own(Provider::Anthropic, &mut own);
    assert_eq!(own.thinking, Some(1024));
    let mut foreign = follow_up("call_1", vec![json!({"type": "reasoning", "id": "rs_1"})]);
    think_only_on_own(Provider::Gemini, &mut foreign);
    assert_eq!(foreign.thinking, Some(1024));
    think_only_on_own(Provider::Anthropic, &mut foreign);
    assert_eq!(foreign.thinking, None);
    // No opaque item at all (a Chat upstream, or a gateway that gave none): the same.
    let mut bare = follow_up("call_1", vec![]);
    think_only_on_own(Provider::Anthropic, &mut bare);
    assert_eq!(bare.thinking, None);
}
