//! Gemini encoder and decoder tests: calling modes, thought signatures, result grouping,
//! buffered/streamed decoding (SSE with CRLF and JSON array), errors, chunking invariance.

use serde_json::{Value, json};

use super::*;
use crate::model::{DiagnosticKind, Finish, Grounding, Outcome};
use crate::providers::testkit::{
    assert_finish_reasons, assert_noted, q_request, request_error, response as resp,
    stream_every_chunking, stream_in_chunks, weather_result, with_instructions,
};

fn req(choice: Option<ToolChoice>) -> ChatRequest {
    q_request("gemini-3.8-flash", &["a", "b"], choice)
}

fn body(r: &ChatRequest) -> Value {
    encode(r).unwrap().request.body
}

#[test]
fn request_shape_path_and_key_order() {
    let mut r = with_instructions(req(Some(ToolChoice::Auto)));
    r.max_tokens = Some(100);
    r.thinking = Some(512);
    r.hosted.push(HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: None,
    });
    let enc = encode(&r).unwrap();
    assert_eq!(
        enc.request.path_and_query(),
        "/v1beta/models/gemini-3.8-flash:generateContent"
    );
    let b = &enc.request.body;
    let keys: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "contents",
            "systemInstruction",
            "tools",
            "toolConfig",
            "generationConfig"
        ]
    );
    assert_eq!(
        b["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
    assert_eq!(
        b["systemInstruction"],
        json!({"parts": [{"text": "sys"}, {"text": "dev"}]})
    );
    assert_eq!(
        b["tools"],
        json!([{"functionDeclarations": [
            {"name": "a", "description": "a tool", "parameters": r.tools[0].parameters},
            {"name": "b", "description": "b tool", "parameters": r.tools[1].parameters}]},
            {"googleSearch": {}}])
    );
    assert_eq!(
        b["generationConfig"],
        json!({"maxOutputTokens": 100, "thinkingConfig": {"thinkingBudget": 512}})
    );
    r.stream = true;
    r.model = "models/gemini-3-pro-preview".into();
    let enc = encode(&r).unwrap();
    assert_eq!(
        enc.request.path_and_query(),
        "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    );
    assert!(!enc.request.headers.keys().any(|k| k.contains("key")));
}

#[test]
fn every_tool_choice_form() {
    let allowed = |mode| ToolChoice::Allowed {
        mode,
        tools: vec!["b".into()],
    };
    let cases = [
        (ToolChoice::Auto, json!({"mode": "AUTO"})),
        (ToolChoice::None, json!({"mode": "NONE"})),
        (ToolChoice::Required, json!({"mode": "ANY"})),
        (
            ToolChoice::Forced("a".into()),
            json!({"mode": "ANY", "allowedFunctionNames": ["a"]}),
        ),
        (
            allowed(AllowedMode::Required),
            json!({"mode": "ANY", "allowedFunctionNames": ["b"]}),
        ),
        (
            allowed(AllowedMode::Auto),
            json!({"mode": "VALIDATED", "allowedFunctionNames": ["b"]}),
        ),
    ];
    for (choice, want) in cases {
        let b = body(&req(Some(choice.clone())));
        assert_eq!(
            b["toolConfig"]["functionCallingConfig"],
            want,
            "{}",
            choice.slug()
        );
        // NONE (and every other mode) keeps the declarations.
        assert_eq!(
            b["tools"][0]["functionDeclarations"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }
    assert_eq!(body(&req(None)).get("toolConfig"), None);
}

#[test]
fn a_choice_without_function_declarations_is_not_sent() {
    // Gemini refuses a functionCallingConfig without functionDeclarations (400): a request with
    // only hosted search, as a Messages or Responses client sends it (`tool_choice: auto`).
    let mut r = req(Some(ToolChoice::Auto));
    r.tools.clear();
    r.hosted = vec![HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: None,
    }];
    let enc = encode(&r).unwrap();
    assert_eq!(enc.request.body.get("toolConfig"), None);
    assert_eq!(enc.request.body["tools"], json!([{"googleSearch": {}}]));
    assert_noted(&enc.notes, "tool_choice not sent");
}

#[test]
fn parallel_off_is_refused() {
    let mut r = req(None);
    r.parallel_tool_calls = Some(false);
    let err = crate::providers::encode(Provider::Gemini, &r).unwrap_err();
    assert_eq!(err.code, "PARALLEL_NOT_EXPRESSIBLE");
    assert!(
        err.message.contains("no parallel switch"),
        "{}",
        err.message
    );
}

#[test]
fn multi_turn_carries_signatures_and_groups_results() {
    let call = |id: &str, name: &str, sig: Option<&str>| ToolCall {
        caller: None,
        id: id.into(),
        name: name.into(),
        arguments: json!({"q": name}),
        thought_signature: sig.map(str::to_string),
        namespace: None,
    };
    let mut r = req(Some(ToolChoice::Auto));
    r.messages.extend([
        Message::Assistant {
            phase: None,
            text: None,
            tool_calls: vec![
                call("gemini-call-0-a", "a", Some("SIG")),
                call("fc_7", "b", None),
            ],
            opaque: Vec::new(),
        },
        Message::Tool {
            call_id: "fc_7".into(),
            name: "b".into(),
            content: "plain text".into(),
            is_error: false,
            parts: Vec::new(),
        },
        Message::Tool {
            call_id: "gemini-call-0-a".into(),
            name: "a".into(),
            content: r#"{"temp_c": 18}"#.into(),
            is_error: false,
            parts: Vec::new(),
        },
        Message::Tool {
            call_id: "zzz".into(),
            name: "a".into(),
            content: "failed".into(),
            is_error: true,
            parts: Vec::new(),
        },
    ]);
    let b = body(&r);
    let c = b["contents"].as_array().unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(
        c[1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {"q": "a"}}, "thoughtSignature": "SIG"},
            {"functionCall": {"id": "fc_7", "name": "b", "args": {"q": "b"}}}]})
    );
    assert_eq!(
        c[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "a", "response": {"temp_c": 18}}},
            {"functionResponse": {"name": "b", "id": "fc_7", "response": {"result": "plain text"}}},
            {"functionResponse": {"name": "a", "id": "zzz", "response": {"error": "failed"}}}]})
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
fn buffered_calls_text_thoughts_grounding_and_ids() {
    let body = r#"{"candidates":[{"content":{"role":"model","parts":[
        {"text":"thinking out loud","thought":true},
        {"text":"Sure. "},
        {"functionCall":{"name":"a","args":{"q":"x"}},"thoughtSignature":"SIG1"},
        {"functionCall":{"id":"fc_9","name":"b","args":{}}},
        {"functionCall":{"name":"a"}}]},
      "finishReason":"STOP","index":0,
      "groundingMetadata":{"webSearchQueries":["q1"],"groundingChunks":[{"web":{"uri":"https://g.example","title":"G"}}]}}],
      "usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"thoughtsTokenCount":5},
      "modelVersion":"gemini-3.8-flash"}"#;
    let o = decode(&req(None), &resp(200, body)).unwrap();
    assert_eq!(o.text.as_deref(), Some("Sure. "));
    let ids: Vec<&str> = o.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["gemini-call-0-a", "fc_9", "gemini-call-2-a"]);
    assert_eq!(o.tool_calls[0].thought_signature.as_deref(), Some("SIG1"));
    assert_eq!(o.tool_calls[2].arguments, json!({}));
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("STOP"))
    );
    let h = o.hosted.unwrap();
    assert_eq!(
        (h.search_calls, h.search_results, h.citations.clone()),
        (1, 1, vec!["https://g.example".to_string()])
    );
    let u = o.usage.unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (Some(3), Some(9)));
    assert_eq!(o.model.as_deref(), Some("gemini-3.8-flash"));
}

#[test]
fn finish_reasons_normalize() {
    let finish_reasons = [
        ("STOP", Finish::Stop),
        ("MAX_TOKENS", Finish::Length),
        ("SAFETY", Finish::ContentFilter),
        ("PROHIBITED_CONTENT", Finish::ContentFilter),
        ("SPII", Finish::ContentFilter),
        ("MALFORMED_FUNCTION_CALL", Finish::Other),
        ("UNEXPECTED_TOOL_CALL", Finish::Other),
    ];
    assert_finish_reasons(
        &finish_reasons,
        |raw| {
            format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"text":"x"}}]}},"finishReason":"{raw}"}}]}}"#
            )
        },
        |r| decode(&req(None), r),
    );
}

#[test]
fn errors_invalid_key_and_retry_info() {
    let invalid = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#;
    let e = decode(&req(None), &resp(400, invalid))
        .unwrap()
        .error
        .unwrap();
    assert_eq!(
        (
            e.status,
            e.kind.as_deref(),
            e.code.as_deref(),
            e.retry_after_ms
        ),
        (400, Some("INVALID_ARGUMENT"), Some("400"), None)
    );
    assert_eq!(e.message, "API key not valid. Please pass a valid API key.");
    let quota = r#"[{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[
        {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},
        {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}]"#;
    let e = decode(&req(None), &resp(429, quota))
        .unwrap()
        .error
        .unwrap();
    assert_eq!(
        (e.status, e.kind.as_deref(), e.retry_after_ms),
        (429, Some("RESOURCE_EXHAUSTED"), Some(34_400))
    );
    let e = decode(&req(None), &resp(503, "Service Unavailable"))
        .unwrap()
        .error
        .unwrap();
    assert_eq!((e.status, e.message.as_str()), (503, "Service Unavailable"));
    let err = decode(&req(None), &resp(200, "{\n\"candidates\": [}")).unwrap_err();
    assert_eq!(err.line, Some(2));
}

/// Three chunks: text (with multi-byte chars), two parallel calls, then the final STOP chunk.
const CHUNKS: [&str; 3] = [
    r#"{"candidates": [{"content": {"parts": [{"text": "thought","thought": true},{"text": "Voilà 🌍 "}],"role": "model"},"index": 0}],"modelVersion": "gemini-3.8-flash"}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "a","args": {"q": "ü]}\""}},"thoughtSignature": "SIG"},{"functionCall": {"name": "b","args": {}}}],"role": "model"},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 70,"candidatesTokenCount": 40}}"#,
];

fn sse_body() -> String {
    CHUNKS
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect()
}

fn array_body() -> String {
    format!("[{}]", CHUNKS.join("\n,\r\n"))
}

fn check_chunks_outcome(o: &Outcome) {
    assert_eq!(o.text.as_deref(), Some("Voilà 🌍 "));
    let calls: Vec<(&str, &str, Value)> = o
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("gemini-call-0-a", "a", json!({"q": "ü]}\""})),
            ("gemini-call-1-b", "b", json!({}))
        ]
    );
    assert_eq!(o.tool_calls[0].thought_signature.as_deref(), Some("SIG"));
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("STOP"))
    );
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
}

#[test]
fn sse_with_crlf_and_json_array_give_the_same_outcome() {
    let sse = decode_stream(sse_body().as_bytes(), &[]);
    check_chunks_outcome(&sse);
    assert_eq!(decode_stream(array_body().as_bytes(), &[]), sse);
    // Leading whitespace before the sniffed byte, and the sniffed byte alone in a chunk.
    assert_eq!(
        decode_stream(format!("\r\n  {}", array_body()).as_bytes(), &[1, 3, 1]),
        sse
    );
}

#[test]
fn truncation_and_mid_stream_error() {
    let body = sse_body();
    let cut = body.rfind("data:").unwrap();
    let o = decode_stream(&body.as_bytes()[..cut], &[]);
    assert_eq!(o.tool_calls.len(), 2);
    assert_eq!(o.raw_finish, None);
    assert_eq!(o.diagnostics[0].kind, DiagnosticKind::StreamTruncated);
    assert!(o.diagnostics[0].recovered);

    // A JSON array cut after its last element but before `]` is truncated too.
    let arr = array_body();
    let o = decode_stream(&arr.as_bytes()[..arr.len() - 1], &[]);
    assert_eq!(o.diagnostics[0].kind, DiagnosticKind::StreamTruncated);

    let err = r#"data: {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}"#;
    let o = decode_stream(format!("{}{err}\r\n\r\n", &body[..cut]).as_bytes(), &[]);
    let e = o.error.clone().unwrap();
    assert_eq!(
        (e.status, e.kind.as_deref(), e.code.as_deref()),
        (200, Some("INTERNAL"), Some("500"))
    );
    assert!(o.diagnostics.is_empty());
}

#[test]
fn bad_chunk_json_names_its_line() {
    let mut r = req(None);
    r.stream = true;
    let mut s = Stream::new(&r);
    let err = s
        .push(b"data: {\"candidates\": []}\r\n\r\ndata: {nope}\r\n\r\n")
        .unwrap_err();
    assert_eq!(err.line, Some(3));
    let mut s = Stream::new(&r);
    let err = s.push(b"[{}\n, x]").unwrap_err();
    assert_eq!((err.line, err.column), (Some(2), Some(3)));
}

#[test]
fn chunking_invariance_both_framings() {
    for body in [sse_body(), array_body()] {
        // Each body holds a multi-byte character, so splits inside UTF-8 are covered.
        assert!(body.contains('🌍'));
        let whole = stream_every_chunking(body.as_bytes(), || Stream::new(&stream_req())).unwrap();
        check_chunks_outcome(&whole);
    }
}

#[test]
fn synthetic_streams_decode() {
    let sse = synthetic_stream(20, 50);
    let o = decode_stream(sse.as_bytes(), &[]);
    assert_eq!(o.tool_calls.len(), 20);
    assert!(o.diagnostics.is_empty());
    assert_eq!(
        decode_stream(stream::synthetic_array(20, 50).as_bytes(), &[]),
        o
    );
    assert_eq!(decode_stream(sse.as_bytes(), &vec![1; sse.len()]), o);
}

// ---- Request decoding (`request.rs`) ----

fn gemini_request(path: &str, body: Value) -> crate::http::HttpRequest {
    crate::http::HttpRequest::post(path, body)
}

#[test]
fn decode_request_reads_the_path_ids_signatures_and_calling_modes() {
    let body = json!({
        "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Use tools."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {"role": "model", "parts": [
                {"text": "thinking…", "thought": true},
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "sig"},
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"result": "18C"}}},
                {"functionResponse": {"name": "get_weather", "response": {"error": "no data"}}}
            ]}
        ],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": {"type": "object"}},
                                            {"name": "ping"}]}],
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["get_weather", "ping"]}},
        "generationConfig": {"maxOutputTokens": 100, "temperature": 0, "thinkingConfig": {"thinkingBudget": 512}}
    });
    let path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent";
    let d = decode_request(&gemini_request(path, body)).unwrap();
    let r = &d.request;
    assert_eq!((r.model.as_str(), r.stream), ("gemini-3.8-flash", true));
    assert_eq!((r.max_tokens, r.thinking), (Some(100), Some(512)));
    assert_eq!(r.tools[1].parameters, crate::model::empty_parameters());
    assert_eq!(
        r.tool_choice,
        Some(crate::model::ToolChoice::Allowed {
            mode: crate::model::AllowedMode::Required,
            tools: vec!["get_weather".into(), "ping".into()]
        })
    );
    assert_eq!(r.messages.len(), 6);
    let Message::Assistant {
        tool_calls, opaque, ..
    } = &r.messages[3]
    else {
        panic!("{:?}", r.messages[3])
    };
    assert_eq!(opaque.len(), 1);
    assert_eq!(tool_calls[0].id, "gemini-call-0-get_weather");
    assert_eq!(tool_calls[0].thought_signature.as_deref(), Some("sig"));
    assert_eq!(tool_calls[1].id, "gemini-call-1-get_weather");
    assert_eq!(
        r.messages[4..],
        [
            weather_result("gemini-call-0-get_weather", "18C", false),
            weather_result("gemini-call-1-get_weather", "no data", true)
        ]
    );
    let pointers: Vec<&str> = d.extras.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/tools/0/functionDeclarations/0/parametersJsonSchema",
            "/tool_config/function_calling_config/mode",
            "/generationConfig/temperature"
        ]
    );
}

#[test]
fn decode_request_links_a_result_whose_id_no_call_has_by_name() {
    let body = json!({
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {"role": "model", "parts": [
                {"functionCall": {"id": "fc_1", "name": "get_time", "args": {}}},
                {"functionCall": {"id": "fc_2", "name": "get_weather", "args": {"city": "Paris"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "fc_1", "name": "get_time", "response": {"result": "noon"}}},
                {"functionResponse": {"id": "call_unknown", "name": "get_weather", "response": {"result": "18C"}}},
                {"functionResponse": {"id": "call_other", "name": "ping", "response": {"result": "pong"}}}
            ]}
        ]
    });
    let d = decode_request(&gemini_request("/v1beta/models/m:generateContent", body)).unwrap();
    let ids: Vec<&str> = d.request.messages[2..]
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    // A call's id links by id; an id no call has links by name; with no call of that name the
    // id is kept (nothing to link it to).
    assert_eq!(ids, ["fc_1", "fc_2", "call_other"]);
}

#[test]
fn decode_request_reads_any_with_one_name_as_forced() {
    let body = json!({"contents": [{"parts": [{"text": "x"}]}],
        "tools": [{"functionDeclarations": [{"name": "f"}]}, {"googleSearch": {}}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}}});
    let d = decode_request(&gemini_request("/v1beta/models/m:generateContent", body)).unwrap();
    assert_eq!(
        d.request.tool_choice,
        Some(crate::model::ToolChoice::Forced("f".into()))
    );
    assert!(!d.request.stream);
    assert_eq!(d.request.hosted.len(), 1);
}

#[test]
fn decode_request_errors_name_the_field() {
    let err = |path: &str, body: Value| request_error(decode_request, path, body);
    assert_eq!(
        err("/v1beta/models/m:countTokens", json!({})),
        "path: `/v1beta/models/m:countTokens` is not a Gemini path (…/models/MODEL:generateContent or :streamGenerateContent)"
    );
    assert_eq!(
        err("/v1beta/models/m:generateContent", json!({})),
        "/contents: missing (a generateContent request carries `contents`)"
    );
    assert_eq!(
        err(
            "/v1beta/models/m:generateContent",
            json!({"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}})
        ),
        "/toolConfig/functionCallingConfig/mode: unknown mode `SOMETIMES` (AUTO, ANY, NONE, VALIDATED)"
    );
}

#[test]
fn decode_request_reads_an_older_sdks_snake_case_request() {
    // As google-generativeai writes it: snake_case fields, a `function` role, the mode a number.
    let body = json!({
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": {"city": "Paris"}}}]},
            {"role": "function", "parts": [{"function_response": {"name": "get_weather", "response": {"result": "18C"}}}]}
        ],
        "tools": [{"function_declarations": [{"name": "get_weather", "description": "Weather",
            "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}],
        "tool_config": {"function_calling_config": {"mode": 2, "allowed_function_names": ["get_weather"]}},
        "generation_config": {"max_output_tokens": 100}
    });
    let d = decode_request(&gemini_request(
        "/v1beta/models/gemini-1.5-pro:generateContent",
        body,
    ))
    .unwrap();
    let r = &d.request;
    assert_eq!(r.model, "gemini-1.5-pro");
    assert_eq!(
        r.tool_choice,
        Some(ToolChoice::Forced("get_weather".into()))
    );
    assert_eq!(r.max_tokens, Some(100));
    assert_eq!(r.tools.len(), 1);
    assert_eq!(
        r.messages[0],
        Message::System {
            content: "Be brief.".into()
        }
    );
    let Message::Tool {
        call_id, content, ..
    } = &r.messages[3]
    else {
        panic!("{:?}", r.messages);
    };
    let Message::Assistant { tool_calls, .. } = &r.messages[2] else {
        panic!("{:?}", r.messages);
    };
    assert_eq!(call_id, &tool_calls[0].id);
    assert_eq!(content, "18C");
    let unknown: Vec<&str> = d
        .extras_of(crate::providers::ExtraKind::Unknown)
        .map(|e| e.pointer.as_str())
        .collect();
    assert!(unknown.is_empty(), "{unknown:?}");
    let err = decode_request(&gemini_request(
        "/v1beta/models/m:generateContent",
        json!({"contents": [], "tool_config": {"function_calling_config": {"mode": 9}}}),
    ))
    .unwrap_err();
    assert!(err.to_string().contains("unknown mode number 9"), "{err}");
}

#[test]
fn decode_request_takes_tools_as_one_object_or_a_list() {
    let tool = json!({"functionDeclarations": [{"name": "get_weather"}, {"name": "get_time"}]});
    let contents = json!([{"role": "user", "parts": [{"text": "hi"}]}]);
    let path = "/v1beta/models/m:generateContent";
    let one = decode_request(&gemini_request(
        path,
        json!({"contents": contents, "tools": tool}),
    ));
    let list = decode_request(&gemini_request(
        path,
        json!({"contents": contents, "tools": [tool]}),
    ));
    assert_eq!(one.unwrap().request.tools, list.unwrap().request.tools);
    let bad = json!({"contents": contents, "tools": "get_weather"});
    let e = decode_request(&gemini_request(path, bad)).unwrap_err();
    assert!(e.to_string().contains("/tools"), "{e}");
}

/// Gemini's `FunctionResponse.response`: an `error` key flags an error whatever sits beside it
/// (the whole object is then the result's text); `output` is the function's output.
#[test]
fn decode_request_reads_an_error_key_beside_others_and_an_output_key() {
    let body = json!({
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"name": "get_weather", "error": "no data"}}},
                {"functionResponse": {"name": "get_weather", "response": {"output": "18C"}}}
            ]}
        ]
    });
    let path = "/v1beta/models/gemini-3.8-flash:generateContent";
    let d = decode_request(&gemini_request(path, body)).unwrap();
    let results: Vec<(&str, bool)> = (d.request.messages.iter())
        .filter_map(|m| match m {
            Message::Tool {
                content, is_error, ..
            } => Some((content.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (r#"{"name":"get_weather","error":"no data"}"#, true),
            ("18C", false)
        ]
    );
}
