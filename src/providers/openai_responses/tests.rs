//! Tests of the Responses codec: encoding, buffered output items, status mapping, event streams,
//! chunking invariance.

use serde_json::{Value, json};

use super::*;
use crate::model::{AllowedMode, Finish, Grounding, Outcome, ToolChoice};
use crate::model::{ChatRequest, DecodeError, DiagnosticKind};
use crate::providers::testkit::{
    assert_noted, ids_and_arguments, openai_string_choices, request, request_error,
    response as resp, stream_every_chunking, weather_call, weather_result,
};

fn body(req: &ChatRequest) -> Value {
    encode(req).unwrap().request.body
}

fn stream_outcome(body: &str) -> Result<Outcome, DecodeError> {
    let req = request(&["get_weather"], true);
    stream_every_chunking(body.as_bytes(), || Stream::new(&req))
}

/// `event: <type>` + `data:` framing, as OpenAI sends it.
fn events(datas: &[&str]) -> String {
    datas
        .iter()
        .map(|d| {
            let v: Value = serde_json::from_str(d).unwrap();
            format!("event: {}\ndata: {d}\n\n", v["type"].as_str().unwrap())
        })
        .collect()
}

#[test]
fn encode_keys_instructions_input_and_tools() {
    let mut req = request(&["get_weather"], true);
    req.messages = vec![
        Message::System {
            content: "A".into(),
        },
        Message::Developer {
            content: "dev".into(),
        },
        Message::User {
            content: "hi".into(),
        },
        Message::System {
            content: "B".into(),
        },
        Message::Assistant {
            phase: None,
            text: Some("Checking.".into()),
            tool_calls: vec![weather_call("call_1", json!({"city": "Paris"}))],
            opaque: vec![json!({"type": "reasoning", "id": "rs_1", "summary": []})],
        },
        weather_result("call_1", "18C", true),
    ];
    req.tool_choice = Some(ToolChoice::Required);
    req.parallel_tool_calls = Some(false);
    req.max_tokens = Some(64);
    req.hosted = vec![HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: None,
    }];
    let enc = encode(&req).unwrap();
    let b = &enc.request.body;
    assert_eq!(enc.request.path, "/v1/responses");
    let keys: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "model",
            "instructions",
            "input",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "max_output_tokens",
            "stream",
            "stream_options"
        ]
    );
    assert_eq!(b["instructions"], "A\n\nB");
    assert_eq!(
        b["input"],
        json!([
            {"role": "developer", "content": "dev"},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
        ])
    );
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(b["tools"][0]["name"], "get_weather");
    assert_eq!(
        b["tools"][0]["strict"], true,
        "Responses tools go strict whenever the schema allows"
    );
    assert_eq!(b["tools"][1], json!({"type": "web_search"}));
    assert_eq!(b["stream_options"], json!({"include_obfuscation": false}));
    assert_noted(&enc.notes, "error");

    req.stream = false;
    req.hosted = vec![HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: Some("web_search_preview".into()),
    }];
    let buffered = body(&req);
    assert_eq!(
        buffered["tools"][0], b["tools"][0],
        "tools forwarded when not streaming"
    );
    assert_eq!(buffered["tools"][1], json!({"type": "web_search_preview"}));
    assert!(buffered.get("stream").is_none());
}

#[test]
fn encode_tool_choice_forms_and_fail_closed() {
    let mut req = request(&["a", "b"], false);
    let cases = openai_string_choices().into_iter().chain([
        (
            ToolChoice::Forced("a".into()),
            json!({"type": "function", "name": "a"}),
        ),
        (
            ToolChoice::Allowed {
                mode: AllowedMode::Auto,
                tools: vec!["a".into(), "b".into()],
            },
            json!({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "a"}, {"type": "function", "name": "b"}]}),
        ),
    ]);
    for (c, want) in cases {
        req.tool_choice = Some(c);
        assert_eq!(body(&req)["tool_choice"], want);
    }
    req.tool_choice = Some(ToolChoice::Forced("nope".into()));
    assert_eq!(encode(&req).unwrap_err().code, "TOOL_CHOICE_UNKNOWN_TOOL");
    let mut req = request(&[], false);
    req.tool_choice = Some(ToolChoice::Required);
    assert_eq!(encode(&req).unwrap_err().code, "TOOL_CHOICE_WITHOUT_TOOLS");
    req.hosted = vec![HostedTool::WebSearch {
        grounding: Grounding::Auto,
        variant: None,
    }];
    assert_eq!(
        body(&req)["tool_choice"],
        "required",
        "hosted tools alone allow a choice"
    );
}

#[test]
fn decode_buffered_items_reasoning_hosted() {
    let req = request(&["get_weather"], false);
    let b = r#"{"id":"resp_1","status":"completed","model":"gpt-5","error":null,"incomplete_details":null,
      "tools":[{"type":"web_search"},{"type":"function","name":"get_weather"}],
      "output":[
        {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"xyz"},
        {"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"paris","sources":[{"url":"a"},{"url":"b"}]}},
        {"type":"message","id":"msg_1","role":"assistant","content":[
          {"type":"output_text","text":"Paris is ","annotations":[{"type":"url_citation","url":"https://x.test/a","title":"A"}]},
          {"type":"output_text","text":"sunny.","annotations":[]}]},
        {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
        {"type":"function_call","id":"fc_2","call_id":"call_2","name":"get_weather","arguments":""}],
      "usage":{"input_tokens":10,"output_tokens":20,"total_tokens":30}}"#;
    let o = decode(&req, &resp(200, b)).unwrap();
    assert_eq!(
        ids_and_arguments(&o),
        [
            ("call_1", &json!({"city": "Paris"})),
            ("call_2", &json!({}))
        ]
    );
    assert_eq!(o.text.as_deref(), Some("Paris is sunny."));
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("completed"))
    );
    assert_eq!(
        o.opaque,
        vec![json!({"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"xyz"})]
    );
    let h = o.hosted.unwrap();
    assert_eq!(
        (h.search_calls, h.search_results, h.tool_type.as_deref()),
        (1, 2, Some("web_search"))
    );
    assert_eq!(h.citations, ["https://x.test/a"]);
    assert_eq!(o.usage.unwrap().output_tokens, Some(20));
    assert_eq!(o.model.as_deref(), Some("gpt-5"));
}

#[test]
fn decode_buffered_status_mapping_and_errors() {
    let req = request(&[], false);
    let cases = [
        (r#"{"status":"completed","output":[]}"#, Finish::Stop),
        (
            r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#,
            Finish::Length,
        ),
        (
            r#"{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}"#,
            Finish::ContentFilter,
        ),
        (r#"{"status":"cancelled","output":[]}"#, Finish::Other),
    ];
    for (b, finish) in cases {
        assert_eq!(decode(&req, &resp(200, b)).unwrap().finish, finish, "{b}");
    }
    let o = decode(
        &req,
        &resp(
            200,
            r#"{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#,
        ),
    )
    .unwrap();
    let e = o.error.unwrap();
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::Other, Some("failed"))
    );
    assert_eq!(
        (e.status, e.code.as_deref(), e.message.as_str()),
        (200, Some("server_error"), "boom")
    );

    let mut r = resp(
        429,
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
    );
    r.headers.insert("retry-after".into(), "1.5".into());
    let e = decode(&req, &r).unwrap().error.unwrap();
    assert_eq!(
        (e.status, e.kind.as_deref(), e.retry_after_ms),
        (429, Some("insufficient_quota"), Some(1500))
    );
    let err = decode(&req, &resp(200, "{\"output\": [}")).unwrap_err();
    assert_eq!(err.line, Some(1));
}

const ADDED: &str = r#"{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"get_weather"}}"#;
const ADDED2: &str = r#"{"type":"response.output_item.added","sequence_number":3,"output_index":1,"item":{"id":"fc_2","type":"function_call","arguments":"","call_id":"call_2","name":"get_weather"}}"#;

#[test]
fn stream_parallel_calls_text_and_completed() {
    let body = events(&[
        r#"{"type":"response.created","sequence_number":0,"response":{"status":"in_progress","model":"gpt-4o","output":[]}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","content":[]}}"#,
        r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Looking ","obfuscation":"x"}"#,
        r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"ü up."}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","content":[{"type":"output_text","text":"Looking ü up.","annotations":[]}]}}"#,
        &ADDED.replace("\"output_index\":0", "\"output_index\":1"),
        &ADDED2.replace("\"output_index\":1", "\"output_index\":2"),
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"city\":"}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":2,"delta":"{\"city\":\"Rome\"}"}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"\"東京\"}"}"#,
        r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"city\":\"東京\"}"}"#,
        r#"{"type":"response.some_future_event","sequence_number":9,"delta":{"nested":[1,2]}}"#,
        r#"{"type":"response.completed","response":{"status":"completed","model":"gpt-4o","output":[],"usage":{"input_tokens":3,"output_tokens":4}}}"#,
    ]);
    let o = stream_outcome(&body).unwrap();
    assert_eq!(
        ids_and_arguments(&o),
        [
            ("call_1", &json!({"city": "東京"})),
            ("call_2", &json!({"city": "Rome"}))
        ]
    );
    assert_eq!(o.text.as_deref(), Some("Looking ü up."));
    assert_eq!(
        (o.finish, o.raw_finish.as_deref()),
        (Finish::ToolCalls, Some("completed"))
    );
    assert_eq!(o.usage.unwrap().input_tokens, Some(3));
    assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
}

#[test]
fn stream_done_and_snapshot_fill_in_what_deltas_did_not_deliver() {
    // No deltas: the `.done` arguments are used.
    let body = events(&[
        ADDED,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"{\"city\":\"Oslo\"}","call_id":"call_1","name":"get_weather"}}"#,
        r#"{"type":"response.completed","response":{"status":"completed","output":[]}}"#,
    ]);
    assert_eq!(
        stream_outcome(&body).unwrap().tool_calls[0].arguments,
        json!({"city": "Oslo"})
    );
    // Only the snapshot (a gateway): its items are used; reasoning goes to opaque. With `[DONE]`.
    let body = events(&[
        r#"{"type":"response.completed","response":{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"function_call","id":"fc_9","call_id":"call_9","name":"get_weather","arguments":"{}"}]}}"#,
    ]) + "data: [DONE]\n\n";
    let o = stream_outcome(&body).unwrap();
    assert_eq!((o.tool_calls[0].id.as_str(), o.opaque.len()), ("call_9", 1));
}

#[test]
fn stream_errors_failed_and_truncation() {
    let body = events(&[
        r#"{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota","param":null}}"#,
        r#"{"type":"response.failed","sequence_number":3,"response":{"status":"failed","error":{"code":"insufficient_quota","message":"quota"},"output":[]}}"#,
    ]);
    let o = stream_outcome(&body).unwrap();
    let e = o.error.unwrap();
    assert_eq!(
        (e.status, e.kind.as_deref(), e.message.as_str()),
        (
            200,
            Some("insufficient_quota"),
            "You exceeded your current quota"
        )
    );
    assert_eq!(o.raw_finish.as_deref(), Some("failed"));

    let flat = events(&[
        r#"{"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":1}"#,
    ]);
    let e = stream_outcome(&flat).unwrap().error.unwrap();
    assert_eq!(
        (e.kind, e.code.as_deref(), e.message.as_str()),
        (None, Some("server_error"), "boom")
    );

    // Opened (a stream needs `response.created` or a terminal event), then cut.
    let cut = events(&[
        r#"{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}"#,
        ADDED,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"ci"}"#,
    ]);
    let o = stream_outcome(&cut).unwrap();
    let kinds: Vec<DiagnosticKind> = o.diagnostics.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [
            DiagnosticKind::InvalidArgumentsJson,
            DiagnosticKind::StreamTruncated
        ]
    );
    assert_eq!(o.tool_calls[0].id, "call_1");

    let bad = "event: response.created\ndata: {\"type\": }\n\n";
    assert_eq!(stream_outcome(bad).unwrap_err().line, Some(2));
}

#[test]
fn synthetic_stream_decodes_every_call() {
    let o = stream_outcome(&synthetic_stream(3, 7)).unwrap();
    assert_eq!(o.tool_calls.len(), 3);
    assert_eq!(o.tool_calls[2].id, format!("call_{:020}", 2));
    assert!(o.diagnostics.is_empty());
}

// ---- Request decoding (`request.rs`) ----

#[test]
fn decode_request_groups_an_assistant_turn_and_links_outputs() {
    let body = json!({
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xyz"},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}", "id": "fc_1"},
            {"type": "function_call_output", "call_id": "c1", "output": "18C"}
        ],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": false},
                  {"type": "web_search_preview"}],
        "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]},
        "max_output_tokens": 50,
        "reasoning": {"effort": "low"}
    });
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    let r = &d.request;
    assert_eq!(
        r.messages[0],
        crate::model::Message::System {
            content: "Be brief.".into()
        }
    );
    let crate::model::Message::Assistant {
        text,
        tool_calls,
        opaque,
        ..
    } = &r.messages[2]
    else {
        panic!("{:?}", r.messages[2])
    };
    assert_eq!((text, opaque.len()), (&None, 1));
    assert_eq!(tool_calls[0].id, "c1");
    assert!(
        matches!(&r.messages[3], crate::model::Message::Tool { call_id, name, .. } if call_id == "c1" && name == "get_weather")
    );
    assert_eq!(r.tools[0].strict, Some(false));
    assert_eq!(
        r.hosted,
        [crate::model::HostedTool::WebSearch {
            grounding: Grounding::Auto,
            variant: Some("web_search_preview".into())
        }]
    );
    assert_eq!(
        r.tool_choice,
        Some(ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            tools: vec!["get_weather".into()]
        })
    );
    assert_eq!(r.max_tokens, Some(50));
    let pointers: Vec<&str> = d.extras.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(pointers, ["/input/2/id", "/tools/0/strict", "/reasoning"]);
}

#[test]
fn decode_request_keeps_an_item_reference_in_the_turn_it_stands_in() {
    // What the AI SDK sends with `store: true`: the reasoning item by reference, the call whole.
    let sent = json!({"model": "gpt-5", "store": true, "input": [
        {"role": "user", "content": "Weather?"},
        {"type": "item_reference", "id": "rs_1"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "18C"}
    ]});
    let d = decode_request(&HttpRequest::post(PATH, sent)).unwrap();
    let crate::model::Message::Assistant {
        tool_calls, opaque, ..
    } = &d.request.messages[1]
    else {
        panic!("{:?}", d.request.messages)
    };
    assert_eq!(opaque, &[json!({"type": "item_reference", "id": "rs_1"})]);
    assert_eq!(tool_calls[0].id, "c1");
    assert!(d.extras.iter().all(|e| !e.pointer.starts_with("/input")));
    // Encoded again to Responses, the reference goes back as it came, before the call.
    let input = body(&d.request)["input"].clone();
    assert_eq!(input[1], json!({"type": "item_reference", "id": "rs_1"}));
    assert_eq!(input[2]["type"], "function_call");
}

#[test]
fn decode_request_reads_a_hosted_tool_choice_as_required_grounding() {
    let body = json!({"model": "gpt-4.1", "input": "Search it.",
        "tools": [{"type": "web_search_preview"}], "tool_choice": {"type": "web_search_preview"}});
    let d = decode_request(&HttpRequest::post(PATH, body)).unwrap();
    assert_eq!(d.request.tool_choice, None);
    assert!(crate::capability::grounding_required(&d.request));
    assert_eq!(
        d.request.messages,
        [crate::model::Message::User {
            content: "Search it.".into()
        }]
    );
}

#[test]
fn decode_request_errors_name_the_field() {
    let err = |body: Value| request_error(decode_request, PATH, body);
    assert_eq!(
        err(json!({"model": "m", "input": [{"type": "function_call", "name": "f"}]})),
        "/input/0/call_id: missing (a function call has a call_id)"
    );
    assert_eq!(
        err(json!({"model": "m", "input": 3})),
        "/input: expected a string or an array of items, found a number"
    );
}

#[test]
fn under_max_output_tokens_an_unfinished_or_incomplete_last_call_is_withdrawn() {
    let req = request(&[], false);
    let body = |args: &str, status: &str| {
        json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
               "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
             "arguments": "{\"city\":\"Kingston\"}", "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather",
             "arguments": args, "status": status}]})
        .to_string()
    };
    for (args, status, withdrawn) in [
        ("{\"city\":\"Por", "incomplete", true),
        ("{}", "incomplete", true),
        ("{\"city\":\"Por", "completed", true),
        ("{\"city\":\"Lima\"}", "completed", false),
    ] {
        let o = decode(&req, &resp(200, &body(args, status))).unwrap();
        assert_eq!(o.finish, Finish::Length);
        assert_eq!(
            o.tool_calls.len(),
            if withdrawn { 1 } else { 2 },
            "{args} {status}"
        );
        let cut = o.truncated_call.map(|c| (c.id, c.arguments));
        if withdrawn {
            assert_eq!(cut, Some(("call_2".to_string(), args.to_string())));
            assert_eq!(o.diagnostics.len(), 1);
            assert_eq!(o.diagnostics[0].kind, DiagnosticKind::TruncatedCall);
        } else {
            assert_eq!(cut, None);
            assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
        }
    }
}

#[test]
fn a_round_continued_by_id_keeps_only_what_follows_the_models_turn() {
    let mut body = serde_json::json!({"model": "m", "input": [
        {"role": "user", "content": "Umbrella?"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "rain"},
    ]});
    let mut referred = body.clone();
    super::continue_from(&mut body, "resp_1");
    assert_eq!(body["previous_response_id"], "resp_1");
    // A reference to a stored item is of the model's turn too: cut with it.
    referred["input"][1] = serde_json::json!({"type": "item_reference", "id": "rs_1"});
    super::continue_from(&mut referred, "resp_1");
    assert_eq!(referred["input"], body["input"]);
    assert_eq!(
        body["input"],
        serde_json::json!([{"type": "function_call_output", "call_id": "call_1", "output": "rain"}])
    );
}

#[test]
fn the_response_id_is_read_from_a_body_or_a_stream() {
    assert_eq!(
        super::response_id(br#"{"id": "resp_a", "object": "response"}"#).as_deref(),
        Some("resp_a")
    );
    let stream = b"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_b\"}}\n\n";
    assert_eq!(super::response_id(stream).as_deref(), Some("resp_b"));
    assert_eq!(super::response_id(b"data: [DONE]\n\n"), None);
}

#[test]
fn reasoning_referred_to_by_id_is_sent_as_an_item_reference_with_store() {
    let mut body = serde_json::json!({"model": "m", "input": [
        {"role": "user", "content": "Umbrella?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
    ]});
    super::refer_to_reasoning(&mut body);
    assert_eq!(body["store"], true);
    assert_eq!(
        body["input"][1],
        json!({"type": "item_reference", "id": "rs_1"})
    );
    // Other items go whole, as the Vercel AI SDK sends client-executed calls.
    assert_eq!(body["input"][2]["type"], "function_call");
}
