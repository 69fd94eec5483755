//! Compaction items and the setting: read from answers (buffered, streamed) and requests,
//! written back to their own API, refused by every other target (never dropped).

use serde_json::{Value, json};

use super::{ANTHROPIC_BETA, NOT_EXPRESSIBLE};
use crate::http::HttpRequest;
use crate::model::{ChatRequest, Message, Provider};
use crate::providers::testkit::{
    request, response, stream_every_chunking, weather_call, weather_result,
};
use crate::providers::{anthropic, decode_request, encode, openai_responses};

fn responses_item() -> Value {
    json!({"id": "cmp_1", "type": "compaction", "encrypted_content": "gAAAAB-sealed"})
}

fn anthropic_block() -> Value {
    json!({"type": "compaction", "content": "<summary>Earlier: the user asked about Bern.</summary>"})
}

/// A follow-up whose assistant turn carries `item`.
fn follow_up(item: Value) -> ChatRequest {
    let mut req = request(&["get_weather"], false);
    req.messages.push(Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![weather_call("call_1", json!({"city": "Bern"}))],
        opaque: vec![item],
    });
    req.messages.push(weather_result("call_1", "18C", false));
    req
}

#[test]
fn a_responses_answer_keeps_its_compaction_item_and_sends_it_back() {
    let body = json!({"status": "completed", "output": [responses_item(),
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}]});
    let o = openai_responses::decode(
        &request(&["get_weather"], false),
        &response(200, &body.to_string()),
    )
    .unwrap();
    assert_eq!(o.opaque, vec![responses_item()]);
    let sent = encode(Provider::OpenaiResponses, &follow_up(responses_item())).unwrap();
    let input = sent.request.body["input"].as_array().unwrap().clone();
    assert!(input.contains(&responses_item()), "{input:?}");
}

#[test]
fn an_anthropic_stream_fills_the_compaction_block_from_its_delta() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": {"input_tokens": 1, "output_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": null}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": "<summary>Earlier: the user asked about Bern.</summary>"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = (events.iter())
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let req = request(&["get_weather"], true);
    let o = stream_every_chunking(body.as_bytes(), || anthropic::Stream::new(&req)).unwrap();
    assert_eq!(o.opaque, vec![anthropic_block()]);
    let sent = encode(Provider::Anthropic, &follow_up(anthropic_block())).unwrap();
    assert!(
        sent.request.body["messages"]
            .to_string()
            .contains("Earlier: the user asked")
    );
}

#[test]
fn another_target_refuses_a_compaction_item() {
    for (item, to) in [
        (responses_item(), Provider::Anthropic),
        (responses_item(), Provider::OpenaiChat),
        (anthropic_block(), Provider::OpenaiResponses),
        (anthropic_block(), Provider::Gemini),
        (anthropic_block(), Provider::TextProtocol),
    ] {
        let err = encode(to, &follow_up(item)).unwrap_err();
        assert_eq!(err.code, NOT_EXPRESSIBLE, "{to:?}: {err:?}");
        assert!(
            err.message.contains("would drop that conversation"),
            "{err:?}"
        );
    }
}

#[test]
fn the_setting_round_trips_on_its_api_and_is_refused_elsewhere() {
    let setting = json!([{"type": "compaction", "compact_threshold": 200000}]);
    let body = json!({"model": "m", "input": "hi", "context_management": setting});
    let d = decode_request(
        Provider::OpenaiResponses,
        &HttpRequest::post("/v1/responses", body),
    )
    .unwrap();
    assert_eq!(d.request.server.context_management.as_ref(), Some(&setting));
    assert!(
        d.extras
            .iter()
            .all(|e| !format!("{e:?}").contains("context_management"))
    );
    let sent = encode(Provider::OpenaiResponses, &d.request).unwrap();
    assert_eq!(sent.request.body["context_management"], setting);
    for to in [
        Provider::Anthropic,
        Provider::OpenaiChat,
        Provider::Gemini,
        Provider::TextProtocol,
    ] {
        let err = encode(to, &d.request).unwrap_err();
        assert_eq!(err.code, NOT_EXPRESSIBLE, "{to:?}");
    }
    let edits = json!({"edits": [{"type": "compact_20260112"}]});
    let mut req = request(&["get_weather"], false);
    req.server.context_management = Some(edits.clone());
    let sent = encode(Provider::Anthropic, &req).unwrap();
    assert_eq!(sent.request.body["context_management"], edits);
    assert_eq!(
        sent.request
            .headers
            .get("anthropic-beta")
            .map(String::as_str),
        Some(ANTHROPIC_BETA)
    );
    assert_eq!(
        encode(Provider::OpenaiResponses, &req).unwrap_err().code,
        NOT_EXPRESSIBLE
    );
}
