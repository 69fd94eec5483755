//! Deferred tools, tool search and namespaces: read by the Anthropic and Responses request
//! decoders, written back by their encoders (decode(encode(x)) == x), refused by the targets that
//! cannot express them; Anthropic's class 26 reading (no tool-search tool) unchanged.

use serde_json::{Value, json};

use super::*;
use crate::http::HttpRequest;
use crate::model::{Message, Tool};
use crate::providers::testkit::{q_tool, response};
use crate::providers::{DecodedRequest, anthropic, encode, openai_responses};

const REGEX: &str = "tool_search_tool_regex_20251119";
const BM25: &str = "tool_search_tool_bm25_20251119";

fn deferred(name: &str) -> Tool {
    Tool {
        defer_loading: true,
        ..q_tool(name)
    }
}

fn search(variant: &str) -> HostedTool {
    HostedTool::ToolSearch {
        variant: variant.into(),
    }
}

/// A request declaring `get_time` loaded, `get_weather` and `lookup` deferred, and `variant`.
fn searching(model: &str, variant: &str) -> ChatRequest {
    let mut r = ChatRequest::new(model)
        .with_user("Weather in Split?")
        .with_tools([
            q_tool("get_time"),
            deferred("get_weather"),
            deferred("lookup"),
        ])
        .with_hosted(search(variant))
        .with_max_tokens(200);
    if variant == RESPONSES_TYPE {
        // Responses sends an unset `strict` as an explicit false.
        for t in &mut r.tools {
            t.strict = Some(false);
        }
    }
    r
}

fn wire(provider: Provider, r: &ChatRequest) -> HttpRequest {
    encode(provider, r).unwrap().request
}

fn decoded(provider: Provider, body: Value) -> DecodedRequest {
    let path = match provider {
        Provider::Anthropic => anthropic::PATH,
        _ => openai_responses::PATH,
    };
    let req = HttpRequest::post(path, body);
    crate::providers::decode_request(provider, &req).unwrap()
}

/// A Messages request asking "Hi" with `tools`, decoded.
fn messages_with(tools: &Value) -> DecodedRequest {
    decoded(
        Provider::Anthropic,
        json!({"model": "claude-opus-4-8", "max_tokens": 10,
        "messages": [{"role": "user", "content": "Hi"}], "tools": tools}),
    )
}

fn names(r: &ChatRequest) -> Vec<(&str, bool)> {
    (r.tools.iter())
        .map(|t| (t.name.as_str(), t.defer_loading))
        .collect()
}

#[test]
fn anthropic_writes_deferred_tools_and_its_search_tool_and_reads_them_back() {
    for variant in [REGEX, BM25] {
        let x = searching("claude-opus-4-8", variant);
        let sent = wire(Provider::Anthropic, &x);
        let tools = sent.body["tools"].as_array().unwrap();
        assert_eq!(tools[0].get("defer_loading"), None);
        assert_eq!(tools[1]["defer_loading"], json!(true));
        let name = anthropic_name(variant);
        assert_eq!(tools[3], json!({"type": variant, "name": name}));
        // No explicit tool choice: the tool search is not web search.
        assert_eq!(sent.body.get("tool_choice"), None);
        let back = crate::providers::decode_request(Provider::Anthropic, &sent).unwrap();
        assert_eq!(back.request, x, "{variant}");
        assert!(back.uncarried_tools().is_empty(), "{:?}", back.extras);
    }
}

#[test]
fn responses_writes_deferred_tools_namespaces_and_tool_search_and_reads_them_back() {
    let mut x = searching("gpt-5.4", RESPONSES_TYPE);
    x.tools[2].namespace = Some("crm".into());
    x.tools.push(Tool {
        namespace: Some("crm".into()),
        strict: Some(false),
        ..deferred("list_orders")
    });
    let sent = wire(Provider::OpenaiResponses, &x);
    let tools = sent.body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4, "{tools:?}");
    assert_eq!(tools[1]["defer_loading"], json!(true));
    assert_eq!(tools[2]["type"], json!("namespace"));
    assert_eq!(tools[2]["name"], json!("crm"));
    let members: Vec<&str> = (tools[2]["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["lookup", "list_orders"]);
    assert_eq!(tools[3], json!({"type": "tool_search"}));
    assert_eq!(sent.body.get("tool_choice"), None);
    let back = crate::providers::decode_request(Provider::OpenaiResponses, &sent).unwrap();
    // The namespace groups its members where the first one stood: same tools, same order here.
    assert_eq!(back.request, x);
    assert!(back.uncarried_tools().is_empty(), "{:?}", back.extras);
}

#[test]
fn anthropic_deferred_tools_beside_a_search_tool_are_declared_tools_marked_deferred() {
    // platform.claude.com, "Tool search tool": client tools with defer_loading beside the
    // server tool; a deferred tool is declared, and callable once a search returns its reference.
    let d = messages_with(&json!([{"type": BM25, "name": "tool_search_tool_bm25"},
        {"name": "get_weather", "input_schema": {"type": "object"}, "defer_loading": true},
        {"name": "get_time", "input_schema": {"type": "object"}}]));
    assert_eq!(
        names(&d.request),
        [("get_weather", true), ("get_time", false)]
    );
    assert_eq!(d.request.hosted, [search(BM25)]);
    assert_eq!(d.request.tool_search(), Some(BM25));
    assert!(d.uncarried_tools().is_empty(), "{:?}", d.extras);
    assert!(
        d.extras_of(crate::providers::ExtraKind::Unknown)
            .next()
            .is_none()
    );
}

#[test]
fn anthropic_deferred_tools_without_a_search_tool_keep_class_26_s_reading() {
    let d = messages_with(&json!([
        {"name": "get_weather", "input_schema": {"type": "object"}, "defer_loading": true},
        {"name": "get_time", "input_schema": {"type": "object"}}]));
    assert_eq!(names(&d.request), [("get_time", false)]);
    assert!(d.request.hosted.is_empty());
    assert!(
        (d.extras_of(crate::providers::ExtraKind::Wire))
            .any(|e| e.pointer == "/tools/0/defer_loading")
    );
}

#[test]
fn a_search_tool_whose_name_is_not_the_fixed_one_is_an_unknown_extra() {
    let d = messages_with(&json!([
        {"type": REGEX, "name": "finder", "cache_control": {"type": "ephemeral"}}]));
    assert_eq!(d.request.hosted, [search(REGEX)]);
    let at: Vec<(&str, crate::providers::ExtraKind)> = d
        .extras
        .iter()
        .map(|e| (e.pointer.as_str(), e.kind))
        .collect();
    assert!(
        at.contains(&("/tools/0/name", crate::providers::ExtraKind::Unknown)),
        "{at:?}"
    );
    assert!(at.contains(&(
        "/tools/0/cache_control",
        crate::providers::ExtraKind::NotCarried
    )));
}

#[test]
fn responses_reads_tool_search_options_and_a_namespace_s_description_as_not_carried() {
    // developers.openai.com, "Tool search": defer_loading applies to a namespace's functions,
    // not to the namespace object.
    let d = decoded(
        Provider::OpenaiResponses,
        json!({"model": "gpt-5.4", "input": "Orders of 42?",
        "tools": [{"type": "namespace", "name": "crm", "description": "CRM tools.",
                   "tools": [{"type": "function", "name": "list_open_orders", "defer_loading": true,
                              "parameters": {"type": "object"}}]},
                  {"type": "tool_search", "execution": "server"}]}),
    );
    let t = &d.request.tools[0];
    assert_eq!(
        (t.name.as_str(), t.defer_loading),
        ("list_open_orders", true)
    );
    assert_eq!(t.namespace.as_deref(), Some("crm"));
    assert_eq!(d.request.tool_search(), Some("tool_search"));
    let not_carried: Vec<&str> = (d.extras_of(crate::providers::ExtraKind::NotCarried))
        .map(|e| e.pointer.as_str())
        .collect();
    assert_eq!(not_carried, ["/tools/0/description", "/tools/1/execution"]);
    assert!(d.uncarried_tools().is_empty());
}

#[test]
fn targets_without_tool_search_refuse_it_with_a_code() {
    let x = searching("m", REGEX);
    for p in [
        Provider::OpenaiChat,
        Provider::Gemini,
        Provider::TextProtocol,
    ] {
        let e = encode(p, &x).unwrap_err();
        assert_eq!(e.code, NOT_SUPPORTED, "{p:?}: {e:?}");
    }
    // Each API's own variant only: Anthropic's regex search is not Responses' tool_search.
    let e = encode(Provider::OpenaiResponses, &x).unwrap_err();
    assert_eq!(e.code, NOT_SUPPORTED);
    let e = encode(Provider::Anthropic, &searching("m", RESPONSES_TYPE)).unwrap_err();
    assert_eq!(e.code, NOT_SUPPORTED);
    // A deferred tool alone, where the target cannot defer.
    let mut lone = ChatRequest::new("m")
        .with_user("hi")
        .with_tool(deferred("get_weather"));
    assert_eq!(
        encode(Provider::Gemini, &lone).unwrap_err().code,
        NOT_SUPPORTED
    );
    // Where it can, but nothing would ever load it.
    for p in [Provider::Anthropic, Provider::OpenaiResponses] {
        let e = encode(p, &lone).unwrap_err();
        assert_eq!(e.code, "DEFERRED_WITHOUT_SEARCH", "{p:?}");
    }
    lone.tools[0].defer_loading = false;
    lone.tools[0].namespace = Some("crm".into());
    for p in [Provider::OpenaiChat, Provider::Anthropic, Provider::Gemini] {
        let e = encode(p, &lone).unwrap_err();
        assert_eq!(e.code, "TOOL_NAMESPACE_NOT_SUPPORTED", "{p:?}");
    }
    assert!(encode(Provider::OpenaiResponses, &lone).is_ok());
}

#[test]
fn a_tool_search_is_no_web_search_for_the_grounding_checks() {
    // GPT-5 models refuse a non-auto choice beside hosted web search; that fact is not tool search's.
    let x = searching("gpt-5.4", RESPONSES_TYPE)
        .with_choice(crate::model::ToolChoice::Forced("get_time".into()));
    assert!(encode(Provider::OpenaiResponses, &x).is_ok());
    assert!(!crate::capability::grounding_required(&x));
    assert!(matches!(x.messages[0], Message::User { .. }));
}

#[test]
fn anthropic_names_drop_the_date() {
    assert_eq!(anthropic_name(REGEX), "tool_search_tool_regex");
    assert_eq!(anthropic_name(BM25), "tool_search_tool_bm25");
    assert_eq!(anthropic_name("tool_search_tool_x"), "tool_search_tool_x");
}

#[test]
fn an_anthropic_tool_search_in_an_answer_is_server_activity_never_a_client_call() {
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant",
    "model": "claude-opus-4-8", "stop_reason": "tool_use",
    "usage": {"input_tokens": 10, "output_tokens": 5},
    "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex",
         "input": {"query": "weather"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"q": "Split"}}]});
    let req = searching("claude-opus-4-8", REGEX);
    let resp = response(200, &body.to_string());
    let o = crate::providers::decode(Provider::Anthropic, &req, &resp).unwrap();
    let calls: Vec<&str> = o.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(calls, ["get_weather"]);
    let found = o.tool_search.unwrap();
    assert_eq!(
        (found.searches, found.loaded),
        (1, vec!["get_weather".to_string()])
    );
    // A tool search is no web search: the grounding telemetry sees none.
    assert_eq!(o.hosted, None);
    // Content given as the reference blocks themselves reads the same.
    let mut body = body;
    body["content"][1]["content"] = json!([{"type": "tool_reference", "tool_name": "lookup"}]);
    let resp = response(200, &body.to_string());
    let o = crate::providers::decode(Provider::Anthropic, &req, &resp).unwrap();
    assert_eq!(o.tool_search.unwrap().loaded, ["lookup"]);
}

#[test]
fn a_responses_tool_search_in_an_answer_is_server_activity_never_a_client_call() {
    // The items of a recorded gpt-5.4 answer (docs/wire-formats.md).
    let body = json!({"id": "resp_1", "object": "response", "status": "completed",
    "model": "gpt-5.4",
    "output": [
        {"id": "tsc_1", "type": "tool_search_call", "status": "completed",
         "arguments": {"paths": ["get_weather"]}, "call_id": null, "execution": "server"},
        {"id": "tso_1", "type": "tool_search_output", "status": "completed", "call_id": null,
         "execution": "server",
         "tools": [{"type": "function", "name": "get_weather", "defer_loading": true,
                    "parameters": {"type": "object"}, "strict": true},
                   {"type": "namespace", "name": "crm",
                    "tools": [{"type": "function", "name": "list_orders"}]}]},
        {"id": "fc_1", "type": "function_call", "status": "completed",
         "arguments": "{\"q\":\"Split\"}", "call_id": "call_1", "name": "get_weather",
         "namespace": "get_weather"}]});
    let req = searching("gpt-5.4", RESPONSES_TYPE);
    let resp = response(200, &body.to_string());
    let o = crate::providers::decode(Provider::OpenaiResponses, &req, &resp).unwrap();
    let calls: Vec<&str> = o.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["call_1"]);
    assert_eq!(o.tool_calls[0].namespace.as_deref(), Some("get_weather"));
    let found = o.tool_search.unwrap();
    assert_eq!(found.searches, 1);
    assert_eq!(found.loaded, ["get_weather", "list_orders"]);
    assert_eq!(o.hosted, None);
}

/// An assistant turn that called `get_weather` in namespace `get_weather`, and its result.
fn namespaced_turn() -> [Message; 2] {
    let call = crate::model::ToolCall {
        namespace: Some("get_weather".into()),
        ..crate::model::ToolCall::unsigned("call_1", "get_weather", json!({"q": "Split"}))
    };
    [
        Message::Assistant {
            phase: None,
            text: None,
            tool_calls: vec![call],
            opaque: Vec::new(),
        },
        Message::Tool {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: "Sunny".into(),
            parts: Vec::new(),
            is_error: false,
        },
    ]
}

#[test]
fn a_namespaced_call_is_replayed_with_its_namespace_and_refused_where_there_is_none() {
    let x = searching("gpt-5.4", RESPONSES_TYPE).with_messages(namespaced_turn());
    let sent = wire(Provider::OpenaiResponses, &x);
    let item = &sent.body["input"][1];
    assert_eq!(item["type"], json!("function_call"));
    assert_eq!(item["namespace"], json!("get_weather"));
    let back = crate::providers::decode_request(Provider::OpenaiResponses, &sent).unwrap();
    assert_eq!(back.request, x);
    // Elsewhere the namespace has no place: refused, never dropped.
    let mut plain = ChatRequest::new("m")
        .with_user("hi")
        .with_tool(q_tool("get_weather"));
    plain = plain.with_messages(namespaced_turn());
    for p in [Provider::OpenaiChat, Provider::Anthropic, Provider::Gemini] {
        let e = encode(p, &plain).unwrap_err();
        assert_eq!(e.code, "TOOL_NAMESPACE_NOT_SUPPORTED", "{p:?}");
    }
}

#[test]
fn a_streamed_responses_call_keeps_its_namespace() {
    let events = [
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
               "item": {"id": "fc_1", "type": "function_call", "status": "in_progress",
                        "arguments": "", "call_id": "call_1", "name": "get_weather",
                        "namespace": "get_weather"}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 2,
               "item_id": "fc_1", "output_index": 0, "delta": "{\"q\":\"Split\"}"}),
        json!({"type": "response.completed", "sequence_number": 3,
               "response": {"id": "resp_1", "status": "completed", "model": "gpt-5.4"}}),
    ];
    let body: String = (events.iter())
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let req = searching("gpt-5.4", RESPONSES_TYPE).with_stream(true);
    let o = crate::providers::decode(Provider::OpenaiResponses, &req, &response(200, &body));
    let o = o.unwrap();
    assert_eq!(o.tool_calls.len(), 1, "{o:?}");
    assert_eq!(o.tool_calls[0].namespace.as_deref(), Some("get_weather"));
}
