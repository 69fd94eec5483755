//! Call ids: each API's rule, and the rewrite that makes any id valid, stable and distinct.

use super::{fit, invalid};
use crate::model::Provider;

#[test]
fn each_api_says_which_ids_it_takes() {
    let kimi = "functions.get_weather:0";
    assert!(invalid(Provider::Anthropic, kimi).is_some());
    assert!(invalid(Provider::Anthropic, "toolu_01A-b").is_none());
    assert!(invalid(Provider::OpenaiChat, kimi).is_none());
    // 64 since 2026 (Chat answered 40 before): jin-bo/agentao#321, decolua/9router#3167.
    assert!(invalid(Provider::OpenaiChat, &"c".repeat(64)).is_none());
    assert!(invalid(Provider::OpenaiChat, &"c".repeat(65)).is_some());
    assert!(invalid(Provider::OpenaiResponses, &"c".repeat(64)).is_none());
    assert!(invalid(Provider::OpenaiResponses, &"c".repeat(65)).is_some());
    assert!(invalid(Provider::Gemini, kimi).is_none());
}

#[test]
fn an_id_the_api_rejects_is_rewritten_the_same_way_every_time_and_kept_distinct() {
    assert_eq!(fit(Provider::Anthropic, "toolu_1"), "toolu_1");
    let a = fit(Provider::Anthropic, "functions.get_weather:0");
    assert_eq!(a, fit(Provider::Anthropic, "functions.get_weather:0"));
    assert_ne!(a, fit(Provider::Anthropic, "functions.get_weather:1"));
    assert!(invalid(Provider::Anthropic, &a).is_none(), "{a}");
    let long = format!("call_{}", "x".repeat(60));
    for api in [
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Anthropic,
    ] {
        let f = fit(api, &long);
        assert!(invalid(api, &f).is_none(), "{api:?}: {f}");
    }
}

#[test]
fn an_answers_ids_are_made_valid_for_the_client_and_distinct() {
    use crate::model::{Outcome, ToolCall};
    let call = |id: &str| ToolCall::unsigned(id, "get_weather", serde_json::json!({}));
    let mut o = Outcome {
        tool_calls: vec![
            call("call_0"),
            call("call_0"),
            call("functions.get_weather:2"),
        ],
        ..Outcome::default()
    };
    super::fit_answer(Provider::Anthropic, &mut o);
    let ids: Vec<&str> = o.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids[..2], ["call_0", "call_0-1"]);
    assert!(invalid(Provider::Anthropic, ids[2]).is_none(), "{ids:?}");
    // Valid and distinct: unchanged.
    let before = o.clone();
    super::fit_answer(Provider::Anthropic, &mut o);
    assert_eq!(o, before);
}

#[test]
fn each_api_answers_its_own_400_for_an_id_it_rejects() {
    use serde_json::json;
    let long = "c".repeat(65);
    let chat = json!({"messages": [
        {"role": "assistant", "tool_calls": [{"id": long, "type": "function"}]},
        {"role": "tool", "tool_call_id": long, "content": "{}"}]});
    let rej = super::rejection(Provider::OpenaiChat, &chat).expect("Chat refuses");
    assert_eq!(rej.status, 400);
    assert!(
        rej.message.contains("messages[0].tool_calls[0].id"),
        "{}",
        rej.message
    );
    assert!(
        rej.message
            .contains("maximum length 64, but got a string with length 65")
    );
    let anthropic = json!({"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "functions.get_weather:0", "name": "get_weather", "input": {}}]}]});
    let rej = super::rejection(Provider::Anthropic, &anthropic).expect("Anthropic refuses");
    assert!(
        rej.message
            .starts_with("messages.0.content.0.tool_use.id: String should match pattern")
    );
    let responses = json!({"input": [{"type": "function_call_output", "call_id": "c".repeat(65)}]});
    assert!(super::rejection(Provider::OpenaiResponses, &responses).is_some());
    assert!(super::rejection(Provider::Gemini, &anthropic).is_none());
    assert!(super::rejection(Provider::Anthropic, &json!({"messages": []})).is_none());
}
