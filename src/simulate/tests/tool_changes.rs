//! Anthropic's mid-conversation tool changes: the model calls only the tools in force, and a
//! change without its beta header is refused.

use serde_json::{Value, json};

use super::support::{P, read, request};
use crate::scenario::{Scenario, ScenarioCall};
use crate::simulate::answer;
use crate::simulate::tool_changes::{CHANGES_BETA, INLINE_BETA};

fn changed(blocks: &Value) -> Value {
    json!({"model": "claude-opus-4-8", "max_tokens": 100,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}},
                  {"name": "get_time", "input_schema": {"type": "object"}, "defer_loading": true}],
        "messages": [{"role": "user", "content": "Time and weather?"},
                     {"role": "system", "content": blocks}]})
}

fn calls_both() -> Scenario {
    let call = |name: &str| ScenarioCall {
        name: name.into(),
        arguments: Default::default(),
        raw_arguments: None,
        id: None,
    };
    Scenario {
        calls: vec![call("get_weather"), call("get_time")],
        ..Scenario::default()
    }
}

#[test]
fn the_model_calls_only_the_tools_in_force() {
    let body = changed(&json!([
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}},
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_time"}}]));
    let req = request(P::Anthropic, &body, false).with_header("anthropic-beta", CHANGES_BETA);
    let resp = answer(&req, &calls_both());
    assert_eq!(resp.status, 200, "{:?}", resp.json());
    assert_eq!(read(P::Anthropic, false, &resp).names(), ["get_time"]);
    // Without the change the deferred tool is not in force.
    let plain = changed(&json!([{"type": "text", "text": "Go on."}]));
    let resp = answer(&request(P::Anthropic, &plain, false), &calls_both());
    assert_eq!(read(P::Anthropic, false, &resp).names(), ["get_weather"]);
}

#[test]
fn an_inline_definition_is_a_tool_in_force_with_both_betas() {
    let body = changed(
        &json!([{"type": "tool_addition", "tool": {"type": "tool_definition",
        "definition": {"name": "get_time", "input_schema": {"type": "object"}}}}]),
    );
    let both = format!("{CHANGES_BETA},{INLINE_BETA}");
    let req = request(P::Anthropic, &body, false).with_header("anthropic-beta", &both);
    let resp = answer(&req, &calls_both());
    assert_eq!(
        read(P::Anthropic, false, &resp).names(),
        ["get_weather", "get_time"]
    );
    let req = request(P::Anthropic, &body, false).with_header("anthropic-beta", CHANGES_BETA);
    let resp = answer(&req, &calls_both());
    assert_eq!(resp.status, 400);
    let msg = resp.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(msg.contains(INLINE_BETA), "{msg}");
}

#[test]
fn a_tool_change_without_its_beta_header_is_refused() {
    let body = changed(&json!([
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_time"}}]));
    let resp = answer(&request(P::Anthropic, &body, false), &calls_both());
    assert_eq!(resp.status, 400);
    assert_eq!(resp.json()["error"]["type"], "invalid_request_error");
    let msg = resp.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(msg.contains(CHANGES_BETA), "{msg}");
    let unknown = changed(&json!([
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "nope"}}]));
    let req = request(P::Anthropic, &unknown, false).with_header("anthropic-beta", CHANGES_BETA);
    assert_eq!(answer(&req, &calls_both()).status, 400);
}
