//! OpenAI reasoning per model: reasoning parameters sent to a model that does not reason
//! (GPT-4.1, GPT-4o, GPT-3.5, the GPT-5 chat models) answer OpenAI's 400, and only a reasoning
//! model (o-series, GPT-5) answers reasoning items or asks for them back.

use serde_json::{Value, json};

use crate::providers::openai_reasons;
use crate::scenario::Scenario;
use crate::simulate::{SimRequest, answer};

fn post(path: &str, body: &Value, scenario: &Scenario) -> (u16, Value) {
    let req = SimRequest::post(path, body).with_header("authorization", "Bearer sk-test");
    let resp = answer(&req, scenario);
    (resp.status, resp.json())
}

fn weather() -> Value {
    json!({"type": "function", "name": "get_weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}})
}

fn responses(model: &str, reasoning: Value) -> Value {
    let mut b = json!({"model": model, "input": "Weather in Lyon?", "tools": [weather()]});
    b["reasoning"] = reasoning;
    b
}

fn chat(model: &str, effort: Value) -> Value {
    let mut b =
        json!({"model": model, "messages": [{"role": "user", "content": "Weather in Lyon?"}]});
    b["reasoning_effort"] = effort;
    b
}

fn reasoning_scenario() -> Scenario {
    Scenario {
        reasoning: Some("I will call the tool.".into()),
        ..Scenario::default()
    }
}

fn output_types(v: &Value) -> Vec<String> {
    (v["output"].as_array().into_iter().flatten())
        .filter_map(|i| i["type"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_o_series_and_gpt_5_reason_gpt_4_gpt_3_5_and_gpt_5_chat_do_not() {
    for model in [
        "gpt-5-mini",
        "gpt-5",
        "gpt-5.1",
        "o4-mini",
        "o3",
        "o1",
        "tt-openai-responses",
    ] {
        assert!(openai_reasons(model), "{model}");
    }
    for model in [
        "gpt-4.1-mini",
        "gpt-4.1",
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4-turbo",
        "gpt-3.5-turbo",
        "gpt-5-chat-latest",
        "chatgpt-4o-latest",
    ] {
        assert!(!openai_reasons(model), "{model}");
    }
}

#[test]
fn responses_reasoning_on_a_model_that_does_not_reason_is_openai_s_400() {
    let body = responses("gpt-4.1-mini", json!({"effort": "low"}));
    let (status, v) = post("/v1/responses", &body, &Scenario::default());
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        v["error"]["message"],
        "Unsupported parameter: 'reasoning.effort' is not supported with this model."
    );
    assert_eq!(v["error"]["param"], "reasoning.effort");
    assert_eq!(v["error"]["code"], "unsupported_parameter");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    // A summary alone is named; a null reasoning is no parameter; a reasoning model takes it.
    let summary = responses("gpt-4o", json!({"summary": "auto"}));
    let (status, v) = post("/v1/responses", &summary, &Scenario::default());
    assert_eq!(
        (status, &v["error"]["param"]),
        (400, &json!("reasoning.summary"))
    );
    let none = responses("gpt-4.1-mini", Value::Null);
    assert_eq!(post("/v1/responses", &none, &Scenario::default()).0, 200);
    let body = responses("gpt-5-mini", json!({"effort": "low"}));
    assert_eq!(post("/v1/responses", &body, &Scenario::default()).0, 200);
}

#[test]
fn chat_reasoning_effort_on_a_model_that_does_not_reason_is_openai_s_400() {
    let (status, v) = post(
        "/v1/chat/completions",
        &chat("gpt-4.1-mini", json!("low")),
        &Scenario::default(),
    );
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        v["error"]["message"],
        "Unrecognized request argument supplied: reasoning_effort"
    );
    assert_eq!(v["error"]["param"], Value::Null);
    let null = chat("gpt-4.1-mini", Value::Null);
    assert_eq!(
        post("/v1/chat/completions", &null, &Scenario::default()).0,
        200
    );
    for model in ["gpt-5-mini", "o4-mini"] {
        let body = chat(model, json!("low"));
        assert_eq!(
            post("/v1/chat/completions", &body, &Scenario::default()).0,
            200,
            "{model}"
        );
    }
}

#[test]
fn only_a_reasoning_model_answers_reasoning_items() {
    let scenario = reasoning_scenario();
    let body = responses("gpt-5-mini", json!({"effort": "low"}));
    let (status, v) = post("/v1/responses", &body, &scenario);
    assert_eq!(status, 200, "{v}");
    assert_eq!(output_types(&v), ["reasoning", "function_call"]);
    // The same scenario on GPT-4.1 (no reasoning asked): the call, no reasoning item.
    let body = responses("gpt-4.1-mini", Value::Null);
    let (status, v) = post("/v1/responses", &body, &scenario);
    assert_eq!(status, 200, "{v}");
    assert_eq!(output_types(&v), ["function_call"]);
    // The named scenario by model suffix follows the model before the suffix.
    let body = responses("gpt-4.1-mini~reasoning", Value::Null);
    let (_, v) = post("/v1/responses", &body, &Scenario::default());
    assert_eq!(output_types(&v), ["function_call"]);
}

#[test]
fn a_model_that_does_not_reason_asks_no_reasoning_item_back() {
    let follow_up = |model: &str| {
        json!({"model": model, "tools": [weather()], "input": [
            {"role": "user", "content": "Weather in Lyon?"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
             "arguments": "{\"city\":\"Lyon\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]})
    };
    let scenario = reasoning_scenario();
    assert_eq!(
        post("/v1/responses", &follow_up("gpt-4.1-mini"), &scenario).0,
        200
    );
    let (status, v) = post("/v1/responses", &follow_up("gpt-5-mini"), &scenario);
    assert_eq!(status, 400, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'reasoning' item"),
        "{v}"
    );
}
