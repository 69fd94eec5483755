//! Gemini thought signatures per model: the 400 for a call sent back without its signature on
//! Gemini 3 and later, none on Gemini 2.5 or Gemini 3 Pro Image, and only in the current turn.

use serde_json::{Value, json};

use crate::scenario::Scenario;
use crate::simulate::gemini::{missing_signature, validates_signatures};
use crate::simulate::{SimRequest, answer};

fn call(sig: Option<&str>) -> Value {
    let mut p = json!({"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}});
    if let Some(s) = sig {
        p["thoughtSignature"] = json!(s);
    }
    p
}

fn result() -> Value {
    json!({"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "sunny"}}}]})
}

/// One round of a call and its result after a user question; the call signed or not.
fn follow_up(sig: Option<&str>) -> Value {
    json!({"contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [call(sig)]},
        result()]})
}

fn post(model: &str, body: &Value) -> (u16, Value) {
    let req = SimRequest::post(&format!("/v1beta/models/{model}:generateContent"), body)
        .with_header("x-goog-api-key", "AIza-test");
    let resp = answer(&req, &Scenario::default());
    (resp.status, resp.json())
}

#[test]
fn gemini_3_and_later_validate_signatures_2_5_and_3_pro_image_do_not() {
    for model in [
        "gemini-3.8-flash",
        "gemini-3-flash-preview",
        "gemini-3.1-pro-preview",
        "gemini-4-argon",
        "models/gemini-3.8-flash",
        "gemini-3.8-flash~parallel",
    ] {
        assert!(validates_signatures(model), "{model}");
    }
    for model in [
        "gemini-2.5-flash",
        "gemini-2.5-pro",
        "gemini-2.0-flash",
        "gemini-3-pro-image-preview",
        "gemma-3-27b-it",
        "",
    ] {
        assert!(!validates_signatures(model), "{model}");
    }
}

#[test]
fn a_call_without_its_signature_is_a_400_on_gemini_3_and_answered_on_gemini_2_5() {
    let unsigned = follow_up(None);
    let (status, body) = post("gemini-3.8-flash", &unsigned);
    assert_eq!(status, 400, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Function call is missing a thought_signature in functionCall parts"),
        "{message}"
    );
    assert!(
        message.contains("`default_api:get_weather` , position 1"),
        "{message}"
    );

    assert_eq!(post("gemini-2.5-flash", &unsigned).0, 200);
    assert_eq!(post("gemini-3-pro-image-preview", &unsigned).0, 200);
    assert_eq!(post("gemini-3.8-flash", &follow_up(Some("CiQBsig"))).0, 200);
}

#[test]
fn only_the_current_turn_is_validated() {
    // An earlier turn's unsigned call (a new user question since): not validated.
    let earlier = json!({"contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [call(None)]},
        result(),
        {"role": "model", "parts": [{"text": "Sunny."}]},
        {"role": "user", "parts": [{"text": "And tomorrow?"}]}]});
    assert_eq!(missing_signature(&earlier), None);
    // Every step of the current turn is: the second step's call lost its signature.
    let step = json!({"contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [call(Some("CiQBa"))]},
        result(),
        {"role": "model", "parts": [{"text": "Checking again."}, call(None)]},
        result()]});
    let message = missing_signature(&step).unwrap_or_default();
    assert!(message.contains("position 2"), "{message}");
}
