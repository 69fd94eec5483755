//! Buffered answers: upstream's decoded outcome written whole in the client's format, an
//! upstream error in the client's envelope with its status kept when it is an error status,
//! an undecodable answer a 502, and the ids and header text the answers carry.

use serde_json::{Value, json};

use super::{header, whole};
use crate::model::{DecodeError, Finish, Outcome, Provider, ProviderError};
use crate::proxy::answer::{Headers, header_text, meta, upstream_error};
use crate::proxy::forward::full_answer;
use crate::respond::Inbound;

fn weather_call() -> Outcome {
    Outcome {
        tool_calls: vec![crate::providers::testkit::weather_call(
            "call_1",
            json!({"city": "Paris"}),
        )],
        finish: Finish::ToolCalls,
        ..Outcome::default()
    }
}

/// The whole answer to a client in `inbound`'s format (model alias `alias`) for what upstream
/// `provider` answered, with the headers so far and the hosted tool type when searching.
fn answered(
    inbound: Inbound,
    provider: Provider,
    outcome: Result<Outcome, DecodeError>,
    so_far: Headers,
    searching: Option<&str>,
) -> (u16, Headers, Value) {
    let searching = searching.map(|t| Some(t.to_string()));
    whole(full_answer(
        (inbound, &meta(inbound, "alias")),
        provider,
        outcome,
        so_far,
        searching,
    ))
}

#[test]
fn a_decoded_outcome_is_written_whole_in_the_client_format() {
    let (status, headers, v) = answered(
        Inbound::Chat,
        Provider::Anthropic,
        Ok(weather_call()),
        Vec::new(),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("application/json"));
    assert_eq!(v["model"], "alias", "the client's alias, not upstream's");
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(call["function"]["arguments"], r#"{"city":"Paris"}"#);
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(header(&headers, "x-tooltape-grounding-attempted"), None);

    let messages = answered(
        Inbound::Messages,
        Provider::OpenaiChat,
        Ok(weather_call()),
        Vec::new(),
        None,
    );
    let v = messages.2;
    assert_eq!(v["content"][0]["type"], "tool_use");
    assert_eq!(v["content"][0]["input"], json!({"city": "Paris"}));
    assert_eq!(v["stop_reason"], "tool_use");
}

#[test]
fn an_upstream_error_keeps_an_error_status_else_502_in_the_client_envelope() {
    let error = |status| ProviderError {
        status,
        message: "slow down".into(),
        ..ProviderError::default()
    };
    let limited = Outcome {
        error: Some(error(429)),
        ..Outcome::default()
    };
    let so_far = vec![("x-tooltape-upstream".into(), "anthropic".into())];
    let (status, headers, v) = answered(
        Inbound::Messages,
        Provider::Anthropic,
        Ok(limited),
        so_far,
        None,
    );
    assert_eq!((status, &v["type"]), (429, &json!("error")), "{v}");
    assert_eq!(v["error"]["message"], "slow down");
    let upstream = header(&headers, "x-tooltape-upstream");
    assert_eq!(upstream, Some("anthropic"), "headers so far are kept");
    for odd in [0, 200, 302, 600] {
        let gemini = Inbound::Gemini { sse: false };
        let (status, _, v) = whole(upstream_error(gemini, &error(odd), Vec::new()));
        assert_eq!(status, 502, "upstream status {odd}");
        assert_eq!(v["error"]["code"], 502, "{v}");
    }
}

#[test]
fn an_undecodable_upstream_answer_is_502_naming_the_upstream() {
    let undecodable = Err(DecodeError::new("expected value at line 1 column 1"));
    let (status, _, v) = answered(
        Inbound::Responses,
        Provider::Gemini,
        undecodable,
        Vec::new(),
        None,
    );
    assert_eq!(status, 502);
    let message = v["error"]["message"].as_str().unwrap_or_default();
    let named = message.starts_with("upstream gemini answered something undecodable");
    assert!(named, "{message}");
}

#[test]
fn searching_adds_the_grounding_headers_and_says_why_not() {
    let (_, headers, _) = answered(
        Inbound::Chat,
        Provider::OpenaiResponses,
        Ok(weather_call()),
        Vec::new(),
        Some("web_search"),
    );
    let attempted = header(&headers, "x-tooltape-grounding-attempted");
    assert_eq!(attempted, Some("false"));
    assert_eq!(header(&headers, "x-tooltape-grounding-calls"), Some("0"));
    let why = header(&headers, "x-tooltape-why-not-grounded").unwrap_or_default();
    assert!(why.starts_with("GROUNDING_NOT_ATTEMPTED"), "{why}");
}

#[test]
fn ids_are_prefixed_per_format_and_header_text_is_printable_ascii() {
    let chat = meta(Inbound::Chat, "m").id;
    let again = meta(Inbound::Chat, "m").id;
    assert!(chat.starts_with("chatcmpl-tt") && again.starts_with("chatcmpl-tt"));
    assert_ne!(chat, again, "every answer has its own id");
    assert!(meta(Inbound::Responses, "m").id.starts_with("resp_tt"));
    assert!(meta(Inbound::Messages, "m").id.starts_with("msg_tt"));
    assert_eq!(header_text("café\nok\t"), "caf??ok?");
}
