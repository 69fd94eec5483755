//! The Responses conversations the proxy keeps: a continuation gets the kept conversation before
//! its results, an unknown id is the API's 400, `store: false` keeps nothing.

use std::sync::Arc;

use serde_json::json;

use crate::model::{ChatRequest, Message, Outcome};
use crate::providers::testkit::weather_call;
use crate::proxy::conversations::{Continuation, Conversations, Keep};
use crate::respond::Inbound;

fn asked(previous: Option<&str>, store: bool) -> Continuation {
    Continuation {
        previous: previous.map(str::to_string),
        store,
    }
}

fn first_round() -> ChatRequest {
    let system = Message::System {
        content: "be brief".into(),
    };
    ChatRequest::new("m")
        .with_messages([system])
        .with_user("Umbrella in Bergen?")
}

fn called() -> Outcome {
    Outcome {
        tool_calls: vec![weather_call("call_1", json!({"city": "Bergen"}))],
        ..Outcome::default()
    }
}

fn result_only() -> ChatRequest {
    ChatRequest::new("m").with_messages([Message::Tool {
        call_id: "call_1".into(),
        name: String::new(),
        content: "rain".into(),
        is_error: false,
        parts: Vec::new(),
    }])
}

#[test]
fn a_kept_answer_is_continued_whole() {
    let kept = Arc::new(Conversations::default());
    let keep = Keep::of(&kept, &asked(None, true), "resp_tt1", &first_round());
    keep.expect("a stored Responses answer is kept")
        .answered(&called());
    let mut next = result_only();
    kept.continued(&asked(Some("resp_tt1"), true), &mut next)
        .expect("a kept id continues");
    assert!(
        matches!(&next.messages[0], Message::User { content } if content == "Umbrella in Bergen?")
    );
    assert!(
        matches!(&next.messages[1], Message::Assistant { tool_calls, .. } if tool_calls[0].id == "call_1")
    );
    assert!(matches!(&next.messages[2], Message::Tool { name, .. } if name == "get_weather"));
    assert_eq!(next.messages.len(), 3, "instructions are not carried over");
}

#[test]
fn unknown_and_unstored_ids_are_the_apis_400() {
    let kept = Arc::new(Conversations::default());
    assert!(Keep::of(&kept, &asked(None, false), "resp_tt2", &first_round()).is_none());
    for id in ["resp_tt2", "resp_never"] {
        let err = kept
            .continued(&asked(Some(id), true), &mut result_only())
            .expect_err("an id the proxy does not have");
        assert_eq!(err.status, 400);
        assert_eq!(
            err.message,
            format!("Previous response with id '{id}' not found.")
        );
        assert_eq!(
            err.extra.code.as_deref(),
            Some("previous_response_not_found")
        );
        assert_eq!(err.extra.param.as_deref(), Some("previous_response_id"));
    }
}

#[test]
fn a_result_for_no_kept_call_is_the_apis_400() {
    let kept = Arc::new(Conversations::default());
    let keep = Keep::of(&kept, &asked(None, true), "resp_tt3", &first_round());
    keep.expect("kept").answered(&called());
    let mut next = result_only();
    if let Message::Tool { call_id, .. } = &mut next.messages[0] {
        *call_id = "call_other".into();
    }
    let err = kept
        .continued(&asked(Some("resp_tt3"), true), &mut next)
        .expect_err("a result answering no call");
    assert_eq!(
        err.message,
        "No tool call found for function call output with call_id call_other."
    );
}

#[test]
fn only_responses_requests_carry_conversation_state() {
    let body = json!({"previous_response_id": "resp_1", "store": false});
    assert_eq!(
        Continuation::of(Inbound::Responses, &body),
        asked(Some("resp_1"), false)
    );
    assert_eq!(
        Continuation::of(Inbound::Chat, &body),
        Continuation::default()
    );
    assert!(Continuation::of(Inbound::Responses, &json!({})).store);
}
