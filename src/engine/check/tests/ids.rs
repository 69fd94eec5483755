//! The call-id check: an id the target API rejects is a finding, unless the client sent it in
//! its own API where it is invalid too; silence on valid ids.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{Finding, FindingKind, Side, downstream_ids, linked, upstream_ids};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity, ToolCall};

fn conversation(id: &str) -> ChatRequest {
    ChatRequest::new("m").with_user("weather?").with_messages([
        Message::Assistant {
            phase: None,
            text: None,
            tool_calls: vec![ToolCall::unsigned(id, "get_weather", json!({}))],
            opaque: Vec::new(),
        },
        Message::Tool {
            call_id: id.into(),
            name: "get_weather".into(),
            content: "{}".into(),
            is_error: false,
            parts: Vec::new(),
        },
    ])
}

/// The one finding is a breaking call id on `side`, saying `gist`.
#[track_caller]
fn breaking_id(found: &[Finding], side: Side, gist: &str) {
    one(found, FindingKind::CallId, side, Severity::Breaking, gist);
}

#[test]
fn valid_ids_are_silent() {
    let ok = conversation("toolu_01");
    silent(&upstream_ids(
        &ok,
        Provider::Anthropic,
        &ok,
        Provider::OpenaiChat,
    ));
}

#[test]
fn an_id_the_target_rejects_is_one_finding_for_the_call_and_its_result() {
    let kimi = conversation("functions.get_weather:0");
    breaking_id(
        &upstream_ids(&kimi, Provider::Anthropic, &kimi, Provider::OpenaiChat),
        Side::Upstream,
        "^[a-zA-Z0-9_-]+$",
    );
    let long = conversation(&"c".repeat(65));
    breaking_id(
        &upstream_ids(&long, Provider::OpenaiChat, &long, Provider::Anthropic),
        Side::Upstream,
        "at most 64",
    );
}

#[test]
fn an_id_invalid_in_the_clients_own_api_is_the_clients_fault() {
    let kimi = conversation("functions.get_weather:0");
    silent(&upstream_ids(
        &kimi,
        Provider::Anthropic,
        &kimi,
        Provider::Anthropic,
    ));
}

fn call(id: &str, city: &str) -> ToolCall {
    ToolCall::unsigned(id, "get_weather", json!({ "city": city }))
}

fn answer(calls: Vec<ToolCall>) -> Outcome {
    Outcome {
        tool_calls: calls,
        ..Outcome::default()
    }
}

/// Two calls and their results, each result under the id given (`None`: its call's).
fn two_rounds(ids: [&str; 2], results: [&str; 2]) -> ChatRequest {
    let result = |id: &str, city: &str| Message::Tool {
        call_id: id.into(),
        name: "get_weather".into(),
        content: format!(r#"{{"city": "{city}"}}"#),
        parts: Vec::new(),
        is_error: false,
    };
    ChatRequest::new("m")
        .with_user("Oslo or Tromso?")
        .with_messages([
            Message::Assistant {
                phase: None,
                text: None,
                tool_calls: vec![call(ids[0], "Oslo"), call(ids[1], "Tromso")],
                opaque: Vec::new(),
            },
            result(results[0], "Oslo"),
            result(results[1], "Tromso"),
        ])
}

#[test]
fn ids_the_client_gets_are_valid_in_its_api_and_distinct() {
    let fine = answer(vec![call("call_1", "Oslo"), call("call_2", "Tromso")]);
    silent(&downstream_ids(Provider::Anthropic, &fine, Some(&fine)));
    let kimi = answer(vec![call("functions.get_weather:0", "Oslo")]);
    breaking_id(
        &downstream_ids(Provider::Anthropic, &kimi, Some(&kimi)),
        Side::Downstream,
        "^[a-zA-Z0-9_-]+$",
    );
    silent(&downstream_ids(Provider::OpenaiChat, &kimi, Some(&kimi)));
    let same = answer(vec![call("call_0", "Oslo"), call("call_0", "Tromso")]);
    let made = answer(vec![call("", "Oslo"), call("", "Tromso")]);
    breaking_id(
        &downstream_ids(Provider::OpenaiChat, &same, Some(&made)),
        Side::Downstream,
        "repeated in one answer",
    );
    // Upstream's own shared id passed on to a Chat client (Chat documents no uniqueness); an
    // Anthropic client must get distinct `tool_use` ids.
    silent(&downstream_ids(Provider::OpenaiChat, &same, Some(&same)));
    breaking_id(
        &downstream_ids(Provider::Anthropic, &same, Some(&same)),
        Side::Downstream,
        "repeated in one answer",
    );
}

#[test]
fn calls_sharing_one_id_upstream_merged_for_the_client_are_a_finding() {
    let shared = answer(vec![call("call_0", "Bergen"), call("call_0", "Galway")]);
    let merged = answer(vec![call("call_0", "Bergen")]);
    breaking_id(
        &downstream_ids(Provider::OpenaiChat, &merged, Some(&shared)),
        Side::Downstream,
        "merged",
    );
    let kept = answer(vec![call("call_0", "Bergen"), call("call_0-1", "Galway")]);
    silent(&downstream_ids(Provider::OpenaiChat, &kept, Some(&shared)));
}

#[test]
fn each_result_must_reach_upstream_linked_to_its_own_call() {
    let client = two_rounds(["a", "b"], ["a", "b"]);
    // Other ids upstream, linked the same way: silent.
    silent(&linked(
        &client,
        &two_rounds(["x_1", "x_2"], ["x_1", "x_2"]),
    ));
    // Calls sharing one id answered in order: silent.
    silent(&linked(&client, &two_rounds(["c", "c"], ["c", "c"])));
    // Both results under the first call's id.
    breaking_id(
        &linked(&client, &two_rounds(["a", "b"], ["a", "a"])),
        Side::Upstream,
        "is linked to the call get_weather",
    );
    // Results swapped onto each other's calls: both wrong.
    assert_eq!(
        linked(&client, &two_rounds(["a", "b"], ["b", "a"])).len(),
        2
    );
}
