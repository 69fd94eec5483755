//! Anthropic encoder and decoder tests: tool_choice forms, fail-closed cases, message grouping,
//! buffered/streamed decoding, errors, truncation and chunking invariance.

use serde_json::{Value, json};

use super::*;
use crate::model::{DiagnosticKind, Finish, Grounding, Outcome, ToolCall};
use crate::providers::testkit::{
    assert_finish_reasons, assert_noted, q_request, request_error, response as resp,
    stream_every_chunking, stream_in_chunks, with_instructions,
};

fn req(choice: Option<ToolChoice>) -> ChatRequest {
    q_request("claude-sonnet-4-5", &["a", "b", "c"], choice)
}

fn body(r: &ChatRequest) -> Value {
    encode(r).unwrap().request.body
}

fn tool_names(b: &Value) -> Vec<&str> {
    b["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
fn request_shape_key_order_and_headers() {
    let mut r = with_instructions(req(Some(ToolChoice::Auto)));
    let enc = encode(&r).unwrap();
    assert_eq!(enc.request.path, "/v1/messages");
    assert_eq!(enc.request.headers["anthropic-version"], "2023-06-01");
    assert!(
        !enc.request
            .headers
            .keys()
            .any(|k| k.contains("key") || k == "authorization")
    );
    let keys: Vec<&str> = enc
        .request
        .body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "max_tokens",
            "system",
            "messages",
            "tools",
            "tool_choice"
        ]
    );
    let b = &enc.request.body;
    assert_eq!(b["max_tokens"], 1024);
    assert_eq!(b["system"], "sys\n\ndev");
    assert_eq!(b["messages"], json!([{"role": "user", "content": "hi"}]));
    assert_eq!(
        b["tools"][0],
        json!({"name": "a", "description": "a tool", "input_schema": r.tools[0].parameters})
    );
    assert_eq!(b.get("stream"), None);
    r.stream = true;
    r.max_tokens = Some(77);
    let b = body(&r);
    assert_eq!(
        (b["stream"].clone(), b["max_tokens"].clone()),
        (json!(true), json!(77))
    );
}

#[test]
fn every_tool_choice_form() {
    let cases = [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::Required, json!({"type": "any"})),
        (
            ToolChoice::Forced("b".into()),
            json!({"type": "tool", "name": "b"}),
        ),
        (ToolChoice::None, json!({"type": "none"})),
    ];
    for (choice, want) in cases {
        let b = body(&req(Some(choice.clone())));
        assert_eq!(b["tool_choice"], want, "{}", choice.slug());
        assert_eq!(tool_names(&b), ["a", "b", "c"], "{}", choice.slug());
    }
    assert_eq!(body(&req(None)).get("tool_choice"), None);
}

#[test]
fn none_keeps_the_tools() {
    // A peer library encoded `none` by dropping `tools`: that breaks histories holding tool_use.
    let b = body(&req(Some(ToolChoice::None)));
    assert_eq!(b["tool_choice"], json!({"type": "none"}));
    assert_eq!(b["tools"].as_array().map(Vec::len), Some(3));
}

#[test]
fn allowed_subsets_send_only_the_allowed_tools() {
    for (mode, ty) in [(AllowedMode::Auto, "auto"), (AllowedMode::Required, "any")] {
        let tools = vec!["c".to_string(), "a".to_string()];
        let enc = encode(&req(Some(ToolChoice::Allowed { mode, tools }))).unwrap();
        assert_eq!(tool_names(&enc.request.body), ["a", "c"]);
        assert_eq!(enc.request.body["tool_choice"], json!({"type": ty}));
        assert_noted(&enc.notes, "allowed");
    }
    let err = encode(&req(Some(ToolChoice::Allowed {
        mode: AllowedMode::Auto,
        tools: vec!["zzz".into()],
    })))
    .unwrap_err();
    assert_eq!(err.code, "ALLOWED_UNKNOWN_TOOL");
}

#[test]
fn parallel_off() {
    let mut r = req(Some(ToolChoice::Forced("a".into())));
    r.parallel_tool_calls = Some(false);
    assert_eq!(
        body(&r)["tool_choice"],
        json!({"type": "tool", "name": "a", "disable_parallel_tool_use": true})
    );
    r.tool_choice = None;
    assert_eq!(
        body(&r)["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    r.parallel_tool_calls = Some(true);
    assert_eq!(body(&r).get("tool_choice"), None);
}

#[test]
fn thinking_with_forced_choice_fails_closed() {
    let forced = [
        ToolChoice::Required,
        ToolChoice::Forced("a".into()),
        ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools: vec!["a".into()],
        },
    ];
    for choice in forced {
        let mut r = req(Some(choice));
        r.thinking = Some(2048);
        let err = encode(&r).unwrap_err();
        assert_eq!(err.code, "FORCED_WITH_THINKING");
        assert!(err.message.contains("thinking"));
    }
    let mut r = req(Some(ToolChoice::Auto));
    r.thinking = Some(2048);
    let b = body(&r);
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert!(b["max_tokens"].as_u64().unwrap() > 2048);
}

#[test]
fn hosted_web_search_is_a_server_tool() {
    let mut r = req(None);
    r.tools.clear();
    r.hosted.push(HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: None,
    });
    assert_eq!(
        body(&r)["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search"}])
    );
}

#[test]
fn multi_turn_groups_results_in_call_order() {
    let call = |id: &str, name: &str| ToolCall::unsigned(id, name, json!({"q": id}));
    let thinking = json!({"type": "thinking", "thinking": "hmm", "signature": "sig"});
    let mut r = req(Some(ToolChoice::Auto));
    r.messages.extend([
        Message::Assistant {
            phase: None,
            text: Some("Let me look.".into()),
            tool_calls: vec![call("t1", "a"), call("t2", "b")],
            opaque: vec![thinking.clone()],
        },
        // Results arrive out of order: they are sent in call order.
        Message::Tool {
            call_id: "t2".into(),
            name: "b".into(),
            content: "boom".into(),
            is_error: true,
            parts: Vec::new(),
        },
        Message::Tool {
            call_id: "t1".into(),
            name: "a".into(),
            content: "ok".into(),
            is_error: false,
            parts: Vec::new(),
        },
        Message::User {
            content: "and now?".into(),
        },
    ]);
    let b = body(&r);
    let msgs = b["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        msgs[1],
        json!({"role": "assistant", "content": [
            thinking,
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "t1", "name": "a", "input": {"q": "t1"}},
            {"type": "tool_use", "id": "t2", "name": "b", "input": {"q": "t2"}}]})
    );
    assert_eq!(
        msgs[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": true},
            {"type": "text", "text": "and now?"}]})
    );
}

// ---- decoding ----

fn stream_req() -> ChatRequest {
    req(None).with_stream(true)
}

fn decode_stream(body: &[u8], chunks: &[usize]) -> Outcome {
    stream_in_chunks(Stream::new(&stream_req()), body, chunks)
}

#[test]
fn buffered_body_with_thinking_server_tools_and_citations() {
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[
      {"type":"thinking","thinking":"secret plan","signature":"sig=="},
      {"type":"redacted_thinking","data":"xyz"},
      {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},
      {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a.example","title":"A"}]},
      {"type":"server_tool_use","id":"srvtoolu_2","name":"web_search","input":{"query":"nothing"}},
      {"type":"web_search_tool_result","tool_use_id":"srvtoolu_2","content":[]},
      {"type":"text","text":"Paris is ","citations":[{"type":"web_search_result_location","url":"https://a.example","title":"A","cited_text":"x"}]},
      {"type":"text","text":"sunny."},
      {"type":"tool_use","id":"toolu_1","name":"a","input":{"q":"x"}}],
      "stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":7}}"#;
    let o = decode(&req(None), &resp(200, body)).unwrap();
    assert_eq!(o.text.as_deref(), Some("Paris is sunny."));
    assert_eq!(o.tool_calls.len(), 1);
    assert_eq!(
        (
            o.tool_calls[0].id.as_str(),
            o.tool_calls[0].arguments.clone()
        ),
        ("toolu_1", json!({"q": "x"}))
    );
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("tool_use"))
    );
    assert_eq!(o.opaque.len(), 2);
    assert_eq!(o.opaque[0]["signature"], "sig==");
    let h = o.hosted.unwrap();
    assert_eq!(
        (h.search_calls, h.search_results),
        (2, 1),
        "an empty result list counts no result"
    );
    assert_eq!(h.citations, ["https://a.example"]);
    assert_eq!(o.model.as_deref(), Some("claude-x"));
    assert_eq!(o.usage.unwrap().output_tokens, Some(7));
}

#[test]
fn stop_reasons_normalize() {
    let stop_reasons = [
        ("end_turn", Finish::Stop),
        ("stop_sequence", Finish::Stop),
        ("max_tokens", Finish::Length),
        ("refusal", Finish::ContentFilter),
        ("pause_turn", Finish::Other),
    ];
    assert_finish_reasons(
        &stop_reasons,
        |raw| {
            format!(
                r#"{{"type":"message","content":[{{"type":"text","text":"x"}}],"stop_reason":"{raw}"}}"#
            )
        },
        |r| decode(&req(None), r),
    );
}

#[test]
fn error_envelope_and_retry_after() {
    let mut r = resp(
        429,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}"#,
    );
    r.headers.insert("retry-after".into(), "12".into());
    let e = decode(&req(None), &r).unwrap().error.unwrap();
    assert_eq!(
        (
            e.status,
            e.kind.as_deref(),
            e.code,
            e.message.as_str(),
            e.retry_after_ms
        ),
        (
            429,
            Some("rate_limit_error"),
            None,
            "slow down",
            Some(12_000)
        )
    );
    let e = decode(&req(None), &resp(413, "<html>too large</html>"))
        .unwrap()
        .error
        .unwrap();
    assert_eq!((e.status, e.kind), (413, None));
    let err = decode(&req(None), &resp(200, "{\n  \"content\": [,]}")).unwrap_err();
    assert_eq!(err.line, Some(2));
}

const STREAM: &str = "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"pondér\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"SIG\"}}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n\
event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Héllo 🌍 \"}}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"a\",\"input\":{}}}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_b\",\"name\":\"b\",\"input\":{}}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\": \\\"ü\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x\\\"}\"}}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":2}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":3}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":4,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_c\",\"name\":\"c\",\"input\":{\"q\":\"given\"}}}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":4}\r\n\r\n\
event: some_future_event\r\ndata: {\"type\":\"some_future_event\"}\r\n\r\n\
event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":58}}\r\n\r\n\
event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";

#[test]
fn stream_parallel_calls_no_delta_thinking_and_ping() {
    let o = decode_stream(STREAM.as_bytes(), &[]);
    let calls: Vec<(&str, &str, Value)> = o
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("toolu_a", "a", json!({"q": "üx"})),
            ("toolu_b", "b", json!({})),             // only "" fragments
            ("toolu_c", "c", json!({"q": "given"})), // no delta: keeps the start's input
        ]
    );
    assert_eq!(o.text.as_deref(), Some("Héllo 🌍 ")); // thinking is never text
    assert_eq!(
        o.opaque,
        [json!({"type": "thinking", "thinking": "pondér", "signature": "SIG"})]
    );
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("tool_use"))
    );
    let u = o.usage.clone().unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (Some(9), Some(58)));
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
    assert_eq!(o.model.as_deref(), Some("claude-x"));
}

#[test]
fn mid_stream_error_and_truncation() {
    let cut = STREAM
        .find("event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":2}")
        .unwrap();
    let err_event = "event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\r\n\r\n";
    let o = decode_stream(format!("{}{err_event}", &STREAM[..cut]).as_bytes(), &[]);
    let e = o.error.clone().unwrap();
    assert_eq!(
        (e.status, e.kind.as_deref(), e.message.as_str()),
        (200, Some("overloaded_error"), "Overloaded")
    );
    assert!(o.diagnostics.is_empty());

    let o = decode_stream(&STREAM.as_bytes()[..cut], &[]);
    assert_eq!(o.diagnostics.len(), 1);
    assert_eq!(o.diagnostics[0].kind, DiagnosticKind::StreamTruncated);
    assert!(o.diagnostics[0].recovered);
    assert_eq!(o.tool_calls[0].arguments, json!({"q": "üx"})); // what arrived is decoded
    assert_eq!(o.raw_finish, None);
}

#[test]
fn bad_event_json_names_its_line() {
    let body = "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: x\ndata: {\"type\": nope}\n\n";
    let mut s = Stream::new(&stream_req());
    let err = s.push(body.as_bytes()).unwrap_err();
    assert_eq!(err.line, Some(5));
    assert!(err.column.is_some());
    // An event object without `type`, or not an object at all, is an error too.
    for data in [r#"{"index":0}"#, "[1]"] {
        let mut s = Stream::new(&stream_req());
        let err = s.push(format!("data: {data}\n\n").as_bytes()).unwrap_err();
        assert_eq!(err.line, Some(1), "{data}: {err}");
    }
    // Field order does not matter: `type` after the delta it qualifies.
    let body = concat!(
        "data: {\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"},\"type\":\"content_block_start\"}\n\n",
        "data: {\"delta\":{\"text\":\"Hi\",\"type\":\"text_delta\"},\"index\":0,\"type\":\"content_block_delta\"}\n\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    let mut s = Stream::new(&stream_req());
    s.push(body.as_bytes()).unwrap();
    let o = s.finish().unwrap();
    assert_eq!(o.text.as_deref(), Some("Hi"));
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
}

#[test]
fn chunking_invariance() {
    // STREAM holds a 4-byte character, so splits inside UTF-8 are covered.
    assert!(STREAM.contains('🌍'));
    stream_every_chunking(STREAM.as_bytes(), || Stream::new(&stream_req())).unwrap();
}

#[test]
fn synthetic_stream_decodes() {
    let body = synthetic_stream(30, 7);
    let o = decode_stream(body.as_bytes(), &[]);
    assert_eq!(o.tool_calls.len(), 30);
    assert_eq!(o.tool_calls[29].arguments["limit"], 29);
    assert!(o.diagnostics.is_empty());
    let ones = vec![1; body.len()];
    assert_eq!(decode_stream(body.as_bytes(), &ones), o);
}

// ---- Request decoding (`request.rs`) ----

#[test]
fn decode_request_splits_results_from_trailing_text_and_reads_the_parallel_switch() {
    let body = json!({
        "model": "claude", "max_tokens": 500,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "…", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "boom"}], "is_error": true},
                {"type": "text", "text": "And tomorrow?"}
            ]}
        ],
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}, "strict": true},
                  {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
        "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 2048}
    });
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    let r = &d.request;
    assert_eq!(r.max_tokens, Some(500));
    assert_eq!(r.thinking, Some(2048));
    assert_eq!(
        r.tool_choice,
        Some(ToolChoice::Forced("get_weather".into()))
    );
    assert_eq!(r.parallel_tool_calls, Some(false));
    assert_eq!(r.tools[0].strict, Some(true));
    assert_eq!(r.hosted.len(), 1);
    let Message::Assistant { opaque, .. } = &r.messages[2] else {
        panic!("{:?}", r.messages[2])
    };
    assert_eq!(opaque[0]["type"], "thinking");
    assert_eq!(
        r.messages[3..],
        [
            Message::Tool {
                call_id: "t1".into(),
                name: "get_weather".into(),
                content: "boom".into(),
                is_error: true,
                // The array form is kept: it goes on as text blocks.
                parts: vec![crate::model::ResultPart::Text {
                    text: "boom".into()
                }],
            },
            Message::User {
                content: "And tomorrow?".into()
            }
        ]
    );
    let pointers: Vec<&str> = d.extras.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/system/0/cache_control",
            "/tools/0/strict",
            "/tools/1/max_uses",
            "/tool_choice/disable_parallel_tool_use"
        ]
    );
}

#[test]
fn decode_request_reads_a_forced_server_search_as_required_grounding() {
    let body = json!({"model": "claude", "max_tokens": 10,
        "messages": [{"role": "user", "content": "Search"}],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "tool_choice": {"type": "tool", "name": "web_search"}});
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    assert_eq!(d.request.tool_choice, None);
    assert!(crate::capability::grounding_required(&d.request));
}

#[test]
fn decode_request_errors_name_the_field() {
    let err = |body: Value| request_error(decode_request, PATH, body);
    assert_eq!(
        err(json!({"model": "c", "messages": [], "tools": [{"name": "f"}]})),
        "/tools/0/input_schema: missing (a client tool declares its input_schema)"
    );
    assert_eq!(
        err(json!({"model": "c", "messages": [{"role": "tool", "content": "x"}]})),
        "/messages/0/role: unknown role `tool` (user, assistant, or system after a user turn)"
    );
    assert_eq!(
        err(
            json!({"model": "c", "messages": [{"role": "user", "content": "x"},
            {"role": "system", "content": [{"type": "image", "source": {}}]}]})
        ),
        "/messages/1/content/0/type: a system message carries text, tool_addition and tool_removal blocks only"
    );
    let change = |block: Value| {
        err(
            json!({"model": "c", "messages": [{"role": "user", "content": "x"},
            {"role": "system", "content": [block]}]}),
        )
    };
    assert_eq!(
        change(json!({"type": "tool_removal"})),
        "/messages/1/content/0/tool: missing (a tool change names its tool)"
    );
    assert_eq!(
        change(json!({"type": "tool_addition", "tool": {"type": "tool_reference"}})),
        "/messages/1/content/0/tool: missing `name`"
    );
    assert!(
        change(
            json!({"type": "tool_removal", "tool": {"type": "tool_definition",
            "definition": {"name": "f"}}})
        )
        .starts_with("/messages/1/content/0/tool/type: ")
    );
}

#[test]
fn a_system_message_s_tool_changes_fold_into_the_tools_in_force() {
    // platform.claude.com, "Mid-conversation system messages and tool changes": additions by
    // reference to a deferred tool (beta mid-conversation-tool-changes-2026-07-01) or by value
    // (inline-tools-2026-09-15); removals by reference.
    let weather = json!({"name": "get_weather", "input_schema": {"type": "object"}});
    let body = json!({"model": "claude-opus-4-8", "max_tokens": 10,
    "tools": [{"name": "get_time", "input_schema": {"type": "object"}},
              {"name": "lookup", "input_schema": {"type": "object"}, "defer_loading": true},
              {"name": "never", "input_schema": {"type": "object"}, "defer_loading": true}],
    "messages": [
        {"role": "user", "content": "What time is it, and the weather in Split?"},
        {"role": "system", "content": [
            {"type": "text", "text": "Weather is available now."},
            {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_time"}},
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "lookup"}},
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": weather}}]}]});
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    let system: Vec<&Message> = d
        .request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::System { .. }))
        .collect();
    assert_eq!(system.len(), 1, "{:?}", d.request.messages);
    let names: Vec<&str> = d.request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["lookup", "get_weather"]);
    assert!(d.uncarried_tools().is_empty(), "{:?}", d.extras);
    let wire: Vec<&str> = d
        .extras_of(crate::providers::ExtraKind::Wire)
        .map(|e| e.pointer.as_str())
        .collect();
    assert!(wire.contains(&"/messages/1/content/1"), "{wire:?}");
    assert!(wire.contains(&"/tools/2/defer_loading"), "{wire:?}");
}

#[test]
fn a_tool_change_the_neutral_request_cannot_carry_stays_an_extra_a_proxy_refuses() {
    let body = json!({"model": "claude-opus-4-8", "max_tokens": 10,
    "tools": [{"name": "get_time", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "undeclared"}},
            {"type": "tool_removal", "tool": {"type": "mcp_toolset_reference", "server_name": "git"}},
            {"type": "tool_addition", "tool": {"type": "tool_definition",
                "definition": {"type": "web_search_20250305", "name": "web_search"}}}]}]});
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    let names: Vec<&str> = d.request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_time"]);
    let changes = d.uncarried_tools();
    let at: Vec<(&str, &str)> = changes
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        at,
        [
            ("/messages/1/content/0", "tool_addition"),
            ("/messages/1/content/1", "tool_removal"),
            ("/messages/1/content/2", "tool_addition"),
        ]
    );
}

#[test]
fn a_mid_conversation_system_message_is_decoded_at_its_place() {
    let body = json!({"model": "claude-opus-4-8", "max_tokens": 10, "system": "Be brief.",
    "messages": [
        {"role": "user", "content": "Review the auth module."},
        {"role": "assistant", "content": "Three issues."},
        {"role": "user", "content": "Next?"},
        {"role": "system", "content": [{"type": "text", "text": "Focus on performance.",
            "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": "Looking."},
        {"role": "user", "content": "Go on."},
        {"role": "system", "content": "Answer in Go."}
    ]});
    assert!(crate::providers::request_rejection(Provider::Anthropic, &body).is_none());
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    let systems: Vec<(usize, &str)> = d
        .request
        .messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            Message::System { content } => Some((i, content.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        systems,
        [
            (0, "Be brief."),
            (4, "Focus on performance."),
            (7, "Answer in Go.")
        ]
    );
    let wire: Vec<&str> = d
        .extras_of(crate::providers::ExtraKind::Wire)
        .map(|e| e.pointer.as_str())
        .collect();
    assert_eq!(wire, ["/messages/3/role", "/messages/6/role"]);
    assert!(
        d.extras
            .iter()
            .any(|e| e.pointer == "/messages/3/content/0/cache_control")
    );
}

#[test]
fn a_misplaced_system_message_gets_the_messages_apis_400() {
    let rejected = |messages: Value| {
        let body = json!({"model": "c", "max_tokens": 1, "messages": messages});
        crate::providers::request_rejection(Provider::Anthropic, &body).map(|r| r.message)
    };
    let sys = json!({"role": "system", "content": "x"});
    let user = json!({"role": "user", "content": "u"});
    let asst = json!({"role": "assistant", "content": "a"});
    let cases = [
        (
            json!([sys, user]),
            "messages.0: a system message cannot be the first message",
        ),
        (
            json!([user, asst, sys]),
            "messages.2: a system message must immediately follow a user message",
        ),
        (
            json!([user, sys, sys]),
            "messages.1: consecutive system messages are not allowed",
        ),
        (
            json!([user, sys, user]),
            "messages.1: a system message must be the last message or be followed by an assistant message",
        ),
    ];
    for (messages, want) in cases {
        let got = rejected(messages).unwrap_or_default();
        assert!(got.starts_with(want), "{got}");
    }
    let server_tool = json!({"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}]});
    assert_eq!(rejected(json!([user, server_tool, sys])), None);
}

#[test]
fn under_max_tokens_only_a_last_tool_use_block_is_withdrawn() {
    let kingston =
        r#"{"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Kingston"}}"#;
    let cut = r#"{"type":"tool_use","id":"t2","name":"get_weather","input":{}}"#;
    let body = |blocks: &[&str]| {
        format!(
            r#"{{"type":"message","content":[{}],"stop_reason":"max_tokens"}}"#,
            blocks.join(",")
        )
    };
    let o = decode(&req(None), &resp(200, &body(&[kingston, cut]))).unwrap();
    assert_eq!(o.tool_calls.len(), 1);
    assert_eq!(o.diagnostics[0].kind, DiagnosticKind::TruncatedCall);
    // A buffered `input` is an object placeholder, not argument text received.
    let t = o.truncated_call.unwrap();
    assert_eq!((t.id.as_str(), t.arguments.as_str()), ("t2", ""));
    // A block after the call: the call was finished when the limit hit.
    let text = r#"{"type":"text","text":""}"#;
    let o = decode(&req(None), &resp(200, &body(&[kingston, text]))).unwrap();
    assert_eq!(o.tool_calls.len(), 1);
    assert_eq!((o.finish, o.truncated_call), (Finish::Length, None));
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
}

#[test]
fn eager_input_streaming_is_read_into_its_tool_and_written_back() {
    // Fine-grained tool streaming: a per-tool switch, carried by the neutral tool.
    let body = json!({"model": "m", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "make_file", "input_schema": {"type": "object"},
                   "eager_input_streaming": true},
                  {"name": "get_time", "input_schema": {"type": "object"},
                   "eager_input_streaming": false}]});
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    let eager: Vec<bool> = d
        .request
        .tools
        .iter()
        .map(|t| t.eager_input_streaming)
        .collect();
    assert_eq!(eager, [true, false]);
    assert_eq!(
        d.extras_of(crate::providers::ExtraKind::NotCarried).count(),
        0
    );
    let sent = crate::providers::encode(Provider::Anthropic, &d.request).unwrap();
    assert_eq!(sent.request.body["tools"][0]["eager_input_streaming"], true);
    assert!(
        sent.request.body["tools"][1]
            .get("eager_input_streaming")
            .is_none()
    );
    assert!(sent.notes.is_empty(), "{:?}", sent.notes);
    let chat = crate::providers::encode(Provider::OpenaiChat, &d.request).unwrap();
    assert!(
        chat.request.body["tools"][0]
            .get("eager_input_streaming")
            .is_none()
    );
    let note = chat.notes.join("; ");
    assert!(
        note.contains("eager_input_streaming dropped for openai-chat: its stream has no such switch (make_file)"),
        "{note}"
    );
}
