//! Snapshot tests for the injection matrix (snapshots in `src/inject/snapshots/`).

use insta::assert_snapshot;
use serde_json::{Value, json};

use super::{BASE_TEXT, developer_instructions};

fn weather_tools() -> Value {
    json!([
        {"type": "function", "name": "get_weather", "description": "Current weather for a city.",
         "parameters": {"type": "object", "properties": {
             "city": {"type": "string", "description": "City name"},
             "unit": {"type": "string", "enum": ["C", "F"]}},
           "required": ["city"]}},
        {"type": "function", "name": "say_hello"},
        {"type": "web_search"}
    ])
}

fn with_choice(choice: Option<Value>) -> Value {
    let mut req = json!({"model": "m", "tools": weather_tools(), "input": "hi"});
    if let (Some(c), Some(obj)) = (choice, req.as_object_mut()) {
        obj.insert("tool_choice".into(), c);
    }
    req
}

fn instr(req: &Value) -> String {
    developer_instructions(req).unwrap_or_else(|| "<none>".into())
}

#[test]
fn no_tools_injects_nothing() {
    assert_eq!(developer_instructions(&json!({"input": "hi"})), None);
    // Hosted tools alone trigger nothing; the request's own instructions pass through.
    let req = json!({"tools": [{"type": "web_search"}], "instructions": "Be brief.",
                     "tool_choice": "required", "input": [{"role": "system", "content": "S"}]});
    assert_snapshot!("no_tools", instr(&req));
}

#[test]
fn choice_omitted() {
    let out = instr(&with_choice(None));
    assert!(out.starts_with(BASE_TEXT));
    assert_eq!(
        out,
        instr(&with_choice(Some(json!("auto")))),
        "omitted means auto"
    );
    assert_snapshot!("choice_omitted", out);
}

#[test]
fn choice_auto_adds_no_line() {
    assert!(!instr(&with_choice(Some(json!("auto")))).contains("Tool choice"));
    assert_snapshot!("choice_auto", instr(&with_choice(Some(json!("auto")))));
}

#[test]
fn choice_none() {
    assert_snapshot!("choice_none", instr(&with_choice(Some(json!("none")))));
}

#[test]
fn choice_required() {
    assert_snapshot!(
        "choice_required",
        instr(&with_choice(Some(json!("required"))))
    );
}

#[test]
fn choice_forced_both_shapes() {
    let responses = instr(&with_choice(Some(
        json!({"type": "function", "name": "get_weather"}),
    )));
    let chat = instr(&with_choice(Some(
        json!({"type": "function", "function": {"name": "get_weather"}}),
    )));
    assert_eq!(responses, chat);
    assert!(responses.contains(
        "If no tool is needed, respond with plain text.\nTool choice is forced: you MUST call \"get_weather\".\nAvailable tools (schema):"
    ));
    assert_snapshot!("choice_forced", responses);
}

#[test]
fn choice_allowed_tools_both_shapes() {
    let auto = instr(&with_choice(Some(
        json!({"type": "allowed_tools", "mode": "auto",
        "tools": [{"type": "function", "name": "say_hello"}, {"type": "web_search"}]}),
    )));
    let chat = instr(&with_choice(Some(
        json!({"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "say_hello"}}]}}),
    )));
    assert_eq!(auto, chat);
    let required = instr(&with_choice(Some(
        json!({"type": "allowed_tools", "mode": "required",
        "tools": [{"type": "function", "name": "say_hello"}, {"type": "function", "name": "get_weather"}]}),
    )));
    let line = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("Tool choice"))
            .map(str::to_string)
    };
    assert_snapshot!(
        "choice_allowed",
        format!("{:?}\n{:?}", line(&auto), line(&required))
    );
}

#[test]
fn strict_tools_line_before_manifest() {
    let req = json!({"tool_choice": "required", "tools": [
        {"type": "function", "name": "a", "strict": true,
         "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": false}},
        {"type": "function", "function": {"name": "b", "strict": true, "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "name": "c", "strict": false}
    ]});
    let out = instr(&req);
    assert!(out.contains(
        "Tool choice is required: you MUST emit at least one <tool_call>.\nStrict tools: a, b. Arguments MUST conform exactly to schema.\nAvailable tools (schema):"
    ));
    assert_snapshot!("strict_tools", out);
}

#[test]
fn no_parameter_tools() {
    let req = json!({"tools": [
        {"type": "function", "name": "absent"},
        {"type": "function", "name": "empty", "description": "",
         "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "no_props", "parameters": {"type": "object"}}
    ]});
    assert_snapshot!("no_parameter_tools", instr(&req));
}

#[test]
fn ordering_with_instructions_and_system_inputs() {
    let req = json!({
        "instructions": "Top-level instructions.",
        "tools": [{"type": "function", "name": "say_hello"}],
        "input": [
            {"role": "user", "content": "not included"},
            {"role": "system", "content": "System one."},
            {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": "Developer part 1."},
                {"type": "input_text", "text": "Developer part 2."}]},
            {"role": "assistant", "content": "not included either"},
            {"role": "system", "content": "   "}
        ]
    });
    let out = instr(&req);
    let tail = out
        .rsplit_once("</tool_call>")
        .map(|(_, t)| t)
        .unwrap_or_default();
    assert_eq!(
        tail,
        "\n\nTop-level instructions.\n\nSystem one.\n\nDeveloper part 1.\nDeveloper part 2."
    );
    assert_snapshot!("ordering", out);
}

#[test]
fn file_tools_example_verbatim() {
    let req = json!({"tools": [
        {"type": "function", "name": "getFileTree",
         "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "writeToFile",
         "parameters": {"type": "object", "properties": {
             "path": {"type": "string", "description": "Relative file path"},
             "content": {"type": "string", "description": "Full file content"}},
           "required": ["path", "content"]}}
    ]});
    let out = instr(&req);
    let rest = out.strip_prefix(BASE_TEXT).unwrap_or_default();
    // The specification's example with its elided parts (`...`) filled in.
    let want = r#"
Available tools (schema):
- getFileTree: {"type":"object","properties":{}}
- writeToFile: {"type":"object","properties":{"path":{"type":"string","description":"Relative file path"},"content":{"type":"string","description":"Full file content"}},"required":["path","content"]}
Per-tool guidance and examples (schema-conformant):
Tool: getFileTree
Parameters:
- (no parameters)
Example tool_call:
<tool_call>{"name":"getFileTree","arguments":"{}"}</tool_call>
Tool: writeToFile
Parameters:
- path (required, string): Relative file path
- content (required, string): Full file content
Example tool_call:
<tool_call>{"name":"writeToFile","arguments":"{\"path\":\"example.md\",\"content\":\"example\"}"}</tool_call>"#;
    assert_eq!(rest, want);
    assert_snapshot!("file_tools_example", out);
}

#[test]
fn parameters_without_description_and_example_sources() {
    let req = json!({"tools": [{"type": "function", "name": "t", "description": "Multi\nline",
        "parameters": {"type": "object", "properties": {
            "d": {"type": "integer", "default": 7, "example": 8},
            "e": {"type": "string", "example": "from example"},
            "es": {"type": "string", "examples": ["first", "second"]},
            "en": {"type": "string", "enum": ["x", "y"]},
            "n": {"type": ["number", "null"]},
            "b": {"type": "boolean"},
            "arr": {"type": "array", "items": {"type": "string"}},
            "arr1": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
            "obj": {"type": "object", "properties": {"inner": {"type": "string"}, "opt": {"type": "string"}}, "required": ["inner"]},
            "file_path": {"type": "string"},
            "homepageUrl": {"type": "string"},
            "when": {"type": "string", "format": "date-time"},
            "untyped": {},
            "optional": {"type": "string", "description": "not in the example"}},
          "required": ["d", "e", "es", "en", "n", "b", "arr", "arr1", "obj", "file_path", "homepageUrl", "when", "untyped"]}}]});
    assert_snapshot!("example_sources", instr(&req));
}

#[test]
fn manifest_escaping_matches_json_stringify() {
    let req: Value = serde_json::from_str(
        r#"{"tools":[{"type":"function","name":"t","parameters":{"type":"object","description":"a/b é \u2028 \u0007 \"q\"","properties":{"n":{"type":"number","maximum":1.0,"minimum":1e-7}}}}]}"#,
    )
    .unwrap_or_default();
    let out = instr(&req);
    let line = out
        .lines()
        .find(|l| l.starts_with("- t: "))
        .unwrap_or_default();
    assert_eq!(
        line,
        "- t: {\"type\":\"object\",\"description\":\"a/b é \u{2028} \\u0007 \\\"q\\\"\",\"properties\":{\"n\":{\"type\":\"number\",\"maximum\":1,\"minimum\":1e-7}}}"
    );
}
