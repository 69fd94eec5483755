//! The writers' output read back by the project's own decoders: what a client decodes is what
//! the outcome said, buffered and streamed, whatever the chunking.

use serde_json::json;

use super::{Inbound, Meta, StreamWriter, body};
use crate::http::HttpResponse;
use crate::model::{
    ChatRequest, DiagnosticKind, Finish, Outcome, Provider, ToolCall, TruncatedCall, Usage,
};
use crate::providers::testkit::weather_call;

fn outcome() -> Outcome {
    Outcome {
        tool_calls: vec![
            weather_call("call_a", json!({"city": "Paris"})),
            ToolCall::unsigned("call_b", "get_time", json!({"tz": "CET"})),
        ],
        text: Some("Checking.".into()),
        finish: Finish::ToolCalls,
        usage: Some(Usage {
            input_tokens: Some(12),
            output_tokens: Some(7),
        }),
        ..Outcome::default()
    }
}

fn req(stream: bool) -> ChatRequest {
    ChatRequest::new("m").with_stream(stream)
}

fn meta() -> Meta {
    Meta {
        id: "id1".into(),
        model: "m".into(),
        created: 1,
        usage_chunk: true,
    }
}

const CASES: [(Inbound, Provider); 5] = [
    (Inbound::Chat, Provider::OpenaiChat),
    (Inbound::Responses, Provider::OpenaiResponses),
    (Inbound::Messages, Provider::Anthropic),
    (Inbound::Gemini { sse: false }, Provider::Gemini),
    (Inbound::Gemini { sse: true }, Provider::Gemini),
];

fn check(inbound: Inbound, decoded: &Outcome) {
    let want = outcome();
    let names: Vec<&str> = decoded.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_time"], "{inbound:?}");
    assert_eq!(
        decoded.tool_calls[0].arguments, want.tool_calls[0].arguments,
        "{inbound:?}"
    );
    assert_eq!(
        decoded.tool_calls[1].arguments, want.tool_calls[1].arguments,
        "{inbound:?}"
    );
    assert_eq!(decoded.text.as_deref(), Some("Checking."), "{inbound:?}");
    assert_eq!(decoded.finish, Finish::ToolCalls, "{inbound:?}");
    assert_eq!(
        decoded.usage.as_ref().and_then(|u| u.output_tokens),
        Some(7),
        "{inbound:?}"
    );
    assert!(
        decoded.diagnostics.is_empty(),
        "{inbound:?}: {:?}",
        decoded.diagnostics
    );
}

#[test]
fn buffered_bodies_decode_to_the_outcome() {
    for (inbound, provider) in CASES {
        let b = body(inbound, &outcome(), &meta());
        let resp = HttpResponse {
            status: 200,
            headers: Default::default(),
            body: b.to_string().into_bytes(),
        };
        let decoded = crate::providers::decode(provider, &req(false), &resp).unwrap();
        check(inbound, &decoded);
        if provider != Provider::Gemini {
            assert_eq!(decoded.tool_calls[0].id, "call_a", "{inbound:?}");
        }
    }
}

/// What `inbound`'s stream writer writes: its start, then each of `events` in order.
fn written(inbound: Inbound, events: impl FnOnce(&mut StreamWriter) -> Vec<Vec<u8>>) -> Vec<u8> {
    let mut w = StreamWriter::new(inbound, meta());
    let mut bytes = w.start();
    for e in events(&mut w) {
        bytes.extend(e);
    }
    bytes
}

/// `bytes` decoded by `provider`'s stream decoder in chunks of 1 byte, 7 bytes and all of them.
fn decoded_in_steps(provider: Provider, bytes: &[u8]) -> Vec<Outcome> {
    [1, 7, bytes.len()]
        .into_iter()
        .map(|step| {
            let mut d = crate::providers::StreamDecoder::new(provider, &req(true));
            for c in bytes.chunks(step) {
                d.push(c).unwrap();
            }
            d.finish().unwrap()
        })
        .collect()
}

/// Every case's stream of `events` (after its start), decoded in steps: `check` on each
/// decoding.
fn each_stream_decoded(
    events: impl Fn(&mut StreamWriter) -> Vec<Vec<u8>>,
    check: impl Fn(Inbound, &Outcome),
) {
    for (inbound, provider) in CASES {
        let bytes = written(inbound, &events);
        for decoded in decoded_in_steps(provider, &bytes) {
            check(inbound, &decoded);
        }
    }
}

#[test]
fn streams_decode_to_the_outcome_in_any_chunking() {
    let o = outcome();
    let events = |w: &mut StreamWriter| {
        vec![
            w.text("Check"),
            w.text("ing."),
            w.call_start("call_a", "get_weather", None),
            w.call_args(0, "{\"city\":"),
            w.call_args(0, "\"Paris\"}"),
            w.gemini_flush(&o.tool_calls, 1),
            w.finish(&o), // the second call only in the outcome: sent whole
        ]
    };
    each_stream_decoded(events, check);
}

#[test]
fn a_mid_stream_error_decodes_as_the_error() {
    for (inbound, provider) in CASES {
        let bytes = written(inbound, |w| {
            vec![w.error(&crate::model::ProviderError {
                status: 500,
                message: "upstream broke".into(),
                ..Default::default()
            })]
        });
        let mut d = crate::providers::StreamDecoder::new(provider, &req(true));
        d.push(&bytes).unwrap();
        let o = d.finish().unwrap();
        let e = o
            .error
            .unwrap_or_else(|| panic!("{inbound:?}: no error decoded"));
        assert!(e.message.contains("upstream broke"), "{inbound:?}: {e:?}");
    }
}

const PARTIAL: &str = "{\"city\": \"Port of";

fn kingston() -> ToolCall {
    weather_call("call_a", json!({"city": "Kingston"}))
}

/// Kingston finished, a second call cut by the output-token limit (as an upstream decoder
/// leaves it: withdrawn, kept in `truncated_call`).
fn cut_outcome() -> Outcome {
    Outcome {
        tool_calls: vec![kingston()],
        finish: Finish::Length,
        truncated_call: Some(TruncatedCall {
            id: "call_b".into(),
            name: "get_weather".into(),
            arguments: PARTIAL.into(),
        }),
        ..Outcome::default()
    }
}

/// What a client must decode from `cut_outcome` written in its format: the finished call only,
/// the length finish, and (except Gemini, which never sends a cut call) the cut call withdrawn
/// as `TruncatedCall` with `partial` as its text.
/// Name and arguments of each call (Gemini has no call ids on the wire).
fn calls(o: &Outcome) -> Vec<(&str, &serde_json::Value)> {
    o.tool_calls
        .iter()
        .map(|c| (c.name.as_str(), &c.arguments))
        .collect()
}

fn check_cut(inbound: Inbound, decoded: &Outcome, partial: &str) {
    assert_eq!(calls(decoded), calls(&cut_outcome()), "{inbound:?}");
    assert_eq!(decoded.finish, Finish::Length, "{inbound:?}");
    let kinds: Vec<DiagnosticKind> = decoded.diagnostics.iter().map(|d| d.kind).collect();
    if matches!(inbound, Inbound::Gemini { .. }) {
        assert!(kinds.is_empty(), "{inbound:?}: {kinds:?}");
        assert_eq!(decoded.truncated_call, None, "{inbound:?}");
    } else {
        assert_eq!(kinds, [DiagnosticKind::TruncatedCall], "{inbound:?}");
        assert_eq!(decoded.diagnostics[0].call_index, Some(1), "{inbound:?}");
        let cut = decoded.truncated_call.as_ref().expect("a truncated call");
        assert_eq!(
            (cut.id.as_str(), cut.name.as_str(), cut.arguments.as_str()),
            ("call_b", "get_weather", partial),
            "{inbound:?}"
        );
    }
}

fn decode_body(inbound: Inbound, provider: Provider, o: &Outcome) -> (serde_json::Value, Outcome) {
    let b = body(inbound, o, &meta());
    let resp = HttpResponse {
        status: 200,
        headers: Default::default(),
        body: b.to_string().into_bytes(),
    };
    let decoded = crate::providers::decode(provider, &req(false), &resp).unwrap();
    (b, decoded)
}

#[test]
fn a_cut_call_is_written_last_and_the_client_withdraws_it() {
    for (inbound, provider) in CASES {
        let (b, decoded) = decode_body(inbound, provider, &cut_outcome());
        // A buffered Messages `input` is an object: `{}` carries no text, and says none came.
        let partial = if inbound == Inbound::Messages {
            ""
        } else {
            PARTIAL
        };
        check_cut(inbound, &decoded, partial);
        if inbound == Inbound::Responses {
            assert_eq!(b["output"][1]["status"], "incomplete");
            assert_eq!(b["output"][0]["status"], "completed");
        }
    }
}

#[test]
fn a_streamed_cut_call_ends_with_the_length_finish_and_is_withdrawn() {
    let o = cut_outcome();
    let events = |w: &mut StreamWriter| {
        vec![
            w.call_start("call_a", "get_weather", None),
            w.call_args(0, "{\"city\": \"Kingston\"}"),
            w.call_start("call_b", "get_weather", None),
            w.call_args(1, "{\"city\": "),
            w.call_args(1, "\"Port of"),
            w.finish(&o),
        ]
    };
    each_stream_decoded(events, |inbound, decoded| {
        check_cut(inbound, decoded, PARTIAL);
    });
}

#[test]
fn finished_calls_under_a_length_finish_stay_calls() {
    // A Gemini MAX_TOKENS answer: every call whole, the limit hit after them.
    let o = Outcome {
        tool_calls: vec![kingston()],
        finish: Finish::Length,
        ..Outcome::default()
    };
    let check = |inbound: Inbound, decoded: &Outcome| {
        assert_eq!(calls(decoded), calls(&o), "{inbound:?}");
        assert_eq!(decoded.finish, Finish::Length, "{inbound:?}");
        assert!(
            decoded.diagnostics.is_empty(),
            "{inbound:?}: {:?}",
            decoded.diagnostics
        );
        assert_eq!(decoded.text, None, "{inbound:?}");
    };
    for (inbound, provider) in CASES {
        check(inbound, &decode_body(inbound, provider, &o).1);
        let bytes = written(inbound, |w| {
            vec![
                w.call_start("call_a", "get_weather", None),
                w.call_args(0, "{\"city\": \"Kingston\"}"),
                w.finish(&o),
            ]
        });
        let mut d = crate::providers::StreamDecoder::new(provider, &req(true));
        d.push(&bytes).unwrap();
        check(inbound, &d.finish().unwrap());
    }
}

#[test]
fn a_chat_stream_has_its_usage_chunk_only_when_the_client_asked() {
    let o = outcome();
    for asked in [true, false] {
        let meta = Meta {
            usage_chunk: asked,
            ..meta()
        };
        let mut w = StreamWriter::new(Inbound::Chat, meta);
        let mut bytes = w.start();
        bytes.extend(w.finish(&o));
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.contains(r#""choices":[]"#), asked, "{text}");
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    }
}

/// One Chat chunk as the `json!` object the typed chunks replaced wrote it.
fn chat_chunk_as_value(delta: &serde_json::Value, finish: &serde_json::Value) -> Vec<u8> {
    let chunk = json!({"id": "id1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
    super::sse(None, &chunk)
}

#[test]
fn chat_chunks_are_byte_for_byte_the_value_objects_they_replaced() {
    let mut w = StreamWriter::new(Inbound::Chat, meta());
    let want_start = chat_chunk_as_value(
        &json!({"role": "assistant", "content": "", "refusal": null}),
        &json!(null),
    );
    assert_eq!(w.start(), want_start);
    // Text that must be escaped, a call's start, fragments with quotes and non-ASCII.
    let text = "Say \"hi\"\n\u{e9}\u{1}";
    let want = chat_chunk_as_value(&json!({"content": text}), &json!(null));
    assert_eq!(w.text(text), want);
    let want = chat_chunk_as_value(
        &json!({"tool_calls": [{"index": 0, "id": "call_\"a", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]}),
        &json!(null),
    );
    assert_eq!(w.call_start("call_\"a", "get_weather", None), want);
    for fragment in ["{\"city\":", " \"Zürich\\n\"}"] {
        let want = chat_chunk_as_value(
            &json!({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}),
            &json!(null),
        );
        assert_eq!(w.call_args(0, fragment), want);
    }
    let mut o = outcome();
    o.text = Some(text.into());
    o.tool_calls.truncate(1);
    o.tool_calls[0].arguments = json!({"city": "Zürich\n"});
    let mut want = chat_chunk_as_value(&json!({}), &json!("tool_calls"));
    let usage = json!({"id": "id1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [], "usage": super::body::chat_usage(o.usage.as_ref())});
    want.extend(super::sse(None, &usage));
    want.extend_from_slice(b"data: [DONE]\n\n");
    assert_eq!(String::from_utf8(w.finish(&o)), String::from_utf8(want));
}
