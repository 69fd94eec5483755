//! The 2026 items the simulator answers on Responses and Anthropic: the message `phase`
//! (class 32) and compaction items (class 31), buffered and streamed; a `phase` outside the
//! enum is OpenAI's 400, a message sent back without one is accepted.

use serde_json::{Value, json};

use crate::scenario::{Scenario, ScenarioCall};
use crate::simulate::{SimRequest, answer};

fn scenario(phase: bool, compaction: bool) -> Scenario {
    Scenario {
        text: Some("Checking.".into()),
        calls: vec![ScenarioCall {
            name: "get_weather".into(),
            arguments: serde_json::Map::from_iter([("city".to_string(), json!("Bern"))]),
            raw_arguments: None,
            id: None,
        }],
        phase,
        compaction,
        ..Scenario::default()
    }
}

fn tool() -> Value {
    json!({"type": "function", "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}})
}

fn responses(input: &Value, stream: bool, s: &Scenario) -> (u16, String) {
    let body = json!({"model": "gpt-5-mini", "input": input, "tools": [tool()], "stream": stream});
    let req =
        SimRequest::post("/v1/responses", &body).with_header("authorization", "Bearer sk-test");
    let resp = answer(&req, s);
    // Buffered bodies are pretty-printed: compared without the space after a colon.
    let text = String::from_utf8_lossy(&resp.body.bytes()).replace("\": ", "\":");
    (resp.status, text)
}

#[test]
fn responses_answers_phase_and_compaction_buffered_and_streamed() {
    for stream in [false, true] {
        let (status, body) = responses(&json!("Weather in Bern?"), stream, &scenario(true, true));
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(r#""phase":"commentary""#), "{body}");
        assert!(body.contains(r#""type":"compaction""#), "{body}");
        let (_, plain) = responses(&json!("Weather in Bern?"), stream, &scenario(false, false));
        assert!(
            !plain.contains("phase") && !plain.contains("compaction"),
            "{plain}"
        );
    }
}

#[test]
fn a_phase_outside_the_enum_is_refused_a_missing_one_accepted() {
    let input = |phase: Option<&str>| {
        let mut m = json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking."}]});
        if let Some(p) = phase {
            m["phase"] = json!(p);
        }
        json!([{"role": "user", "content": "Weather in Bern?"}, m,
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "18C"}])
    };
    let s = Scenario::default();
    let (status, body) = responses(&input(Some("draft")), false, &s);
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("input[1].phase") && body.contains("invalid_value"),
        "{body}"
    );
    assert_eq!(responses(&input(None), false, &s).0, 200);
    assert_eq!(responses(&input(Some("commentary")), false, &s).0, 200);
}

#[test]
fn anthropic_streams_a_compaction_block_as_one_delta() {
    let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 256, "stream": true,
        "messages": [{"role": "user", "content": "Weather in Bern?"}],
        "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]});
    let req = SimRequest::post("/v1/messages", &body).with_header("x-api-key", "sk-ant-test");
    let resp = answer(&req, &scenario(false, true));
    let text = String::from_utf8_lossy(&resp.body.bytes()).into_owned();
    assert_eq!(resp.status, 200, "{text}");
    assert_eq!(text.matches("compaction_delta").count(), 1, "{text}");
    assert!(
        text.contains(r#""content_block":{"content":null,"type":"compaction"}"#)
            || text.contains(r#""content_block":{"type":"compaction","content":null}"#),
        "{text}"
    );
}
