//! Programmatic tool calling: written by the Anthropic and Responses encoders and read back by
//! their request decoders (decode(encode(x)) == x), read from answers buffered and streamed
//! (callers, the runner's server call kept for the next turn, Anthropic's container), and
//! refused by every target that cannot express it.

use serde_json::{Value, json};

use super::*;
use crate::model::{HostedTool, Message, Outcome, ToolCall};
use crate::providers::encode;
use crate::providers::testkit::{q_tool, response};

const ANTHROPIC_RUNNER: &str = "code_execution_20250825";

fn programmable(name: &str) -> Tool {
    Tool {
        allowed_callers: vec![PROGRAMMATIC.into()],
        ..q_tool(name)
    }
}

/// A request declaring `get_time` (the model's) and `query` (code's), beside `runner`.
fn programmatic(model: &str, runner: &str) -> ChatRequest {
    let mut r = ChatRequest::new(model)
        .with_user("Totals?")
        .with_tools([q_tool("get_time"), programmable("query")])
        .with_hosted(HostedTool::Programmatic {
            variant: runner.into(),
        })
        .with_max_tokens(200);
    if runner == RESPONSES_TYPE {
        // Responses sends an unset `strict` as an explicit false.
        for t in &mut r.tools {
            t.strict = Some(false);
        }
    }
    r
}

fn caller(kind: &str, id: &str) -> Caller {
    Caller {
        kind: kind.into(),
        id: id.into(),
    }
}

/// `x` continued after a turn whose code (`runner`, its server call `item`) called `query`.
fn continued(mut x: ChatRequest, caller: Caller, item: Value) -> ChatRequest {
    x.messages.push(Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![ToolCall {
            caller: Some(caller),
            ..ToolCall::unsigned("call_q", "query", json!({"q": "north"}))
        }],
        opaque: vec![item],
    });
    x.messages.push(Message::Tool {
        call_id: "call_q".into(),
        name: "query".into(),
        content: "41".into(),
        parts: Vec::new(),
        is_error: false,
    });
    x
}

fn anthropic_runner_call() -> Value {
    json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
           "input": {"code": "print(await query(q='north'))"}})
}

#[test]
fn anthropic_writes_the_runner_callers_caller_and_container_and_reads_them_back() {
    let mut x = continued(
        programmatic("claude-opus-4-8", ANTHROPIC_RUNNER),
        caller(ANTHROPIC_RUNNER, "srvtoolu_1"),
        anthropic_runner_call(),
    );
    x.server.container = Some("container_1".into());
    let sent = encode(Provider::Anthropic, &x).unwrap().request;
    let tools = sent.body["tools"].as_array().unwrap();
    assert_eq!(tools[0].get("allowed_callers"), None);
    assert_eq!(tools[1]["allowed_callers"], json!([ANTHROPIC_RUNNER]));
    assert_eq!(
        tools[2],
        json!({"type": ANTHROPIC_RUNNER, "name": "code_execution"})
    );
    let turn = &sent.body["messages"][1]["content"];
    assert_eq!(turn[0], anthropic_runner_call(), "the runner's call first");
    assert_eq!(
        turn[1]["caller"],
        json!({"type": ANTHROPIC_RUNNER, "tool_id": "srvtoolu_1"})
    );
    assert_eq!(sent.body["container"], json!("container_1"));
    assert_eq!(sent.headers["anthropic-beta"], ANTHROPIC_BETA);
    let back = crate::providers::decode_request(Provider::Anthropic, &sent).unwrap();
    assert_eq!(back.request, x);
    assert!(back.uncarried_tools().is_empty(), "{:?}", back.extras);
    // `tooltape parse-request` shows the container the request names.
    assert_eq!(back.to_json()["server"]["container"], json!("container_1"));
}

#[test]
fn responses_writes_the_runner_callers_caller_and_program_and_reads_them_back() {
    let program = json!({"type": "program", "id": "cm_1", "call_id": "call_p", "code": "…"});
    let x = continued(
        programmatic("gpt-5.6", RESPONSES_TYPE),
        caller(RESPONSES_CALLER, "call_p"),
        program.clone(),
    );
    let sent = encode(Provider::OpenaiResponses, &x).unwrap().request;
    let tools = sent.body["tools"].as_array().unwrap();
    assert_eq!(tools[1]["allowed_callers"], json!([PROGRAMMATIC]));
    assert_eq!(tools[2], json!({"type": RESPONSES_TYPE}));
    let input = sent.body["input"].as_array().unwrap();
    assert_eq!(input[1], program, "the program before its calls");
    assert_eq!(
        input[2]["caller"],
        json!({"type": "program", "caller_id": "call_p"})
    );
    let back = crate::providers::decode_request(Provider::OpenaiResponses, &sent).unwrap();
    assert_eq!(back.request, x);
}

#[test]
fn every_other_target_refuses_the_runner_a_programmable_tool_and_another_apis_call() {
    for p in [
        Provider::OpenaiChat,
        Provider::Gemini,
        Provider::TextProtocol,
    ] {
        let err = encode(p, &programmatic("m", ANTHROPIC_RUNNER)).unwrap_err();
        assert_eq!(err.code, NOT_SUPPORTED, "{p:?}");
    }
    // Each big API has its own runner, not the other's.
    let err = encode(
        Provider::OpenaiResponses,
        &programmatic("m", ANTHROPIC_RUNNER),
    )
    .unwrap_err();
    assert!(err.message.contains("programmatic_tool_calling"), "{err:?}");
    assert!(encode(Provider::Anthropic, &programmatic("m", RESPONSES_TYPE)).is_err());
    // A tool code may call, and no runner to run the code.
    let mut alone = programmatic("m", ANTHROPIC_RUNNER);
    alone.hosted.clear();
    let err = encode(Provider::Anthropic, &alone).unwrap_err();
    assert!(
        err.message.contains("no programmatic-calling runner"),
        "{err:?}"
    );
    // A call Anthropic's code made cannot continue on Responses.
    let x = continued(
        programmatic("m", RESPONSES_TYPE),
        caller(ANTHROPIC_RUNNER, "srvtoolu_1"),
        json!({"type": "program", "call_id": "call_p"}),
    );
    let err = encode(Provider::OpenaiResponses, &x).unwrap_err();
    assert!(
        err.message.contains("only the server that ran the code"),
        "{err:?}"
    );
}

fn decoded(provider: Provider, status: u16, body: &str) -> Outcome {
    let req = ChatRequest::new("m");
    crate::providers::decode(provider, &req, &response(status, body)).unwrap()
}

#[test]
fn an_anthropic_answer_keeps_its_callers_runner_call_and_container() {
    let body = json!({"type": "message", "role": "assistant", "model": "m",
        "content": [anthropic_runner_call(),
            {"type": "tool_use", "id": "toolu_1", "name": "query", "input": {"q": "north"},
             "caller": {"type": ANTHROPIC_RUNNER, "tool_id": "srvtoolu_1"}}],
        "container": {"id": "container_1", "expires_at": "2026-12-31T00:00:00Z"},
        "stop_reason": "tool_use"});
    let o = decoded(Provider::Anthropic, 200, &body.to_string());
    assert_eq!(
        o.tool_calls[0].caller,
        Some(caller(ANTHROPIC_RUNNER, "srvtoolu_1"))
    );
    assert_eq!(o.opaque, vec![anthropic_runner_call()]);
    assert_eq!(o.container.as_deref(), Some("container_1"));
    assert!(o.hosted.is_none(), "code execution is no web search");
}

#[test]
fn a_streamed_anthropic_answer_keeps_its_runner_calls_code_and_container() {
    let events = [
        json!({"type": "message_start", "message": {"model": "m", "content": [], "usage": {}}}),
        json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
            {"type": "input_json_delta", "partial_json": "{\"code\": \"print(await "}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
            {"type": "input_json_delta", "partial_json": "query(q='north'))\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "tool_use", "id": "toolu_1", "name": "query", "input": {},
             "caller": {"type": ANTHROPIC_RUNNER, "tool_id": "srvtoolu_1"}}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
            "container": {"id": "container_1"}}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = (events.iter())
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let req = ChatRequest::new("m").with_stream(true);
    let o = crate::providers::decode(Provider::Anthropic, &req, &response(200, &body)).unwrap();
    assert_eq!(o.opaque, vec![anthropic_runner_call()]);
    assert_eq!(
        o.tool_calls[0].caller,
        Some(caller(ANTHROPIC_RUNNER, "srvtoolu_1"))
    );
    assert_eq!(o.container.as_deref(), Some("container_1"));
}

#[test]
fn a_responses_answer_keeps_its_program_and_callers() {
    let program = json!({"id": "cm_1", "type": "program", "call_id": "call_p", "code": "…"});
    let body = json!({"id": "resp_1", "object": "response", "status": "completed", "model": "m",
        "output": [program,
            {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "query",
             "arguments": "{\"q\":\"north\"}", "status": "completed",
             "caller": {"type": "program", "caller_id": "call_p"}}]});
    let o = decoded(Provider::OpenaiResponses, 200, &body.to_string());
    assert_eq!(o.opaque, vec![program]);
    assert_eq!(
        o.tool_calls[0].caller,
        Some(caller(RESPONSES_CALLER, "call_p"))
    );
}
