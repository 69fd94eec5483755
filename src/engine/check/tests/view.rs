//! `RequestView`: what it reads from a request, schemas read by meaning, the text protocol's prose.

use serde_json::json;

use crate::engine::check::{RequestView, text_protocol_view};
use crate::model::{Grounding, HostedTool, Message, Tool, ToolCall, ToolChoice};

fn tool(parameters: serde_json::Value) -> Tool {
    Tool {
        allowed_callers: Vec::new(),
        output_schema: None,
        name: "t".into(),
        description: None,
        parameters,
        strict: None,
        eager_input_streaming: false,
        defer_loading: false,
        namespace: None,
    }
}

/// The parameters of a one-tool view read by meaning.
fn by_meaning(parameters: serde_json::Value) -> serde_json::Value {
    let view = RequestView {
        tools: vec![tool(parameters)],
        ..RequestView::default()
    };
    view.by_meaning().tools.remove(0).parameters
}

#[test]
fn a_view_reads_tools_choice_switches_calls_and_results() {
    let mut request = crate::providers::testkit::request(&["get_weather"], false);
    let calls = [("call_1", "get_weather"), ("call_2", "get_time")];
    let tool_calls = calls
        .iter()
        .map(|(id, name)| ToolCall::unsigned(*id, *name, json!({})));
    request.messages.push(Message::Assistant {
        phase: None,
        text: None,
        tool_calls: tool_calls.collect(),
        opaque: vec![],
    });
    request
        .messages
        .extend(calls.iter().map(|(id, name)| Message::Tool {
            call_id: (*id).into(),
            name: (*name).into(),
            content: format!("{name} done"),
            is_error: false,
            parts: Vec::new(),
        }));
    request.hosted = vec![HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: None,
    }];
    request.tool_choice = Some(ToolChoice::Required);
    request.parallel_tool_calls = Some(false);
    let pairs: Vec<(String, String)> = calls
        .iter()
        .map(|(id, name)| ((*id).into(), (*name).into()))
        .collect();
    assert_eq!(
        RequestView::of(&request),
        RequestView {
            tools: request.tools.clone(),
            choice: Some(ToolChoice::Required),
            parallel: Some(false),
            hosted_search: true,
            calls: pairs.clone(),
            results: pairs,
            result_texts: vec!["get_weather done".into(), "get_time done".into()],
        }
    );
}

#[test]
fn local_refs_are_inlined_and_their_definitions_dropped() {
    let defs = json!({"type": "object", "properties": {"city": {"$ref": "#/$defs/city"}},
        "$defs": {"city": {"type": "string", "minLength": 1}}});
    let inline =
        json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 1}}});
    assert_eq!(by_meaning(defs), inline);
    // The older spelling, and keywords beside the `$ref` kept over the target's.
    let definitions = json!({"type": "object",
        "properties": {"city": {"$ref": "#/definitions/city", "minLength": 1}},
        "definitions": {"city": {"type": "string", "minLength": 5}}});
    assert_eq!(by_meaning(definitions), inline);
}

#[test]
fn spellings_that_change_no_constraint_are_made_one() {
    let spelled = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x",
        "$comment": "c", "type": "object", "properties": {
            "a": {"anyOf": [{"type": "string"}]},
            "b": {"type": ["integer", "null"]},
            "c": {"type": "number", "nullable": true},
            "d": {"type": ["string", "integer"]}}});
    assert_eq!(
        by_meaning(spelled),
        json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "number"},
            "d": {"type": ["string", "integer"]}}})
    );
    // A one-element anyOf whose member is a `$ref` is read by meaning too.
    let wrapped = json!({"anyOf": [{"$ref": "#/$defs/n"}], "$defs": {"n": {"type": "integer"}}});
    assert_eq!(by_meaning(wrapped), json!({"type": "integer"}));
}

#[test]
fn a_self_referencing_ref_stops_at_the_depth_limit() {
    let node = json!({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
        "properties": {"next": {"$ref": "#/$defs/node"}}}}});
    let read = by_meaning(node);
    assert_eq!(read["type"], "object");
    assert!(read.pointer("/properties/next/properties/next").is_some());
}

#[test]
fn a_result_tags_attributes_are_read_in_any_order_and_unescaped() {
    let body = json!({"messages": [
        {"role": "assistant", "content": "<tool_call>{\"name\": \"a&b\"}</tool_call>"},
        {"role": "user", "content":
            "<tool_result call_id=\"c\" name=\"a&amp;b &quot;&lt;x>&quot;\">ok</tool_result>"}]});
    let view = text_protocol_view(&body);
    assert_eq!(view.calls, [(String::new(), "a&b".to_string())]);
    assert_eq!(view.results, [(String::new(), "a&b \"<x>\"".to_string())]);
    assert!(view.tools.is_empty() && view.result_texts.is_empty());
}
