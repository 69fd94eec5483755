//! The reasoning the proxy keeps: put back into the follow-up carrying the same calls to the
//! same upstream, in that upstream's form, and nowhere else.

use serde_json::json;

use crate::model::{ChatRequest, Message, Outcome, Provider, ToolCall};
use crate::proxy::reasoning::Reasoning;

fn call(id: &str, signature: Option<&str>) -> ToolCall {
    ToolCall {
        caller: None,
        id: id.into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Bern"}),
        thought_signature: signature.map(str::to_string),
        namespace: None,
    }
}

fn follow_up(id: &str, opaque: Vec<serde_json::Value>) -> ChatRequest {
    ChatRequest::new("m").with_messages([Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![call(id, None)],
        opaque,
    }])
}

/// `kept` remembers `upstream`'s answer of one `call` with `opaque` reasoning items.
fn remember(kept: &Reasoning, upstream: Provider, call: ToolCall, opaque: Vec<serde_json::Value>) {
    let answer = Outcome {
        tool_calls: vec![call],
        opaque,
        ..Outcome::default()
    };
    kept.remember(upstream, &ChatRequest::new("m"), &answer);
}

fn assistant(req: &ChatRequest) -> (&[ToolCall], &[serde_json::Value]) {
    match &req.messages[0] {
        Message::Assistant {
            tool_calls, opaque, ..
        } => (tool_calls, opaque),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_reasoning_of_an_answer_goes_back_with_its_calls_to_the_same_upstream_only() {
    let kept = Reasoning::default();
    let thinking = json!({"type": "thinking", "thinking": "t", "signature": "EqQB"});
    remember(
        &kept,
        Provider::Anthropic,
        call("toolu_1", None),
        vec![thinking.clone()],
    );
    remember(
        &kept,
        Provider::Gemini,
        call("g_1", Some("CiQB")),
        Vec::new(),
    );
    // A Chat client sent the calls back without reasoning (or with another format's items).
    let foreign = json!({"type": "reasoning", "id": "rs_1"});
    let mut req = follow_up("toolu_1", vec![foreign]);
    kept.restore(Provider::Anthropic, &mut req);
    assert_eq!(assistant(&req).1, [thinking]);
    let mut gem = follow_up("g_1", vec![]);
    kept.restore(Provider::Gemini, &mut gem);
    assert_eq!(
        assistant(&gem).0[0].thought_signature.as_deref(),
        Some("CiQB")
    );
    // Another upstream, or other calls: nothing put back.
    let mut other = follow_up("toolu_1", vec![]);
    kept.restore(Provider::OpenaiResponses, &mut other);
    assert!(assistant(&other).1.is_empty());
    let mut unknown = follow_up("toolu_9", vec![]);
    if let Message::Assistant { tool_calls, .. } = &mut unknown.messages[0] {
        tool_calls[0].arguments = json!({"city": "Chur"});
    }
    kept.restore(Provider::Anthropic, &mut unknown);
    assert!(assistant(&unknown).1.is_empty());
    // The same call under another id (a Gemini client's ids are made anew): put back.
    let mut renamed = follow_up("gemini-call-0-get_weather", vec![]);
    kept.restore(Provider::Anthropic, &mut renamed);
    assert_eq!(assistant(&renamed).1.len(), 1);
}

#[test]
fn answers_without_calls_or_reasoning_are_not_kept() {
    let kept = Reasoning::default();
    kept.remember(
        Provider::Anthropic,
        &ChatRequest::new("m"),
        &Outcome::default(),
    );
    remember(
        &kept,
        Provider::Anthropic,
        call("toolu_1", None),
        Vec::new(),
    );
    let thinking = json!({"type": "thinking", "thinking": "t", "signature": "EqQB"});
    let mut req = follow_up("toolu_1", vec![thinking.clone()]);
    kept.restore(Provider::Anthropic, &mut req);
    assert_eq!(assistant(&req).1, [thinking], "what the client sent stays");
}

#[test]
fn calls_from_another_provider_go_to_a_thinking_gemini_with_the_documented_skip_value() {
    use crate::proxy::reasoning::{SKIP_SIGNATURE, sign_foreign};
    let thinking = json!({"type": "thinking", "thinking": "t", "signature": "EqQB"});
    let mut req = follow_up("toolu_1", vec![thinking]);
    sign_foreign(Provider::Anthropic, &mut req);
    assert_eq!(assistant(&req).0[0].thought_signature, None);
    sign_foreign(Provider::Gemini, &mut req);
    assert_eq!(
        assistant(&req).0[0].thought_signature.as_deref(),
        Some(SKIP_SIGNATURE)
    );
    // A call Gemini signed keeps its own signature.
    let mut own = ChatRequest::new("m").with_messages([Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![call("c1", Some("CiQB"))],
        opaque: vec![],
    }]);
    sign_foreign(Provider::Gemini, &mut own);
    assert_eq!(
        assistant(&own).0[0].thought_signature.as_deref(),
        Some("CiQB")
    );
}

#[test]
fn an_item_reference_goes_to_responses_as_it_came_and_elsewhere_resolved_or_refused() {
    let kept = Reasoning::default();
    let rs =
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"});
    remember(
        &kept,
        Provider::OpenaiResponses,
        call("call_1", None),
        vec![rs.clone()],
    );
    let reference = json!({"type": "item_reference", "id": "rs_1"});
    // To the Responses upstream that stored it: the reference is the reasoning carried.
    let mut same = follow_up("call_1", vec![reference.clone()]);
    kept.restore(Provider::OpenaiResponses, &mut same);
    assert_eq!(kept.resolve(Provider::OpenaiResponses, &mut same), Ok(()));
    assert_eq!(assistant(&same).1, std::slice::from_ref(&reference));
    // To another API: resolved from the item the proxy kept (its encoder then drops it).
    let mut other = follow_up("call_9", vec![reference]);
    kept.restore(Provider::Anthropic, &mut other);
    assert_eq!(kept.resolve(Provider::Anthropic, &mut other), Ok(()));
    assert_eq!(assistant(&other).1, [rs]);
    // The kept reasoning put back over a turn leaves its reference to another item, refused.
    let text = json!({"type": "item_reference", "id": "msg_2"});
    let mut beside = follow_up("call_1", vec![text.clone()]);
    kept.restore(Provider::OpenaiResponses, &mut beside);
    assert_eq!(assistant(&beside).1.len(), 2);
    assert_eq!(assistant(&beside).1[1], text);
    // A reference the proxy cannot resolve: refused, naming it.
    let mut unknown = follow_up(
        "call_9",
        vec![json!({"type": "item_reference", "id": "msg_7"})],
    );
    let refused = kept.resolve(Provider::Gemini, &mut unknown).unwrap_err();
    assert!(refused.contains("`msg_7`"), "{refused}");
}
