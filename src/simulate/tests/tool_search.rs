//! The simulator's tool search: which deferred tools a search loads, and the next round's
//! refusals (a server call handed to the client, a deferred tool no search loaded, a namespaced
//! call without its namespace).

use serde_json::json;

use super::super::decide::{Ask, FnTool, searched};
use super::*;
use crate::scenario::{Scenario, ScenarioCall};

fn tool(name: &str) -> FnTool {
    FnTool {
        name: name.into(),
        schema: json!({"type": "object"}),
        strict: false,
    }
}

fn ask_with_search(search: &str) -> Ask {
    let mut ask = Ask::new("m");
    ask.tool_search = Some(search.into());
    ask.deferred = vec![tool("get_weather")];
    ask.tools = vec![tool("get_time")];
    ask
}

#[test]
fn a_search_loads_the_deferred_tools_the_scenario_calls() {
    let ask = ask_with_search("tool_search_tool_regex_20251119");
    let scenario = Scenario {
        calls: vec![ScenarioCall {
            name: "get_weather".into(),
            arguments: serde_json::Map::new(),
            raw_arguments: None,
            id: None,
        }],
        ..Scenario::default()
    };
    let (loaded, found) = searched(&ask, &scenario).expect("searched");
    assert_eq!(found, vec!["get_weather".to_string()]);
    assert!(loaded.has_tool("get_weather") && loaded.deferred.is_empty());
    let mut none = ask.clone();
    none.tool_search = None;
    assert!(
        searched(&none, &scenario).is_none(),
        "no search tool, no search"
    );
}

#[test]
fn anthropic_refuses_a_server_call_handed_to_the_client_and_an_unloaded_deferred_call() {
    let ask = ask_with_search("tool_search_tool_regex_20251119");
    let handed = [json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {}}]})];
    let err = anthropic_history(&handed, &ask).unwrap_err();
    assert!(err.message.contains("server tool"), "{}", err.message);
    let result = [
        json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "srvtoolu_1", "content": "x"}]}),
    ];
    assert!(anthropic_history(&result, &ask).is_err());
    let unloaded = [json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]})];
    assert!(anthropic_history(&unloaded, &ask).is_err());
    let loaded = [json!({"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex", "input": {}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]})];
    assert_eq!(
        anthropic_history(&loaded, &ask).unwrap(),
        vec!["get_weather"]
    );
}

#[test]
fn responses_refuses_a_call_without_its_namespace_and_a_search_handed_to_the_client() {
    let mut ask = ask_with_search("tool_search");
    ask.namespaces = vec![("lookup".into(), "crm".into())];
    let missing =
        [json!({"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"})];
    let err = responses_history(&missing, &ask).unwrap_err();
    assert_eq!(err.message, "Missing namespace for function_call");
    let kept = [
        json!({"type": "function_call", "call_id": "c1", "name": "lookup",
                       "namespace": "crm", "arguments": "{}"}),
    ];
    assert!(responses_history(&kept, &ask).is_ok());
    let handed = [
        json!({"type": "function_call", "call_id": "c1", "name": "tool_search", "arguments": "{}"}),
    ];
    assert!(responses_history(&handed, &ask).is_err());
    let unloaded = [
        json!({"type": "function_call", "call_id": "c2", "name": "get_weather",
                           "arguments": "{}"}),
    ];
    assert!(responses_history(&unloaded, &ask).is_err());
    let loaded = [
        json!({"type": "tool_search_output", "tools": [{"type": "function", "name": "get_weather"}]}),
        json!({"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{}"}),
    ];
    assert_eq!(
        responses_history(&loaded, &ask).unwrap(),
        vec!["get_weather"]
    );
}
