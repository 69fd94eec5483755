//! The reference's text vectors (schema-and-parsers.md §B.3) that apply to the `<tool_call>`
//! protocol, each fed whole, split in two at every char boundary, and in 1-char chunks.
//! Rows for other formats are kept as "stays text" checks, with why they are out of scope.

use serde_json::{Value, json};

use crate::textcall::{Parsed, Parser, ParserConfig, parse};

/// The reference's tools, all strict (so B51–B53 are checked), plus B64's `final_answer`.
fn config_with(choice: Option<Value>) -> ParserConfig {
    let obj = |props: Value, req: Value| json!({"type": "object", "properties": props, "required": req, "additionalProperties": false});
    let tool = |name: &str, params: Value| json!({"type": "function", "name": name, "strict": true, "parameters": params});
    let mut req = json!({"tools": [
        tool("get_weather", obj(json!({"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}}), json!(["city"]))),
        tool("search", obj(json!({"q": {"type": "string"}}), json!(["q"]))),
        tool("say_hello", obj(json!({}), json!([]))),
        tool("say_hello_world", obj(json!({}), json!([]))),
        tool("add", obj(json!({"a": {"type": "number"}, "b": {"type": "number"}}), json!(["a", "b"]))),
        tool("final_answer", obj(json!({"trigger": {"type": "boolean"}}), json!(["trigger"]))),
    ]});
    if let (Some(c), Some(o)) = (choice, req.as_object_mut()) {
        o.insert("tool_choice".into(), c);
    }
    ParserConfig::from_request(&req)
}

fn feed(config: &ParserConfig, chunks: &[&str]) -> Parsed {
    let mut p = Parser::new(config.clone());
    for c in chunks {
        p.push(c);
    }
    p.finish()
}

/// Whole, every two-chunk split, and 1-char chunks must agree; returns the outcome.
pub(super) fn all_chunkings(config: &ParserConfig, input: &str) -> Parsed {
    let whole = parse(config, input);
    for (i, _) in input.char_indices().skip(1) {
        let (a, b) = input.split_at(i);
        assert_eq!(feed(config, &[a, b]), whole, "split at {i}: {input:?}");
    }
    let chars: Vec<String> = input.chars().map(String::from).collect();
    let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(feed(config, &refs), whole, "1-char chunks: {input:?}");
    whole
}

/// One line per outcome: calls (`id name args`), text, diagnostics (`Kind#index`, `+` recovered).
fn summary(p: &Parsed) -> String {
    let calls: Vec<String> = p
        .tool_calls
        .iter()
        .map(|c| format!("{} {} {}", c.id, c.name, c.arguments))
        .collect();
    let diags: Vec<String> = p
        .diagnostics
        .iter()
        .map(|d| {
            let idx = d.call_index.map(|i| format!("#{i}")).unwrap_or_default();
            format!("{:?}{idx}{}", d.kind, if d.recovered { "+" } else { "" })
        })
        .collect();
    format!(
        "[{}] text={:?} diags=[{}]",
        calls.join("; "),
        p.text,
        diags.join(" ")
    )
}

/// (row, input, expected summary). Comments say where we differ from the reference and why.
const ROWS: &[(&str, &str, &str)] = &[
    (
        "B1",
        "Hello, how can I help you today?",
        r#"[] text=Some("Hello, how can I help you today?") diags=[]"#,
    ),
    (
        "B2",
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}</tool_call>"#,
        r#"[call_0 get_weather {"city":"NYC"}] text=None diags=[ArgumentsAsObject#0+]"#,
    ),
    (
        "B3",
        r#"Let me check. <tool_call>{"name":"get_weather","arguments":{"city":"NYC"}}</tool_call>"#,
        r#"[call_0 get_weather {"city":"NYC"}] text=Some("Let me check. ") diags=[ArgumentsAsObject#0+]"#,
    ),
    (
        "B4",
        "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"NYC\"}}</tool_call>\nDone",
        r#"[call_0 get_weather {"city":"NYC"}] text=Some("\nDone") diags=[ArgumentsAsObject#0+]"#,
    ),
    // The "\n" between the blocks is whitespace only: text None.
    (
        "B5",
        "<tool_call>\n{\"name\":\"search\",\"arguments\":{\"q\":\"cats\"}}\n</tool_call>\n<tool_call>\n{\"name\":\"search\",\"arguments\":{\"q\":\"dogs\"}}\n</tool_call>",
        r#"[call_0 search {"q":"cats"}; call_1 search {"q":"dogs"}] text=None diags=[ArgumentsAsObject#0+ ArgumentsAsObject#1+]"#,
    ),
    (
        "B6",
        r#"<tool_call>{"name":"get_weather","arguments":{"city":"NYC"}}"#,
        r#"[call_0 get_weather {"city":"NYC"}] text=None diags=[MissingCloseTag#0+ ArgumentsAsObject#0+]"#,
    ),
    (
        "B7",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"NYC\"}",
        r#"[] text=Some("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"NYC\"}") diags=[TruncatedCall#0]"#,
    ),
    (
        "B8",
        "<tool_call>\nnot valid json\n</tool_call>\nSome text after.",
        r#"[] text=Some("\nSome text after.") diags=[MalformedJson#0]"#,
    ),
    // The reference flags `StringifiedArgs`; here a JSON string is the protocol's own format: no note.
    (
        "B9",
        r#"<tool_call>{"name":"get_weather","arguments":"{\"city\": \"NYC\"}"}</tool_call>"#,
        r#"[call_0 get_weather {"city":"NYC"}] text=None diags=[]"#,
    ),
    (
        "B10",
        r#"<tool_call>{"name":"get_weather","arguments":"hello"}</tool_call>"#,
        "[] text=None diags=[ArgumentsNotObject#0]",
    ),
    (
        "B11",
        r#"<tool_call>{"name":"get_weather","arguments":"{hello world}"}</tool_call>"#,
        "[] text=None diags=[ArgumentsNotObject#0]",
    ),
    // B12–B14: llama3_json (bare JSON, `parameters`) is another format: the text stays text.
    (
        "B12",
        r#"{"name": "search", "parameters": {"q": "test"}}"#,
        r#"[] text=Some("{\"name\": \"search\", \"parameters\": {\"q\": \"test\"}}") diags=[]"#,
    ),
    (
        "B13",
        r#"{"name":"search","parameters":{"q":"t1"}}; {"name":"say_hello","parameters":{}}"#,
        r#"[] text=Some("{\"name\":\"search\",\"parameters\":{\"q\":\"t1\"}}; {\"name\":\"say_hello\",\"parameters\":{}}") diags=[]"#,
    ),
    (
        "B14",
        r#"{"name":"search","parameters":{"q":"test"}} I used {searchTool} for this."#,
        r#"[] text=Some("{\"name\":\"search\",\"parameters\":{\"q\":\"test\"}} I used {searchTool} for this.") diags=[]"#,
    ),
    // B15 as a tagged call: no `arguments` means `{}`; the strict schema then decides.
    (
        "B15",
        r#"<tool_call>{"name": "say_hello"}</tool_call><tool_call>{"name": "search"}</tool_call>"#,
        r#"[call_0 say_hello {}] text=None diags=[MissingArguments#0+ MissingArguments#1 SchemaViolation#1]"#,
    ),
    (
        "B16",
        r#"<tool_call>{"arguments": {"a": 5, "b": 10}, "name": "add"}</tool_call>"#,
        r#"[call_0 add {"a":5,"b":10}] text=None diags=[ArgumentsAsObject#0+]"#,
    ),
    (
        "B17",
        r#"<tool_call>[{"name":"say_hello","arguments":{}},{"name":"search","arguments":{"q":"x"}}]</tool_call>"#,
        r#"[call_0 say_hello {}; call_1 search {"q":"x"}] text=None diags=[ArrayWrapped#0+ ArgumentsAsObject#0+ ArgumentsAsObject#1+]"#,
    ),
    // B18–B22: Mistral `[TOOL_CALLS]` is another format: text.
    (
        "B18",
        r#"[TOOL_CALLS][{"name": "add", "arguments":{"a": 3.5, "b": 4}}]"#,
        r#"[] text=Some("[TOOL_CALLS][{\"name\": \"add\", \"arguments\":{\"a\": 3.5, \"b\": 4}}]") diags=[]"#,
    ),
    (
        "B22",
        "[TOOL_CALLS] not json at all",
        r#"[] text=Some("[TOOL_CALLS] not json at all") diags=[]"#,
    ),
    (
        "B23",
        "<tool_call>\n```json\n{\"name\":\"search\",\"arguments\":{\"q\":\"x\"}}\n```\n</tool_call>",
        r#"[call_0 search {"q":"x"}] text=None diags=[CodeFence#0+ ArgumentsAsObject#0+]"#,
    ),
    // B24–B31: bare or fenced JSON without <tool_call>, and other tags (<response>, <function_call>,
    // <tools>, <function=…>): other formats. Bare JSON is never a call here (the zeroclaw policy:
    // text the model quotes must not run a tool), so no `AmbiguousBareJson` either.
    (
        "B24",
        "```json\n  {\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n```",
        r#"[] text=Some("```json\n  {\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n```") diags=[]"#,
    ),
    (
        "B27",
        "<tools>\n  {\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tools>",
        r#"[] text=Some("<tools>\n  {\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tools>") diags=[]"#,
    ),
    (
        "B29",
        r#"<function=add>{"a": 1, "b": 2}</function>"#,
        r#"[] text=Some("<function=add>{\"a\": 1, \"b\": 2}</function>") diags=[]"#,
    ),
    (
        "B31",
        "This is not a tool call:\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}",
        r#"[] text=Some("This is not a tool call:\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}") diags=[]"#,
    ),
    (
        "B32",
        r#"<tool_call>{"name":"web_search","arguments":{"q":"x"}}</tool_call>"#,
        "[] text=None diags=[ArgumentsAsObject#0 UnknownTool#0]",
    ),
    (
        "B33",
        r#"<tool_call>{"name": "say_hello_world","arguments": {}}</tool_call>"#,
        "[call_0 say_hello_world {}] text=None diags=[ArgumentsAsObject#0+]",
    ),
    (
        "B34",
        r#"<tool_call>{"name": "say_hello"#,
        r#"[] text=Some("<tool_call>{\"name\": \"say_hello") diags=[TruncatedCall#0]"#,
    ),
    (
        "B35",
        r#"<tool_call>{"name":"search","arguments":{"q":"use </tool_call> literally"}}</tool_call>"#,
        r#"[call_0 search {"q":"use </tool_call> literally"}] text=None diags=[ArgumentsAsObject#0+]"#,
    ),
    (
        "B36",
        r#"<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>>"#,
        r#"[call_0 search {"q":"x"}] text=None diags=[ArgumentsAsObject#0+ TrailingGarbage#0+]"#,
    ),
    (
        "B37",
        r#"<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call></tool_call>"#,
        r#"[call_0 search {"q":"x"}] text=None diags=[ArgumentsAsObject#0+ ExtraCloseTag#0+]"#,
    ),
    (
        "B38",
        r#"<tool_call>{"name":"search","arguments":{"q":"x"}}}</tool_call>"#,
        r#"[call_0 search {"q":"x"}] text=None diags=[TrailingGarbage#0+ ArgumentsAsObject#0+]"#,
    ),
    // The reference says MalformedJson unless in repair mode; our specification repairs when the
    // completed call validates: MissingBraces.
    (
        "B39",
        r#"<tool_call>{"name":"search","arguments":{"q":"x"}</tool_call>"#,
        r#"[call_0 search {"q":"x"}] text=None diags=[MissingBraces#0+ ArgumentsAsObject#0+]"#,
    ),
    (
        "B40",
        r#"<tool_call><tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call></tool_call>"#,
        r#"[call_0 search {"q":"x"}] text=None diags=[ExtraOpenTag#0+ ArgumentsAsObject#0+ ExtraCloseTag#0+]"#,
    ),
    // B41: `<toolcall>` is another tag: text (its `</tool_call>` is a stray close tag, kept).
    (
        "B41",
        "<toolcall>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>",
        r#"[] text=Some("<toolcall>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>") diags=[]"#,
    ),
    // B42: no `CrossAliasClose` here: the block is unclosed, the call complete, the wrong close tag text.
    (
        "B42",
        "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</arg_value>",
        r#"[call_0 search {"q":"x"}] text=Some("\n</arg_value>") diags=[MissingCloseTag#0+ ArgumentsAsObject#0+]"#,
    ),
    (
        "B43",
        "<tool_call>{}</tool_call>",
        "[] text=None diags=[MissingName#0]",
    ),
    (
        "B44",
        "Some text </tool_call> more text",
        r#"[] text=Some("Some text </tool_call> more text") diags=[]"#,
    ),
    // B45/B46: reasoning extraction belongs to the backend's template, not this protocol: `<think>` stays text.
    (
        "B45",
        r#"<think>Need weather</think><tool_call>{"name":"get_weather","arguments":{"city":"Oslo"}}</tool_call>"#,
        r#"[call_0 get_weather {"city":"Oslo"}] text=Some("<think>Need weather</think>") diags=[ArgumentsAsObject#0+]"#,
    ),
    // B46: a template that pre-opens <think>: the reasoning is text here, the call is found.
    (
        "B46",
        "I'm\nthinking</think>\n<tool_call>{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}</tool_call>",
        r#"[call_0 search {"q":"x"}] text=Some("I'm\nthinking</think>\n") diags=[ArgumentsAsObject#0+]"#,
    ),
    // B47–B49: bare JSON envelopes: text.
    (
        "B49",
        r#"{"tool_calls":[{"id":"call_42","type":"function","function":{"name":"search","arguments":"{\"q\":\"pwd\"}"}}]}"#,
        r#"[] text=Some("{\"tool_calls\":[{\"id\":\"call_42\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\\\"pwd\\\"}\"}}]}") diags=[]"#,
    ),
    (
        "B50",
        r#"<tool_call>{"name":"get_weather","arguments":["NYC"]}</tool_call>"#,
        "[] text=None diags=[ArgumentsNotObject#0]",
    ),
    (
        "B51",
        r#"<tool_call>{"name":"add","arguments":{"a":"one","b":2}}</tool_call>"#,
        "[] text=None diags=[ArgumentsAsObject#0 SchemaViolation#0]",
    ),
    (
        "B52",
        r#"<tool_call>{"name":"get_weather","arguments":{"city":"NYC","unit":"K"}}</tool_call>"#,
        "[] text=None diags=[ArgumentsAsObject#0 SchemaViolation#0]",
    ),
    (
        "B53",
        r#"<tool_call>{"name":"get_weather","arguments":{"city":"NYC","extra":1}}</tool_call>"#,
        "[] text=None diags=[ArgumentsAsObject#0 SchemaViolation#0]",
    ),
    // B54: the reference suggests `MalformedJson`; we keep the call with the last value (what
    // `JSON.parse` and serde_json give the client) and report the repeat with its pointer.
    (
        "B54",
        r#"<tool_call>{"name":"get_weather","arguments":{"city":"NYC","city":"Oslo"}}</tool_call>"#,
        r#"[call_0 get_weather {"city":"Oslo"}] text=None diags=[ArgumentsAsObject#0+ DuplicateKey#0+]"#,
    ),
    (
        "B54s",
        r#"<tool_call>{"name":"get_weather","arguments":"{\"city\":\"NYC\",\"city\":\"Oslo\"}"}</tool_call>"#,
        r#"[call_0 get_weather {"city":"Oslo"}] text=None diags=[DuplicateKey#0+]"#,
    ),
    // B55–B60: pythonic calls are another format: text.
    (
        "B55",
        "[get_weather(city='San Francisco', unit='C')]",
        r#"[] text=Some("[get_weather(city='San Francisco', unit='C')]") diags=[]"#,
    ),
    (
        "B61",
        r#"Hi <tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>"#,
        r#"[call_0 search {"q":"x"}] text=Some("Hi ") diags=[ArgumentsAsObject#0+]"#,
    ),
    ("B62", "a < b", r#"[] text=Some("a < b") diags=[]"#),
    (
        "B63",
        r#"Hi!<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>"#,
        r#"[call_0 add {"a":1,"b":2}] text=Some("Hi!") diags=[ArgumentsAsObject#0+]"#,
    ),
    (
        "B64",
        "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}}\n</tool_call>",
        r#"[call_0 final_answer {"trigger":true}] text=None diags=[ArgumentsAsObject#0+]"#,
    ),
    // B65–B68: `{`/`[` as the tool tag (Ollama) is another format: text.
    (
        "B67",
        "[{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Tokyo\"}}]]",
        r#"[] text=Some("[{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Tokyo\"}}]]") diags=[]"#,
    ),
    // B69: arguments are never streamed as fragments here, so nothing needs closing: TruncatedCall, raw text kept.
    (
        "B69",
        r#"<tool_call>{"name":"search","arguments":{"q":"ab"#,
        r#"[] text=Some("<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":\"ab") diags=[TruncatedCall#0]"#,
    ),
    (
        "B70",
        r#"<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call><tool_call>{bad}</tool_call><tool_call>{"name":"say_hello","arguments":{}}</tool_call>"#,
        r#"[call_0 search {"q":"x"}; call_2 say_hello {}] text=None diags=[ArgumentsAsObject#0+ MalformedJson#1 ArgumentsAsObject#2+]"#,
    ),
    // Own rows: the protocol's own string arguments, and recoveries the reference has no row for.
    (
        "X1",
        "Sure.\n<tool_call>{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\\\"é 日本\\\"}\"}</tool_call>\nDone.",
        r#"[call_0 search {"q":"é 日本"}] text=Some("Sure.\n\nDone.") diags=[]"#,
    ),
    (
        "X2",
        r#"<tool_call>{"name":"search","arguments":"{\"q\":\"x\"}"}></tool_call>"#,
        r#"[call_0 search {"q":"x"}] text=None diags=[TrailingGarbage#0+]"#,
    ),
    (
        "X3",
        r#"<tool_call>call: {"name":"say_hello","arguments":"{}"}</tool_call>"#,
        "[call_0 say_hello {}] text=None diags=[LeadingGarbage#0+]",
    ),
    (
        "X4",
        r#"<tool_call>{"name":"say_hello","arguments":"{}"}<tool_call>{"name":"search","arguments":"{\"q\":\"y\"}"}</tool_call>"#,
        r#"[call_0 say_hello {}; call_1 search {"q":"y"}] text=None diags=[MissingCloseTag#0+]"#,
    ),
    // An unbalanced quote swallows the close tag; at the end the first literal close tag ends the block.
    (
        "X5",
        "<tool_call>{\"name\":\"search</tool_call> after <tool_call>{\"name\":\"say_hello\",\"arguments\":\"{}\"}</tool_call>",
        r#"[call_1 say_hello {}] text=Some(" after ") diags=[MalformedJson#0]"#,
    ),
    (
        "X6",
        r#"<tool_call>{"name":"Say-Hello","arguments":"{}"}</tool_call>"#,
        "[] text=None diags=[UnknownTool#0]",
    ),
    (
        "X7",
        r#"<tool_call>{"name":"search","parameters":{"q":"z"}}</tool_call>"#,
        r#"[call_0 search {"q":"z"}] text=None diags=[ParametersAlias#0+ ArgumentsAsObject#0+]"#,
    ),
    (
        "X8",
        "<tool_call>",
        r#"[] text=Some("<tool_call>") diags=[TruncatedCall#0]"#,
    ),
    (
        "X9",
        "<tool_call></tool_call> x <tool_",
        r#"[] text=Some(" x <tool_") diags=[MalformedJson#0]"#,
    ),
    (
        "X10",
        "<<tool_call>{\"name\":\"say_hello\"}</tool_call></tool_call>>>",
        "[call_0 say_hello {}] text=Some(\"<\") diags=[MissingArguments#0+ ExtraCloseTag#0+ TrailingGarbage#0+]",
    ),
];

/// Rows in other formats: each must stay text, unchanged, with no call and no diagnostic.
const OTHER_FORMATS: &[(&str, &str, &str)] = &[
    (
        "B19",
        "[TOOL_CALLS]add{\"a\": 3.5, \"b\": 4}[TOOL_CALLS]add{\"a\": 3, \"b\": 6}",
        "Mistral v11 [TOOL_CALLS]name{json}",
    ),
    (
        "B20",
        "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\":{\"city\": \"Dallas\"}}]\nextra trailing data",
        "Mistral [TOOL_CALLS] array",
    ),
    (
        "B21",
        "[TOOL_CALLS]  junk [{\"name\": \"add\", \"arguments\":{\"a\": 1, \"b\": 2}}] trail",
        "Mistral [TOOL_CALLS] with junk",
    ),
    (
        "B25",
        "```xml\n<response>\n    {\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</response>\n```",
        "llama.cpp <response> alias",
    ),
    (
        "B26",
        "```json\n\n   <function_call> {\"name\": \"search\", \"arguments\": {\"q\": \"x\"}} \n   </function_call> \n```",
        "llama.cpp <function_call> alias",
    ),
    (
        "B28",
        "<tools>[{\"type\":\"function\",\"function\":{\"name\":\"search\",\"parameters\":{}}}]</tools>",
        "Hermes tool declaration echo",
    ),
    (
        "B30",
        "<function name=\"add\">\n{\"a\": 1, \"b\": 2}\n</function>",
        "<function name=…> format",
    ),
    (
        "B47",
        "{\"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"SF\"}}}",
        "bare nested envelope",
    ),
    (
        "B48",
        "{\"get_weather\": {\"city\": \"SF\"}}",
        "bare name-keyed object",
    ),
    (
        "B56",
        "[register_user(name='John Doe', age=37, role=None, passed_test=True)]",
        "pythonic",
    ),
    ("B57", "[bad(x=b'z'), get_weather(city='SF')]", "pythonic"),
    ("B58", "[calc(x=1e999), get_weather(city='SF')]", "pythonic"),
    ("B59", "[f(a='x 'y' 'z), g(b='p 'q' 'r)]", "pythonic"),
    ("B60", "[foo(x=1])]", "pythonic"),
    (
        "B65",
        "{\"name\": \"get_weather\",\"arguments\": {",
        "Ollama `{` tag",
    ),
    (
        "B66",
        "{\"name\": \"jeff\"}{\"name\": \"get_weather\", \"arguments\": {\"city\": \"SF\"}}",
        "Ollama `{` tag",
    ),
    ("B68", "[special delivery]", "Ollama `[` tag"),
];

#[test]
fn other_formats_stay_text() {
    let config = config_with(None);
    for (row, input, format) in OTHER_FORMATS {
        let got = all_chunkings(&config, input);
        let want = format!("[] text={:?} diags=[]", Some(*input));
        assert_eq!(summary(&got), want, "{row} ({format})");
    }
}

#[test]
fn reference_vectors_whole_and_chunked() {
    let config = config_with(None);
    let mut detail = String::new();
    let mut failures = Vec::new();
    for (row, input, want) in ROWS {
        let got = all_chunkings(&config, input);
        let s = summary(&got);
        if s != *want {
            failures.push(format!("{row}:\n  want {want}\n  got  {s}"));
        }
        detail.push_str(&format!(
            "## {row}\n{}\n",
            serde_json::to_string_pretty(&got).unwrap_or_default()
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Messages and offsets, for review. The snapshot keeps the name and folder it had when
    // these tests were the module `textcall::tests_vectors`.
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!("tooltape__textcall__tests_vectors__reference_vectors", detail);
    });
}

#[test]
fn listed_chunkings_and_hold_back() {
    let config = config_with(None);
    // B33: the name split across chunks is never emitted early.
    let b33 = [
        "<tool_call>",
        "{",
        "\"name\": \"say_hello",
        "_world\",",
        "\"arguments\": {}}",
        "</tool_call>",
    ];
    assert_eq!(
        feed(&config, &b33)
            .tool_calls
            .first()
            .map(|c| c.name.as_str()),
        Some("say_hello_world")
    );
    // B61: `<tool_` is held back, `Hi ` released at once.
    let mut p = Parser::new(config.clone());
    p.push("Hi <tool_");
    assert_eq!(p.text_so_far(), "Hi ");
    p.push("call>{\"name\":\"search\",\"arguments\":{\"q\":\"x\"}}</tool_call>");
    assert_eq!(p.calls_so_far().len(), 1);
    // B62: the held `<` is released once disproved.
    let mut p = Parser::new(config.clone());
    p.push("a <");
    assert_eq!(p.text_so_far(), "a ");
    p.push(" b");
    assert_eq!(p.text_so_far(), "a < b");
    // B64: intervals 2, 3, 5, 8.
    let b64 = "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}}\n</tool_call>";
    let whole = parse(&config, b64);
    for n in [2, 3, 5, 8] {
        let chunks: Vec<&str> = b64
            .as_bytes()
            .chunks(n)
            .filter_map(|c| std::str::from_utf8(c).ok())
            .collect();
        assert_eq!(feed(&config, &chunks), whole, "interval {n}");
    }
}

#[test]
fn tool_choice_none_and_restrictions() {
    let none = config_with(Some(json!("none")));
    let input = "x <tool_call>{\"name\":\"search\",\"arguments\":\"{}\"}</tool_call>";
    let got = all_chunkings(&none, input);
    assert_eq!(
        summary(&got),
        format!("[] text={:?} diags=[ParsingDisabled]", Some(input))
    );
    assert_eq!(got.diagnostics.first().and_then(|d| d.offset), Some(2));
    assert_eq!(
        summary(&all_chunkings(&none, "plain")),
        "[] text=Some(\"plain\") diags=[]"
    );

    let forced = config_with(Some(
        json!({"type": "function", "function": {"name": "add"}}),
    ));
    let got = all_chunkings(
        &forced,
        "<tool_call>{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\\\"x\\\"}\"}</tool_call>",
    );
    let msg = got
        .diagnostics
        .first()
        .map(|d| d.message.clone())
        .unwrap_or_default();
    assert_eq!(msg, "tool \"search\" is not allowed by tool_choice");
}

#[test]
fn diagnostics_carry_pointer_and_suggestion() {
    let config = config_with(None);
    let messages = |input: &str| -> Vec<String> {
        parse(&config, input)
            .diagnostics
            .into_iter()
            .map(|d| d.message.into_owned())
            .collect()
    };
    let b51 =
        messages(r#"<tool_call>{"name":"add","arguments":"{\"a\":\"one\",\"b\":2}"}</tool_call>"#);
    assert!(b51.iter().any(|m| m.starts_with("/a: ")), "{b51:?}");
    let b53 = messages(
        r#"<tool_call>{"name":"get_weather","arguments":"{\"city\":\"NYC\",\"extra\":1}"}</tool_call>"#,
    );
    assert!(b53.iter().any(|m| m.starts_with("/extra: ")), "{b53:?}");
    let b32 = messages(r#"<tool_call>{"name":"web_search","arguments":"{}"}</tool_call>"#);
    assert_eq!(
        b32,
        ["unknown tool \"web_search\"; did you mean \"search\"?"]
    );
    let b54 = messages(
        r#"<tool_call>{"name":"get_weather","arguments":"{\"city\":\"NYC\",\"city\":\"Oslo\"}"}</tool_call>"#,
    );
    assert_eq!(
        b54,
        ["/city: duplicate key \"city\", the last value is kept"]
    );
    let x6 = messages(r#"<tool_call>{"name":"Say-Hello","arguments":"{}"}</tool_call>"#);
    assert_eq!(
        x6,
        ["unknown tool \"Say-Hello\"; did you mean \"say_hello\"?"]
    );
}
