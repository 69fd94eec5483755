//! Tests of the Chat Completions codec: encoding, buffered and streamed decoding, error envelopes,
//! chunking invariance.

use serde_json::{Value, json};

use super::*;
use crate::model::{AllowedMode, Finish, HostedTool, Message, Outcome, ToolChoice};
use crate::model::{ChatRequest, DecodeError, DiagnosticKind};
use crate::providers::testkit::{
    assert_noted, ids_and_arguments, openai_string_choices, request, request_error, response as ok,
    stream_every_chunking, weather_call, weather_result,
};

fn body(req: &ChatRequest) -> Value {
    encode(req).unwrap().request.body
}

fn stream_outcome(req: &ChatRequest, body: &str) -> Result<Outcome, DecodeError> {
    stream_every_chunking(body.as_bytes(), || Stream::new(req))
}

fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

#[test]
fn encode_keys_in_order_and_tools_forwarded_buffered_and_streamed() {
    let mut req = request(&["get_weather"], false);
    req.tool_choice = Some(ToolChoice::Auto);
    req.parallel_tool_calls = Some(false);
    req.max_tokens = Some(100);
    let b = body(&req);
    let keys: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "model",
            "messages",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "max_completion_tokens"
        ]
    );
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(b["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        b["tools"][0]["function"]["parameters"]["required"],
        json!(["city"])
    );
    assert_eq!(b["parallel_tool_calls"], false);
    let enc = encode(&req).unwrap();
    assert_eq!(enc.request.path, "/v1/chat/completions");
    assert_eq!(enc.request.method, "POST");

    req.stream = true;
    let s = body(&req);
    assert_eq!(
        s["tools"], b["tools"],
        "tools forwarded identically when streaming"
    );
    let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(&keys[6..], ["stream", "stream_options"]);
    assert_eq!(
        s["stream_options"],
        json!({"include_usage": true, "include_obfuscation": false})
    );
}

#[test]
fn encode_every_tool_choice_form() {
    let mut req = request(&["a", "b"], false);
    let cases = openai_string_choices().into_iter().chain([
        (
            ToolChoice::Forced("b".into()),
            json!({"type": "function", "function": {"name": "b"}}),
        ),
        (
            ToolChoice::Allowed {
                mode: AllowedMode::Required,
                tools: vec!["a".into(), "b".into()],
            },
            json!({"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
                {"type": "function", "function": {"name": "a"}},
                {"type": "function", "function": {"name": "b"}}]}}),
        ),
        (
            ToolChoice::Allowed {
                mode: AllowedMode::Auto,
                tools: vec!["a".into()],
            },
            json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
                {"type": "function", "function": {"name": "a"}}]}}),
        ),
    ]);
    for (choice, want) in cases {
        req.tool_choice = Some(choice.clone());
        assert_eq!(body(&req)["tool_choice"], want, "{}", choice.slug());
    }
    req.tool_choice = None;
    assert!(body(&req).get("tool_choice").is_none());
}

#[test]
fn encode_fails_closed() {
    let mut req = request(&[], false);
    req.tool_choice = Some(ToolChoice::Auto);
    assert_eq!(encode(&req).unwrap_err().code, "TOOL_CHOICE_WITHOUT_TOOLS");
    let mut req = request(&["a"], false);
    req.tool_choice = Some(ToolChoice::Forced("zzz".into()));
    assert_eq!(encode(&req).unwrap_err().code, "TOOL_CHOICE_UNKNOWN_TOOL");
    req.tool_choice = Some(ToolChoice::Allowed {
        mode: AllowedMode::Auto,
        tools: vec!["a".into(), "x".into()],
    });
    assert_eq!(encode(&req).unwrap_err().code, "TOOL_CHOICE_UNKNOWN_TOOL");
    req.tool_choice = Some(ToolChoice::Allowed {
        mode: AllowedMode::Auto,
        tools: vec![],
    });
    assert_eq!(encode(&req).unwrap_err().code, "ALLOWED_TOOLS_EMPTY");
    let mut req = request(&["a"], true);
    req.hosted = vec![HostedTool::WebSearch {
        grounding: Default::default(),
        variant: None,
    }];
    assert_eq!(encode(&req).unwrap_err().code, "HOSTED_TOOL_NOT_SUPPORTED");
}

#[test]
fn encode_parallel_switch_and_multi_turn() {
    let mut req = request(&["get_weather"], false);
    assert!(body(&req).get("parallel_tool_calls").is_none());
    req.parallel_tool_calls = Some(true);
    assert_eq!(body(&req)["parallel_tool_calls"], true);
    req.messages = vec![
        Message::System {
            content: "sys".into(),
        },
        Message::Developer {
            content: "dev".into(),
        },
        Message::User {
            content: "hi".into(),
        },
        Message::Assistant {
            phase: None,
            text: None,
            tool_calls: vec![
                weather_call("call_1", json!({"city": "Paris"})),
                weather_call("call_2", json!("{bad")),
            ],
            opaque: vec![],
        },
        weather_result("call_1", "18C", false),
        weather_result("call_2", "boom", true),
    ];
    let enc = encode(&req).unwrap();
    let m = &enc.request.body["messages"];
    assert_eq!(m[0], json!({"role": "system", "content": "sys"}));
    assert_eq!(m[1], json!({"role": "developer", "content": "dev"}));
    assert_eq!(m[2], json!({"role": "user", "content": "hi"}));
    assert_eq!(
        m[3],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{bad"}}]})
    );
    assert_eq!(
        m[4],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "18C"})
    );
    assert_eq!(
        m[5],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "boom"})
    );
    assert_noted(&enc.notes, "error");
}

#[test]
fn decode_buffered_calls_text_usage() {
    let req = request(&["get_weather"], false);
    let b = r#"{"id":"x","model":"gpt-4.1-2025","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,
      "tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
                    {"id":"call_2","type":"function","function":{"name":"get_weather","arguments":""}},
                    {"id":"call_3","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},
      "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":61,"completion_tokens":17,"total_tokens":78}}"#;
    let o = decode(&req, &ok(200, b)).unwrap();
    assert_eq!(o.tool_calls.len(), 3);
    assert_eq!(o.tool_calls[0].arguments, json!({"city": "Paris"}));
    assert_eq!(o.tool_calls[1].arguments, json!({}));
    assert_eq!(o.tool_calls[2].arguments, json!("{\"city\":"));
    assert_eq!(o.diagnostics.len(), 1);
    assert_eq!(o.diagnostics[0].kind, DiagnosticKind::InvalidArgumentsJson);
    assert_eq!(o.diagnostics[0].call_index, Some(2));
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("tool_calls"))
    );
    assert_eq!(o.usage.unwrap().input_tokens, Some(61));
    assert_eq!(o.model.as_deref(), Some("gpt-4.1-2025"));
    assert_eq!(o.text, None);

    let b = r#"{"choices":[{"message":{"content":"Hi","tool_calls":[{"id":"c","function":{"name":"get_weather","arguments":{"city":"Rome"}}}]},"finish_reason":"stop"}]}"#;
    let o = decode(&req, &ok(200, b)).unwrap();
    assert_eq!(
        o.finish,
        Finish::ToolCalls,
        "stop with calls normalizes to tool_calls"
    );
    assert_eq!(o.raw_finish.as_deref(), Some("stop"));
    assert_eq!(o.text.as_deref(), Some("Hi"));
    assert_eq!(o.tool_calls[0].arguments, json!({"city": "Rome"}));

    for (reason, finish) in [
        ("length", Finish::Length),
        ("content_filter", Finish::ContentFilter),
        ("weird", Finish::Other),
    ] {
        let b = format!(
            r#"{{"choices":[{{"message":{{"content":"x"}},"finish_reason":"{reason}"}}]}}"#
        );
        assert_eq!(decode(&req, &ok(200, &b)).unwrap().finish, finish);
    }
    let b = r#"{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}"#;
    assert_eq!(
        decode(&req, &ok(200, b)).unwrap().text.as_deref(),
        Some("I can't help with that.")
    );
}

#[test]
fn decode_buffered_bad_json_has_position() {
    let err = decode(&request(&[], false), &ok(200, "{\n  \"choices\": [,]}")).unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(err.column.is_some());
}

#[test]
fn decode_error_envelopes() {
    let req = request(&[], false);
    let mut r = ok(
        429,
        r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
    );
    r.headers.insert("retry-after".into(), "7".into());
    let e = decode(&req, &r).unwrap().error.unwrap();
    assert_eq!(
        (e.status, e.kind.as_deref(), e.code.as_deref()),
        (429, Some("requests"), Some("rate_limit_exceeded"))
    );
    assert_eq!(
        (e.message.as_str(), e.retry_after_ms),
        ("Rate limit reached", Some(7000))
    );
    r.headers.insert("retry-after-ms".into(), "250".into());
    assert_eq!(
        decode(&req, &r).unwrap().error.unwrap().retry_after_ms,
        Some(250)
    );

    let mistral = r#"{"object":"error","message":"Invalid model","type":"invalid_model","param":null,"code":"1500"}"#;
    let e = decode(&req, &ok(400, mistral)).unwrap().error.unwrap();
    assert_eq!(
        (e.kind.as_deref(), e.code.as_deref(), e.message.as_str()),
        (Some("invalid_model"), Some("1500"), "Invalid model")
    );

    let openrouter = r#"{"error":{"code":402,"message":"Insufficient credits","metadata":{"provider_name":"x"}}}"#;
    let e = decode(&req, &ok(402, openrouter)).unwrap().error.unwrap();
    assert_eq!(
        (e.kind, e.code.as_deref(), e.message.as_str()),
        (None, Some("402"), "Insufficient credits")
    );

    let vllm = r#"{"error":{"message":"bad","type":"BadRequestError","param":null,"code":400}}"#;
    assert_eq!(
        decode(&req, &ok(400, vllm))
            .unwrap()
            .error
            .unwrap()
            .code
            .as_deref(),
        Some("400")
    );

    let e = decode(&req, &ok(502, "<html>Bad gateway</html>\n"))
        .unwrap()
        .error
        .unwrap();
    assert_eq!(
        (e.status, e.message.as_str(), e.kind),
        (502, "<html>Bad gateway</html>", None)
    );
}

#[test]
fn stream_parallel_calls_usage_done() {
    let req = request(&["get_weather"], true);
    let body = sse(&[
        r#"{"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}],"usage":null}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Zürich\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"ty\":\"東京\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9}}"#,
        "[DONE]",
    ]);
    let o = stream_outcome(&req, &body).unwrap();
    assert_eq!(
        ids_and_arguments(&o),
        [
            ("call_a", &json!({"city": "Zürich"})),
            ("call_b", &json!({"city": "東京"}))
        ]
    );
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("tool_calls"))
    );
    assert_eq!(o.usage.unwrap().output_tokens, Some(9));
    assert_eq!(o.model.as_deref(), Some("m1"));
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
    assert_eq!(o.text, None);
}

#[test]
fn stream_mistral_missing_index_groq_whole_calls_vllm_empty_name() {
    let req = request(&["weather"], true);
    // Mistral: whole calls without index or type, with finish and usage in the same chunk.
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"gSIMJiOkT","function":{"name":"weather","arguments":"{\"location\": \"SF\"}"}},{"id":"hTJNKjPlU","function":{"name":"weather","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
        "[DONE]",
    ]);
    let o = stream_outcome(&req, &body).unwrap();
    assert_eq!(o.tool_calls.len(), 2);
    assert_eq!(
        (o.tool_calls[0].id.as_str(), &o.tool_calls[0].arguments),
        ("gSIMJiOkT", &json!({"location": "SF"}))
    );
    assert_eq!(
        (o.tool_calls[1].id.as_str(), &o.tool_calls[1].arguments),
        ("hTJNKjPlU", &json!({}))
    );
    // Groq: one whole call per chunk, x_groq extras; vLLM: empty-name follow-up deltas.
    let body = format!(
        ": OPENROUTER PROCESSING\n\n{}",
        sse(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"tk85n1k4m","type":"function","function":{"name":"weather","arguments":"{}"},"index":0}]}}],"x_groq":{"id":"req_1"}}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"chatcmpl-tool-1","function":{"name":"weather","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"","arguments":"{\"a\":1}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"x_groq":{"usage":{"queue_time":0.1}}}"#,
            "[DONE]",
        ])
    );
    let o = stream_outcome(&req, &body).unwrap();
    let got: Vec<(&str, &str, &Value)> = o
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), &c.arguments))
        .collect();
    assert_eq!(
        got,
        [
            ("tk85n1k4m", "weather", &json!({})),
            ("chatcmpl-tool-1", "weather", &json!({"a": 1}))
        ]
    );
}

#[test]
fn stream_text_crlf_keepalives_and_text_so_far() {
    let req = request(&[], true);
    let body = ": keep-alive\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n:ping\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo ✓\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n";
    let o = stream_outcome(&req, body).unwrap();
    assert_eq!(
        (o.text.as_deref(), o.finish),
        (Some("Hello ✓"), Finish::Stop)
    );
    let mut s = Stream::new(&req);
    s.push(&body.as_bytes()[..90]).unwrap();
    assert_eq!(s.text_so_far(), "Hel");
}

#[test]
fn stream_mid_stream_error_and_truncation() {
    let req = request(&["get_weather"], true);
    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#,
        r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}"#,
    ]);
    let o = stream_outcome(&req, &body).unwrap();
    let e = o.error.clone().unwrap();
    assert_eq!((e.status, e.kind.as_deref()), (200, Some("server_error")));
    assert!(o.diagnostics.is_empty());
    assert_eq!(o.text.as_deref(), Some("Hi"));

    let body = sse(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"{\"city\":\"Par"}}]}}]}"#,
    ]);
    let o = stream_outcome(&req, &body).unwrap();
    assert_eq!(o.tool_calls[0].arguments, json!("{\"city\":\"Par"));
    let kinds: Vec<DiagnosticKind> = o.diagnostics.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [
            DiagnosticKind::InvalidArgumentsJson,
            DiagnosticKind::StreamTruncated
        ]
    );
    assert!(o.diagnostics.iter().all(|d| d.recovered));
    assert_eq!(o.finish, Finish::Other);
}

#[test]
fn stream_only_choice_zero_counts_whatever_the_field_order() {
    let req = request(&["get_weather"], true);
    let body = sse(&[
        // `delta` before `index`: applied once the index is known to be 0.
        r#"{"choices":[{"delta":{"content":"A","tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"index":0}]}"#,
        // Choice 0 and a second choice: only the first element is read.
        r#"{"choices":[{"index":0,"delta":{"content":"B"}},{"index":1,"delta":{"content":"X"}}]}"#,
        // A first element that is another choice (n > 1 interleaving), either field order.
        r#"{"choices":[{"index":1,"delta":{"content":"Y"},"finish_reason":"length"}]}"#,
        r#"{"choices":[{"delta":{"content":"Z","tool_calls":[{"index":0,"function":{"arguments":"oops"}}]},"index":2}]}"#,
        // Nulls where objects or lists may be.
        r#"{"choices":null,"usage":null,"model":null}"#,
        r#"{"choices":[{"index":0,"delta":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":null,"tool_calls":null}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let o = stream_outcome(&req, &body).unwrap();
    assert_eq!(o.text.as_deref(), Some("AB"));
    assert_eq!(o.tool_calls.len(), 1);
    assert_eq!(o.tool_calls[0].arguments, json!({"city": "Oslo"}));
    assert_eq!(o.finish, Finish::ToolCalls);
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
}

#[test]
fn stream_bad_event_names_its_line() {
    let req = request(&[], true);
    let body = "data: {\"choices\":[]}\n\n: c\ndata: {\"choices\": nope}\n\n";
    let err = stream_outcome(&req, body).unwrap_err();
    // The column counts within the event's data (after `data: `).
    assert_eq!((err.line, err.column), (Some(4), Some(14)));
    let bad_utf8 = b"data: {\"choices\":[]}\n\ndata: \xff\n\n";
    let mut s = Stream::new(&req);
    assert_eq!(s.push(bad_utf8).unwrap_err().line, Some(3));
}

#[test]
fn synthetic_stream_decodes_every_call() {
    let body = synthetic_stream(3, 7);
    let o = stream_outcome(&request(&[], true), &body[..]).unwrap();
    assert_eq!(o.tool_calls.len(), 3);
    assert_eq!(
        o.tool_calls[2].arguments["location"],
        "City number 2, Région ü"
    );
    assert!(o.diagnostics.is_empty());
}

// ---- Request decoding (`request.rs`) ----

fn chat_request(body: Value) -> HttpRequest {
    HttpRequest::post(PATH, body)
}

#[test]
fn decode_request_reads_tools_choice_calls_and_linked_results() {
    let body = json!({
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather "}, {"type": "text", "text": "in Paris?"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"}
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}, "strict": true}}],
        "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "get_weather"}}]}},
        "parallel_tool_calls": false,
        "max_completion_tokens": 300,
        "temperature": 0.2,
        "x_vendor": 1
    });
    let d = decode_request(&chat_request(body)).unwrap();
    let r = &d.request;
    assert_eq!(r.model, "gpt-4.1");
    assert_eq!(r.tools[0].strict, Some(true));
    assert_eq!(
        r.tool_choice,
        Some(ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools: vec!["get_weather".into()]
        })
    );
    assert_eq!(r.parallel_tool_calls, Some(false));
    assert_eq!(r.max_tokens, Some(300));
    assert_eq!(
        r.messages[1],
        Message::User {
            content: "Weather in Paris?".into()
        }
    );
    let Message::Assistant { tool_calls, .. } = &r.messages[2] else {
        panic!("{:?}", r.messages[2])
    };
    assert_eq!(tool_calls[0].arguments, json!({"city": "Paris"}));
    assert_eq!(r.messages[3], weather_result("call_1", "18C", false));
    let kinds: Vec<(&str, crate::providers::decoded::ExtraKind)> = d
        .extras
        .iter()
        .map(|e| (e.pointer.as_str(), e.kind))
        .collect();
    use crate::providers::decoded::ExtraKind as K;
    assert_eq!(
        kinds,
        [
            ("/tools/0/function/strict", K::Wire),
            ("/temperature", K::NotCarried),
            ("/x_vendor", K::Unknown)
        ]
    );
}

#[test]
fn decode_request_keeps_a_misplaced_strict_as_unknown() {
    let body = json!({"model": "m", "messages": [],
        "tools": [{"type": "function", "strict": true, "function": {"name": "f"}}]});
    let d = decode_request(&chat_request(body)).unwrap();
    assert_eq!(d.request.tools[0].strict, None);
    assert_eq!(d.extras[0].pointer, "/tools/0/strict");
    assert_eq!(
        d.extras[0].kind,
        crate::providers::decoded::ExtraKind::Unknown
    );
}

#[test]
fn decode_request_errors_name_the_field() {
    let err = |body: Value| request_error(decode_request, PATH, body);
    assert_eq!(
        err(json!({"messages": []})),
        "/model: missing (a Chat Completions request names its model)"
    );
    assert_eq!(
        err(json!({"model": "m", "messages": [], "tool_choice": "sometimes"})),
        "/tool_choice: unknown tool choice `sometimes` (auto, none, required, or an object)"
    );
    assert_eq!(
        err(json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]})),
        "/messages/0/tool_call_id: missing (a tool result names the call it answers)"
    );
    assert_eq!(
        err(json!([1])),
        "(body): expected an object (a Chat Completions request), found an array"
    );
    let wrong_path = HttpRequest::post("/v1/responses", json!({}));
    assert!(
        decode_request(&wrong_path)
            .unwrap_err()
            .to_string()
            .starts_with("path: `/v1/responses` is not a Chat Completions path")
    );
}

#[test]
fn decode_request_inverts_encode() {
    let mut req = request(&["get_weather", "get_time"], true);
    req.tool_choice = Some(ToolChoice::Forced("get_time".into()));
    req.parallel_tool_calls = Some(true);
    req.max_tokens = Some(99);
    let enc = encode(&req).unwrap();
    let d = decode_request(&enc.request).unwrap();
    assert_eq!(d.request.tool_choice, req.tool_choice);
    assert_eq!(d.request.parallel_tool_calls, Some(true));
    assert_eq!(d.request.max_tokens, Some(99));
    assert!(d.request.stream);
    assert_eq!(d.request.messages, req.messages);
    let names: Vec<&str> = d.request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_time"]);
}

#[test]
fn under_length_only_an_unfinished_last_call_is_withdrawn() {
    let req = request(&[], false);
    let body = |last_args: &str| {
        json!({"choices": [{"message": {"tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Kingston\"}"}},
            {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": last_args}}
        ]}, "finish_reason": "length"}]})
        .to_string()
    };
    // Cut mid-arguments: withdrawn, its text kept as received.
    let o = decode(&req, &ok(200, &body("{\"city\":\"Port"))).unwrap();
    assert_eq!(o.tool_calls.len(), 1);
    assert_eq!(o.diagnostics.len(), 1);
    assert_eq!(o.diagnostics[0].kind, DiagnosticKind::TruncatedCall);
    let cut = o.truncated_call.unwrap();
    assert_eq!(
        (cut.id.as_str(), cut.arguments.as_str()),
        ("b", "{\"city\":\"Port")
    );
    // Cut before any argument text: withdrawn too.
    let o = decode(&req, &ok(200, &body(""))).unwrap();
    assert_eq!(o.tool_calls.len(), 1);
    assert_eq!(o.truncated_call.unwrap().arguments, "");
    // Finished before the limit hit: a valid call.
    let o = decode(&req, &ok(200, &body("{\"city\":\"Lima\"}"))).unwrap();
    assert_eq!(o.tool_calls.len(), 2);
    assert_eq!((o.finish, o.truncated_call), (Finish::Length, None));
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
}

fn extras_at(d: &crate::providers::DecodedRequest, kind: crate::providers::ExtraKind) -> Vec<&str> {
    d.extras_of(kind).map(|e| e.pointer.as_str()).collect()
}

#[test]
fn decode_request_reads_the_legacy_function_calling_fields() {
    let body = json!({"model": "gpt-4o", "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": null,
             "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"role": "function", "name": "get_weather", "content": "18C"}
        ],
        "functions": [{"name": "get_weather", "description": "Weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "function_call": {"name": "get_weather"}});
    let d = decode_request(&chat_request(body)).unwrap();
    assert_eq!(d.request.tools.len(), 1);
    assert_eq!(d.request.tools[0].name, "get_weather");
    assert_eq!(
        d.request.tool_choice,
        Some(ToolChoice::Forced("get_weather".into()))
    );
    let Message::Assistant { tool_calls, .. } = &d.request.messages[1] else {
        panic!("{:?}", d.request.messages[1]);
    };
    assert_eq!(tool_calls[0].id, "function_call-1");
    assert_eq!(tool_calls[0].arguments, json!({"city": "Paris"}));
    assert_eq!(
        d.request.messages[2],
        weather_result("function_call-1", "18C", false)
    );
    assert_eq!(
        extras_at(&d, crate::providers::ExtraKind::Wire),
        [
            "/messages/1/function_call",
            "/messages/2/role",
            "/functions",
            "/function_call"
        ]
    );
    assert_eq!(
        extras_at(&d, crate::providers::ExtraKind::Unknown),
        Vec::<&str>::new()
    );
    for (fc, want) in [("auto", ToolChoice::Auto), ("none", ToolChoice::None)] {
        let body = json!({"model": "m", "messages": [], "function_call": fc});
        let d = decode_request(&chat_request(body)).unwrap();
        assert_eq!(d.request.tool_choice, Some(want));
    }
    let err = decode_request(&chat_request(
        json!({"model": "m", "messages": [], "function_call": "required"}),
    ))
    .unwrap_err();
    assert!(
        err.to_string().starts_with("/function_call: expected"),
        "{err}"
    );
}

#[test]
fn dialects_are_detected_and_their_fields_and_choices_read() {
    let cases = [
        (
            json!({"model": "mistral-large-latest", "messages": [], "tool_choice": "any",
            "safe_prompt": true, "random_seed": 7}),
            Dialect::Mistral,
            vec!["/safe_prompt", "/random_seed"],
        ),
        (
            json!({"model": "openai/gpt-4o", "messages": [], "tool_choice": "required",
            "models": ["a", "b"], "provider": {"order": ["x"]}, "transforms": []}),
            Dialect::OpenRouter,
            vec!["/models", "/provider", "/transforms"],
        ),
        (
            json!({"model": "llama-3.3-70b-versatile", "messages": [], "tool_choice": "required",
            "reasoning_format": "hidden"}),
            Dialect::Groq,
            vec!["/reasoning_format"],
        ),
        (
            json!({"model": "meta-llama/Llama-3.3-70B-Instruct-Turbo", "messages": [],
            "tool_choice": "required", "safety_model": "x", "repetition_penalty": 1.1}),
            Dialect::Together,
            vec!["/repetition_penalty", "/safety_model"],
        ),
        (
            json!({"model": "meta-llama/Llama-3.1-8B-Instruct:cerebras", "messages": [],
            "tool_choice": "required"}),
            Dialect::HfRouter,
            vec![],
        ),
    ];
    for (body, dialect, kept) in cases {
        assert_eq!(Dialect::detect(&body), dialect, "{body}");
        let d = decode_request(&chat_request(body.clone())).unwrap();
        assert_eq!(d.request.tool_choice, Some(ToolChoice::Required), "{body}");
        assert_eq!(d.extras[0].pointer, "dialect");
        assert_eq!(d.extras[0].value, json!(dialect.slug()));
        let mut not_carried = extras_at(&d, crate::providers::ExtraKind::NotCarried);
        not_carried.sort_unstable();
        let mut kept = kept;
        kept.sort_unstable();
        assert_eq!(not_carried, kept, "{dialect}");
        assert!(
            extras_at(&d, crate::providers::ExtraKind::Unknown).is_empty(),
            "{dialect}"
        );
    }
    // Named explicitly, a dialect's choice is read; OpenAI's own refuses Mistral's `any`.
    let body = json!({"model": "m", "messages": [], "tool_choice": "any"});
    let d = decode_request_as(&chat_request(body.clone()), Some(Dialect::Mistral)).unwrap();
    assert_eq!(d.request.tool_choice, Some(ToolChoice::Required));
    let err = decode_request_as(&chat_request(body), Some(Dialect::OpenAi)).unwrap_err();
    assert!(
        err.to_string().contains("unknown tool choice `any`"),
        "{err}"
    );
    // Without a dialect's marks a request is OpenAI's: no dialect extra, fields unknown.
    let body = json!({"model": "gpt-4o", "messages": [], "top_k": 3});
    let d = decode_request(&chat_request(body)).unwrap();
    assert!(d.extras.iter().all(|e| e.pointer != "dialect"));
    assert_eq!(
        extras_at(&d, crate::providers::ExtraKind::Unknown),
        ["/top_k"]
    );
    for d in Dialect::ALL {
        assert_eq!(Dialect::from_slug(d.slug()), Some(d));
    }
}

#[test]
fn decode_request_takes_a_function_tool_without_type_as_mistrals_sdk_sends_it() {
    let body = json!({"model": "m", "messages": [],
        "tools": [{"function": {"name": "f", "parameters": {"type": "object"}}}]});
    let d = decode_request(&chat_request(body)).unwrap();
    assert_eq!(d.request.tools[0].name, "f");
    let no_function = json!({"model": "m", "messages": [], "tools": [{"name": "f"}]});
    let e = decode_request(&chat_request(no_function)).unwrap_err();
    assert!(e.to_string().contains("/tools/0/type"), "{e}");
}

#[test]
fn a_body_with_several_dialects_marks_is_read_as_the_first_in_order() {
    // Mistral, then OpenRouter, Groq, Together, whatever the body's key order; a key sent as
    // null marks its dialect as a present key does; a body that is no object is OpenAI's.
    let cases = [
        (
            json!({"echo": true, "documents": [], "plugins": [], "prompt_mode": null}),
            Dialect::Mistral,
        ),
        (
            json!({"echo": true, "tool_choice": "any", "route": "fallback"}),
            Dialect::Mistral,
        ),
        (
            json!({"citation_options": {}, "route": null, "echo": 1}),
            Dialect::OpenRouter,
        ),
        (json!({"echo": 1, "compound_custom": {}}), Dialect::Groq),
        (
            json!({"model": "org/m:provider", "context_length_exceeded_behavior": "error"}),
            Dialect::Together,
        ),
        (
            json!({"model": "org/m:provider", "top_k": 1}),
            Dialect::HfRouter,
        ),
        (json!({"tool_choice": {"type": "any"}}), Dialect::OpenAi),
        (
            json!({"model": "org/m", "tool_prompt": "Use a tool"}),
            Dialect::HfRouter,
        ),
        (json!(["safe_prompt"]), Dialect::OpenAi),
    ];
    for (body, dialect) in cases {
        assert_eq!(Dialect::detect(&body), dialect, "{body}");
    }
}

/// Hugging Face's spellings of a named choice: TGI takes a bare function name in its dialect,
/// and its clients send `{"function": {"name"}}` without `type` (read in every dialect, as a
/// wire extra); OpenAI's own dialect still refuses a bare name.
#[test]
fn hugging_face_named_choices_decode_as_forced() {
    let tools = json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]);
    let forced = |body: Value| {
        let d = decode_request(&chat_request(body)).unwrap();
        assert_eq!(
            d.request.tool_choice,
            Some(ToolChoice::Forced("get_weather".into()))
        );
        assert!(
            d.extras.iter().any(|e| e.pointer == "/tool_choice"),
            "{:?}",
            d.extras
        );
    };
    forced(
        json!({"model": "org/m:cerebras", "messages": [], "tools": tools, "tool_choice": "get_weather"}),
    );
    forced(
        json!({"model": "gpt-4.1-mini", "messages": [], "tools": tools,
        "tool_choice": {"function": {"name": "get_weather"}}}),
    );
    let openai = json!({"model": "gpt-4.1-mini", "messages": [], "tools": tools, "tool_choice": "get_weather"});
    let err = decode_request(&chat_request(openai)).unwrap_err();
    assert!(err.to_string().contains("unknown tool choice"), "{err}");
}

#[test]
fn a_model_servers_reasoning_text_is_read_buffered_and_streamed_and_written_back() {
    let req = request(&["get_weather"], false);
    let call = r#"{"id":"chatcmpl-tool-1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Bern\"}"}}"#;
    // vLLM's `reasoning`, buffered.
    let answer = format!(
        r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":null,"reasoning":"I need Bern.","tool_calls":[{call}]}},"finish_reason":"tool_calls"}}]}}"#
    );
    let o = decode(&req, &ok(200, &answer)).unwrap();
    assert_eq!(o.opaque, vec![json!({"reasoning": "I need Bern."})]);
    // llama.cpp's `reasoning_content`, streamed in fragments before the call.
    let events = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"I need "}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"Bern."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ];
    let streamed = stream_outcome(&req, &sse(&events)).unwrap();
    assert_eq!(
        streamed.opaque,
        vec![json!({"reasoning_content": "I need Bern."})]
    );
    // Written back on the assistant message it came with, read back from a request.
    let item = json!({"reasoning": "I need Bern."});
    let next = req.clone().with_messages([Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![weather_call("chatcmpl-tool-1", json!({"city": "Bern"}))],
        opaque: vec![item.clone()],
    }]);
    let b = body(&next);
    let sent = b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(sent["reasoning"], "I need Bern.");
    let http = encode(&next).unwrap().request;
    let back = decode_request(&http).unwrap();
    let opaque = back.request.messages.iter().find_map(|m| match m {
        Message::Assistant { opaque, .. } => Some(opaque.clone()),
        _ => None,
    });
    assert_eq!(opaque, Some(vec![item]));
}
