//! The tool-set check: the tools sent with a round are the tools in force for it; the text
//! protocol's are read from its injected tool list.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, text_protocol_tools, tool_set};
use crate::model::Severity;

#[test]
fn the_tools_in_force_sent_in_any_order_are_silent() {
    silent(tool_set(1, &["get_time", "lookup"], &["lookup", "get_time"]).as_slice());
    silent(tool_set(1, &[], &[]).as_slice());
}

#[test]
fn a_removed_tool_kept_is_a_finding() {
    let found = tool_set(0, &["get_time"], &["get_weather", "get_time"]);
    one(
        found.as_slice(),
        FindingKind::ToolSet,
        Side::Upstream,
        Severity::Breaking,
        "round 1: the tools sent upstream are not the tools in force (sent but not in force: `get_weather`)",
    );
}

#[test]
fn an_added_tool_dropped_is_a_finding_naming_both_sides() {
    let found = tool_set(2, &["get_time"], &["get_weather"]);
    one(
        found.as_slice(),
        FindingKind::ToolSet,
        Side::Upstream,
        Severity::Breaking,
        "round 3: the tools sent upstream are not the tools in force (in force but not sent: `get_time`; sent but not in force: `get_weather`)",
    );
}

#[test]
fn the_text_protocol_s_last_tool_list_is_read() {
    let old = "Available tools (schema):\n- get_weather: {}\nPer-tool guidance";
    let new = "Rules.\nAvailable tools (schema):\n- get_time: {\"type\":\"object\"}\n- lookup: {}\nPer-tool guidance";
    let body = json!({"messages": [
        {"role": "system", "content": old},
        {"role": "user", "content": "hi"},
        {"role": "system", "content": new}]});
    assert_eq!(text_protocol_tools(&body), ["get_time", "lookup"]);
    assert!(text_protocol_tools(&json!({"messages": []})).is_empty());
}
