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
        owner(&json!({"text": "t", "thought": true})),
        Some(Provider::Gemini)
    );
    assert_eq!(
        owner(&json!({"type": "server_tool_use", "id": "srvtoolu_1"})),
        None
    );
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
