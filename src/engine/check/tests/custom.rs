//! The check of OpenAI custom tools (`custom_tools`, `custom_kept`): each finding, and silence
//! when the custom tool went upstream as one.

use serde_json::{Value, json};

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, custom_kept, custom_tools};
use crate::http::HttpRequest;
use crate::model::{Provider, Severity};
use crate::providers::{DecodedRequest, decode_request};

const GRAMMAR: &str = "start: \"SELECT \" /[a-z]+/";

fn weather() -> Value {
    json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})
}

fn chat(tools: &[Value]) -> DecodedRequest {
    let body =
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools});
    decode_request(
        Provider::OpenaiChat,
        &HttpRequest::post("/v1/chat/completions", body),
    )
    .expect("a well-formed Chat request")
}

fn custom_chat() -> Value {
    json!({"type": "custom", "custom": {"name": "run_sql",
        "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": GRAMMAR}}}})
}

#[test]
fn names_the_custom_tools_of_chat_and_responses() {
    assert_eq!(
        custom_tools(&chat(&[weather(), custom_chat()])),
        ["run_sql"]
    );
    assert!(custom_tools(&chat(&[weather()])).is_empty());
    let body = json!({"model": "m", "input": "hi", "tools": [{"type": "custom", "name": "run_sql",
        "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR}}]});
    let d = decode_request(
        Provider::OpenaiResponses,
        &HttpRequest::post("/v1/responses", body),
    )
    .expect("a well-formed Responses request");
    assert_eq!(custom_tools(&d), ["run_sql"]);
}

#[test]
fn custom_tool_kept_is_silent() {
    let client = custom_tools(&chat(&[weather(), custom_chat()]));
    silent(&custom_kept(&client, &chat(&[weather(), custom_chat()])));
    silent(&custom_kept(&[], &chat(&[weather()])));
}

#[test]
fn custom_tool_sent_as_a_function_is_found() {
    let as_function = json!({"type": "function", "function": {"name": "run_sql",
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}}}}});
    one(
        &custom_kept(&["run_sql".into()], &chat(&[weather(), as_function])),
        FindingKind::Unexpressible,
        Side::Upstream,
        Severity::Breaking,
        "custom tool `run_sql` sent as an ordinary function",
    );
}

#[test]
fn custom_tool_dropped_is_found() {
    one(
        &custom_kept(&["run_sql".into()], &chat(&[weather()])),
        FindingKind::Unexpressible,
        Side::Upstream,
        Severity::Breaking,
        "custom tool `run_sql` dropped",
    );
}
