//! Tool results as parts: each API's documented form written and read back, the plain string
//! unchanged, and the parts a target cannot express refused (encode) or answered with the
//! API's 400 (a Chat tool message with an image).

use serde_json::{Value, json};

use crate::model::{ChatRequest, Message, Provider, ResultPart};
use crate::providers::testkit::weather_call;
use crate::providers::{decode_request, encode, request_rejection};

fn image() -> ResultPart {
    ResultPart::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    }
}

fn text(t: &str) -> ResultPart {
    ResultPart::Text { text: t.into() }
}

/// A round: the call, then its result as `parts`.
fn round(parts: Vec<ResultPart>) -> ChatRequest {
    let content = super::joined_text(&parts);
    ChatRequest::new("m")
        .with_user("radar?")
        .with_messages([
            Message::Assistant {
                phase: None,
                text: None,
                tool_calls: vec![weather_call("call_1", json!({}))],
                opaque: Vec::new(),
            },
            Message::Tool {
                call_id: "call_1".into(),
                name: "get_weather".into(),
                content,
                parts,
                is_error: false,
            },
        ])
        .with_tool(crate::providers::testkit::tool("get_weather"))
}

/// The result as `provider` decodes its own encoding back.
fn round_trip(provider: Provider, req: &ChatRequest) -> (Value, Message) {
    let sent = encode(provider, req).unwrap().request;
    let back = decode_request(provider, &sent).unwrap().request;
    let result = back
        .messages
        .into_iter()
        .find(|m| matches!(m, Message::Tool { .. }))
        .unwrap();
    (sent.body, result)
}

#[test]
fn each_api_carries_text_and_image_parts_in_its_own_form_and_reads_them_back() {
    let req = round(vec![text("Oslo: snow"), image()]);
    for provider in [
        Provider::Anthropic,
        Provider::OpenaiResponses,
        Provider::Gemini,
    ] {
        let (_, back) = round_trip(provider, &req);
        let Message::Tool { parts, content, .. } = back else {
            unreachable!()
        };
        assert_eq!(parts, [text("Oslo: snow"), image()], "{provider:?}");
        assert_eq!(content, "Oslo: snow", "{provider:?}");
    }
    let (body, _) = round_trip(Provider::OpenaiResponses, &req);
    assert_eq!(
        body["input"][2]["output"][1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="})
    );
    let (body, _) = round_trip(Provider::Gemini, &req);
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["parts"],
        json!([{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}])
    );
}

#[test]
fn text_parts_stay_an_array_where_the_api_has_one_and_join_where_it_has_not() {
    let req = round(vec![text("a"), text("b")]);
    let (body, back) = round_trip(Provider::OpenaiChat, &req);
    assert_eq!(
        body["messages"][2]["content"],
        json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    );
    assert!(matches!(back, Message::Tool { parts, .. } if parts == [text("a"), text("b")]));
    let (body, _) = round_trip(Provider::Gemini, &req);
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["response"],
        json!({"result": "a\nb"})
    );
    // A plain result is the string, unchanged.
    let (body, _) = round_trip(Provider::Anthropic, &round(Vec::new()));
    assert_eq!(body["messages"][2]["content"][0]["content"], json!(""));
}

#[test]
fn a_part_the_target_cannot_express_fails_closed_naming_it() {
    let req = round(vec![text("Oslo"), image()]);
    for provider in [Provider::OpenaiChat, Provider::TextProtocol] {
        let e = encode(provider, &req).unwrap_err();
        assert_eq!(e.code, "RESULT_PART_NOT_SUPPORTED");
        assert!(e.message.contains("an image (base64)"), "{e}");
    }
    let url = round(vec![ResultPart::ImageUrl {
        url: "https://example.com/r.png".into(),
    }]);
    let e = encode(Provider::Gemini, &url).unwrap_err();
    assert!(e.message.contains("an image URL"), "{e}");
    assert!(encode(Provider::Anthropic, &url).is_ok());
}

#[test]
fn chat_answers_its_400_for_an_image_in_a_tool_message() {
    let body = json!({"model": "m", "messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "t"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}
    ]});
    let r = super::super::rejection::result_part_rejection(Provider::OpenaiChat, &body).unwrap();
    assert_eq!(r.status, 400);
    assert!(
        r.message.starts_with("Invalid 'messages[1]'."),
        "{}",
        r.message
    );
    assert!(request_rejection(Provider::OpenaiResponses, &body).is_none());
}
