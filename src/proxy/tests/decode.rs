//! Phase 1 and 2 of a request: the route table gives the inbound format, the body is read within
//! the limits, and every refusal (no route, wrong method, a body not read whole, bad text, bad
//! JSON, what the client's own API rejects, an unrouted model) is answered in the client's
//! envelope before anything goes upstream.

use std::time::Duration;

use serde_json::{Value, json};

use super::{config, config_with, header, post, request, whole};
use crate::loopback::{BodyError, Request, parse_query};
use crate::proxy::Proxy;
use crate::proxy::answer::Headers;
use crate::proxy::forward::{self, Shared};
use crate::proxy::inbound;
use crate::proxy::read::{nested_deeper, text_problem};
use crate::respond::Inbound;
use crate::run::SupportCache;
use crate::simulate::{SimConfig, Simulator};

/// The answer `forward::decode` refuses `req` with.
fn refused(req: &Request) -> (u16, Headers, Value) {
    whole(forward::decode(&config(), req).unwrap_err())
}

#[test]
fn each_api_path_decodes_to_its_inbound_format() {
    let route = |method: &str, target: &str| {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        inbound::format_of(method, path, &parse_query(query))
    };
    assert_eq!(route("POST", "/v1/chat/completions"), Some(Inbound::Chat));
    assert_eq!(route("POST", "/chat/completions"), Some(Inbound::Chat));
    assert_eq!(route("POST", "/v1/responses"), Some(Inbound::Responses));
    assert_eq!(route("POST", "/v1/messages"), Some(Inbound::Messages));
    let gemini = "/v1beta/models/m:streamGenerateContent";
    assert_eq!(route("POST", gemini), Some(Inbound::Gemini { sse: false }));
    assert_eq!(
        route("POST", &format!("{gemini}?alt=sse")),
        Some(Inbound::Gemini { sse: true })
    );
    // The query arrives percent-decoded: an encoded `alt=sse` is still SSE.
    assert_eq!(
        route("POST", &format!("{gemini}?alt=%73se")),
        Some(Inbound::Gemini { sse: true })
    );
    assert_eq!(route("POST", "/v1/embeddings"), None);
}

#[test]
fn an_unrouted_path_or_method_is_404_and_a_lower_case_post_405_in_the_route_s_envelope() {
    let (status, _, v) = refused(&post("/v2/nothing", &json!({})));
    assert_eq!(status, 404);
    assert_eq!(v["error"]["message"], "no such endpoint: /v2/nothing");
    // The route table serves POST only: a GET is no endpoint at all (Chat's envelope).
    let get = request("GET", "/v1/messages", Ok(b""));
    let (status, _, v) = refused(&get);
    assert_eq!(status, 404);
    assert_eq!(v["error"]["message"], "no such endpoint: /v1/messages");
    // The table matches methods without case; HTTP methods have case: `post` is not POST.
    let lower = request("post", "/v1/messages", Ok(b"{}"));
    let (status, _, v) = refused(&lower);
    assert_eq!(status, 405);
    assert_eq!(v["type"], "error", "Anthropic's envelope: {v}");
    assert_eq!(
        v["error"]["message"],
        "post is not allowed on /v1/messages: use POST"
    );
}

#[test]
fn a_body_not_read_whole_gets_its_status_and_the_limit_s_key_in_the_client_envelope() {
    let cases = [
        (
            BodyError::TooLarge(10),
            413,
            "over the limit of 10 bytes (max_body_bytes)",
        ),
        (
            BodyError::Timeout(Duration::from_millis(7)),
            408,
            "within 7 ms (body_timeout_ms)",
        ),
        (
            BodyError::Broken("reset".into()),
            400,
            "could not be read: reset",
        ),
    ];
    for (e, want_status, want_message) in cases {
        let req = request("POST", "/v1beta/models/to-gemini:generateContent", Err(e));
        let (status, _, v) = refused(&req);
        assert_eq!(status, want_status);
        assert_eq!(v["error"]["code"], want_status, "Gemini's envelope: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(want_message), "{message}");
    }
}

#[test]
fn nesting_is_counted_outside_strings_and_utf8_checked_first() {
    assert_eq!(nested_deeper(br#"{"a":[[1]]}"#, 3), None);
    assert_eq!(nested_deeper(br#"{"a":[[1]]}"#, 2), Some(6));
    // Brackets in strings, escaped quotes included, are text.
    assert_eq!(nested_deeper(br#"{"a":"[[[\"[[[","b":1}"#, 1), None);
    assert_eq!(nested_deeper(br#"{"a":"\\",  "b":[1]}"#, 1), Some(16));
    let deep = format!("{}{}", "[".repeat(5), "]".repeat(5));
    let problem = text_problem(deep.as_bytes(), 4).unwrap();
    assert!(
        problem.contains("deeper than 4 levels (at byte 4; max_json_depth)"),
        "{problem}"
    );
    let problem = text_problem(b"{\"a\":\"caf\xe9\"}", 64).unwrap();
    assert!(problem.contains("not valid UTF-8 (at byte 9)"), "{problem}");
    assert_eq!(text_problem(b"{\"a\":\"caf\xc3\xa9\"}", 64), None);
}

#[test]
fn bad_json_and_a_bad_field_are_400_naming_what_is_wrong() {
    let req = request("POST", "/v1/chat/completions", Ok(b"{\"model\":"));
    let (status, _, v) = refused(&req);
    assert_eq!(status, 400);
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the request body is not valid JSON"),
        "{message}"
    );
    let bad = json!({"model": "to-chat", "messages": "hello"});
    let (status, _, v) = refused(&post("/v1/chat/completions", &bad));
    assert_eq!(status, 400);
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("invalid request: ") && message.contains("messages"),
        "{message}"
    );
}

#[test]
fn a_tool_the_neutral_request_cannot_carry_is_refused_naming_it_never_dropped() {
    let weather = json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}});
    let grammar = json!({"type": "grammar",
        "grammar": {"syntax": "lark", "definition": "start: /[0-9]+/"}});
    let chat = json!({"model": "to-chat", "messages": [{"role": "user", "content": "hi"}],
        "tools": [weather, {"type": "custom", "custom": {"name": "calc", "format": grammar}}]});
    let responses = json!({"model": "to-chat", "input": "hi",
        "tools": [{"type": "custom", "name": "calc", "format": {"type": "text"}}]});
    let messages = json!({"model": "to-anthropic", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]});
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"codeExecution": {}}]});
    for (target, body, says) in [
        (
            "/v1/chat/completions",
            chat,
            "/tools/1: a `custom` tool `calc`",
        ),
        (
            "/v1/responses",
            responses,
            "/tools/0: a `custom` tool `calc`",
        ),
        (
            "/v1/messages",
            messages,
            "/tools/0: a `web_fetch_20250910` tool `web_fetch`",
        ),
        (
            "/v1beta/models/to-gemini:generateContent",
            gemini,
            "/tools/0/codeExecution: a `codeExecution` tool",
        ),
    ] {
        let (status, _, v) = refused(&post(target, &body));
        assert_eq!(status, 400, "{target}: {v}");
        let message = v.pointer("/error/message").and_then(Value::as_str);
        assert!(message.is_some_and(|m| m.contains(says)), "{target}: {v}");
    }
    // Hosted web search is carried: refused or sent by the route's encoder, not here.
    let search = json!({"model": "to-chat", "input": "hi", "tools": [{"type": "web_search"}]});
    assert!(forward::decode(&config(), &post("/v1/responses", &search)).is_ok());
}

#[test]
fn an_anthropic_tool_change_becomes_the_tools_in_force_or_is_refused_naming_it() {
    // Class 26: a system message's tool_removal/tool_addition (by reference to a deferred tool,
    // by inline definition) are the tools the target's request lists; a change the neutral
    // request cannot carry (an MCP toolset) is refused, never dropped.
    let tool = |name: &str| json!({"name": name, "input_schema": {"type": "object"}});
    let mut deferred = tool("get_time");
    deferred["defer_loading"] = json!(true);
    let change = |blocks: Value| {
        json!({"model": "to-chat", "max_tokens": 10,
            "tools": [tool("get_weather"), deferred.clone()],
            "messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": blocks}]})
    };
    let folded = change(json!([
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}},
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_time"}},
        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": tool("lookup")}}]));
    let Ok((_, req, _)) = forward::decode(&config(), &post("/v1/messages", &folded)) else {
        panic!("refused");
    };
    let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_time", "lookup"]);
    let mcp = change(json!([{"type": "tool_addition",
        "tool": {"type": "mcp_toolset_reference", "server_name": "git"}}]));
    let (status, _, v) = refused(&post("/v1/messages", &mcp));
    assert_eq!(status, 400, "{v}");
    let message = v.pointer("/error/message").and_then(Value::as_str);
    assert!(
        message.is_some_and(|m| m.contains("/messages/1/content/0: a `tool_addition` tool")),
        "{v}"
    );
}

#[test]
fn what_the_client_s_own_api_rejects_is_refused_in_its_envelope() {
    // A tool result answering no call, where the format links results by id.
    let chat = json!({"model": "to-chat", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_nowhere", "content": "r"}
    ]});
    let messages = json!({"model": "to-anthropic", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "r"}]}
    ]});
    for (target, body, envelope) in [
        ("/v1/chat/completions", chat, "/error/type"),
        ("/v1/messages", messages, "/type"),
    ] {
        let (status, headers, v) = refused(&post(target, &body));
        assert_eq!(status, 400, "{v}");
        let mark = header(&headers, "x-tooltape-refused");
        assert_eq!(mark, Some("CLIENT_REQUEST"), "{target}");
        let message = v.pointer("/error/message").and_then(Value::as_str);
        assert!(message.is_some_and(|m| !m.is_empty()), "{v}");
        let kind = v.pointer(envelope).and_then(Value::as_str);
        let want = if target == "/v1/messages" {
            "error"
        } else {
            "invalid_request_error"
        };
        assert_eq!(kind, Some(want), "{target}'s own envelope: {v}");
    }
}

#[tokio::test]
async fn an_unrouted_model_is_404_in_the_client_envelope_and_health_is_answered() {
    let shared = Shared {
        config: config().into(),
        upstream: crate::proxy::upstream::UpstreamClient::new(Duration::from_secs(5)),
        cache: SupportCache::new(SupportCache::DEFAULT_TTL).into(),
        reasoning: Default::default(),
        conversations: Default::default(),
    };
    let body = json!({"model": "nobody", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, v) = whole(forward::answer(&shared, &post("/v1/messages", &body)).await);
    assert_eq!(status, 404);
    assert_eq!(v["type"], "error", "{v}");
    assert_eq!(
        v["error"]["message"],
        "model `nobody` is not routed by this proxy"
    );
    let (status, _, v) = whole(forward::answer(&shared, &request("GET", "/health", Ok(b""))).await);
    assert_eq!((status, v), (200, json!({"status": "ok"})));
}

#[tokio::test]
async fn a_percent_encoded_alt_sse_streams_as_server_sent_events() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config_with(&sim.base_url())).await.unwrap();
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "What is the weather?"}]}]});
    let url = format!(
        "{}/v1beta/models/to-gemini:streamGenerateContent?alt=%73se",
        proxy.base_url()
    );
    let resp = crate::run::client(Duration::from_secs(10))
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let ctype = resp.headers()["content-type"].to_str().unwrap().to_string();
    let text = resp.text().await.unwrap();
    // Not Gemini's JSON array (`application/json`, opening with `[`).
    assert!(ctype.starts_with("text/event-stream"), "{ctype}: {text}");
    assert!(text.starts_with("data: {"), "{text}");
}
