//! Encoder snapshot, the shared injection path, merge rules, and (once the Chat decoder lands)
//! decode / stream / CLI over raw Chat Completions bodies.

use serde_json::json;

use super::{Stream, decode, encode, merge, responses_request};
use crate::inject::developer_instructions;
use crate::model::{
    ChatRequest, Finish, HostedTool, Message, Outcome, StrictPolicy, Tool, ToolChoice,
};
use crate::providers::testkit::{response, weather_call, weather_result};
use crate::textcall::{ParserConfig, parse};

fn request() -> ChatRequest {
    ChatRequest::new("local-model")
        .with_messages([
            Message::System {
                content: "You are terse.".into(),
            },
            Message::User {
                content: "Weather in Oslo?".into(),
            },
            Message::Assistant { phase: None,
                text: Some("Checking.".into()),
                tool_calls: vec![weather_call("call_0", json!({"city": "Oslo"}))],
                opaque: vec![],
            },
            weather_result("call_0", "{\"temp\":3}", false),
            weather_result("call_\"1", "timeout", true),
        ])
        .with_user("Thanks")
        .with_tool(Tool { allowed_callers: Vec::new(), output_schema: None,
            name: "get_weather".into(),
            description: Some("Weather for a city.".into()),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            strict: Some(true),
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
        })
        .with_choice(ToolChoice::Required)
        .with_max_tokens(256)
        .with_strict(StrictPolicy::Auto)
}

#[test]
fn encode_snapshot() {
    let enc = encode(&request());
    let enc = enc.as_ref().map(|e| (&e.request, &e.notes));
    insta::assert_json_snapshot!("encode_request", enc.ok());
}

#[test]
fn encode_shares_the_injection_path() {
    let req = request();
    let enc = encode(&req).ok();
    let body = enc.map(|e| e.request.body).unwrap_or_default();
    let first = body
        .pointer("/messages/0/content")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    assert_eq!(first, developer_instructions(&responses_request(&req)));
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    let keys: Vec<&String> = body
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        ["model", "messages", "max_completion_tokens", "stream"]
    );
}

#[test]
fn encode_fails_closed_on_hosted_tools() {
    let mut req = request();
    req.hosted.push(HostedTool::WebSearch {
        grounding: Default::default(),
        variant: None,
    });
    assert_eq!(
        encode(&req).err().map(|e| e.code),
        Some("HOSTED_NOT_SUPPORTED".to_string())
    );
}

#[test]
fn merge_sets_tool_calls_finish_and_keeps_raw() {
    let chat = Outcome {
        text: Some("x".into()),
        finish: Finish::Stop,
        raw_finish: Some("stop".into()),
        ..Outcome::default()
    };
    let config = ParserConfig::from_request(&responses_request(&request()));
    let parsed = parse(
        &config,
        "Hi <tool_call>{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}</tool_call>",
    );
    let out = merge(chat.clone(), parsed);
    assert_eq!(
        (out.finish, out.raw_finish.as_deref(), out.text.as_deref()),
        (Finish::ToolCalls, Some("stop"), Some("Hi "))
    );
    assert_eq!(out.tool_calls.len(), 1);
    let out = merge(chat, parse(&config, "no calls"));
    assert_eq!(
        (out.finish, out.text.as_deref()),
        (Finish::Stop, Some("no calls"))
    );
}

/// What SmolLM2-135M wrote through llama-server (11434.0.0) on the text protocol, recorded on
/// 2026-12-03 (`tooltape server llama-cpp ::text-protocol::`, c05_no_params_empty_object, auto,
/// buffered): two whole calls, then the output-token limit cut a third after its name's quote.
/// The calls were handed over with finish `tool_calls`, as if the turn were whole.
const SMOLLM2_CUT: &str = "The server time is always provided.\n\nExample (exact):\n<tool_call>{\"name\":\"get_time\",\"arguments\":\"{}\"}</tool_call>\n\nThe server time is always provided.\n\nExample (exact):\n<tool_call>{\"name\":\"get_time\",\"arguments\":\"{}\"}</tool_call>\n\nThe server time is always provided.\n\nExample (exact):\n<tool_call>{\"name\":\"";

#[test]
fn a_real_models_call_cut_by_the_limit_keeps_the_length_finish() {
    let mut req = request();
    req.tools[0].name = "get_time".into();
    req.tools[0].parameters = json!({"type": "object", "properties": {}});
    let body = json!({"choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": SMOLLM2_CUT}}]});
    let out = decode(&req, &response(200, &body.to_string())).unwrap_or_default();
    assert_eq!(
        (out.finish, out.raw_finish.as_deref()),
        (Finish::Length, Some("length"))
    );
    let names: Vec<&str> = out.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_time", "get_time"]);
    assert!(out.tool_calls.iter().all(|c| c.arguments == json!({})));
    let kinds: Vec<_> = out.diagnostics.iter().map(|d| d.kind).collect();
    assert!(
        kinds.contains(&crate::model::DiagnosticKind::TruncatedCall),
        "{kinds:?}"
    );
}

// The tests below go through the Chat decoder (`openai_chat::decode` / `openai_chat::Stream`).

const CHAT_BODY: &str = r#"{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"On it. <tool_call>{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}</tool_call>"}}]}"#;

fn sse_body() -> String {
    let pieces = [
        "On it. <tool_",
        "call>{\"name\":\"get_weather\",",
        "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}</tool_call>",
    ];
    let mut s = String::new();
    for p in pieces {
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]});
        s.push_str(&format!("data: {chunk}\n\n"));
    }
    s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    s
}

#[test]
fn decode_parses_chat_text() {
    let resp = response(200, CHAT_BODY);
    let out = decode(&request(), &resp).unwrap_or_default();
    assert_eq!(out.finish, Finish::ToolCalls);
    assert_eq!(out.raw_finish.as_deref(), Some("stop"));
    assert_eq!(out.text.as_deref(), Some("On it. "));
    assert_eq!(
        out.tool_calls.first().map(|c| c.arguments.clone()),
        Some(json!({"city": "Oslo"}))
    );
}

#[test]
fn stream_equals_buffered_for_every_chunking() {
    let mut req = request();
    req.stream = true;
    let body = sse_body();
    let whole = {
        let mut s = Stream::new(&req);
        let _ = s.push(body.as_bytes());
        s.finish().unwrap_or_default()
    };
    assert_eq!(whole.tool_calls.len(), 1);
    for n in [1, 2, 7, 64] {
        let mut s = Stream::new(&req);
        for c in body.as_bytes().chunks(n) {
            let _ = s.push(c);
            assert!(
                !s.text_so_far().contains('<'),
                "no tag prefix is ever released"
            );
        }
        assert_eq!(s.finish().unwrap_or_default(), whole, "chunks of {n}");
    }
}
