use serde_json::json;

use crate::simulate::foreign::{GEMINI_SKIP, anthropic_signature, gemini_signature};

#[test]
fn anthropic_answers_400_for_a_thinking_signature_it_did_not_make() {
    let body = |sig: &str| {
        json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": sig},
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}]})
    };
    assert_eq!(anthropic_signature(&body("EqQBCkYIBRgCKkA")), None);
    assert_eq!(
        anthropic_signature(&body("CiQBVKhc7n")).as_deref(),
        Some("messages.1.content.0: Invalid `signature` in `thinking` block")
    );
}

#[test]
fn gemini_answers_400_for_a_thought_signature_it_did_not_make_but_takes_the_skip_value() {
    let body = |sig: &str| {
        json!({"contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": sig}]}]})
    };
    assert_eq!(gemini_signature(&body("CiQBVKhc7n")), None);
    assert_eq!(gemini_signature(&body(GEMINI_SKIP)), None);
    assert!(gemini_signature(&body("EqQBCkYIBRgCKkA")).is_some());
    assert_eq!(gemini_signature(&json!({"contents": []})), None);
}
