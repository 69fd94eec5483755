//! Test helpers shared by the provider codecs: chunking invariance (whole, per byte, every split
//! point, inside multi-byte UTF-8, seeded random chunks), driving a codec's own stream decoder,
//! request and response builders, and what the decoding tests read out of an outcome.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::http::{HttpRequest, HttpResponse};
use crate::model::DecodeError;
use crate::model::{
    AllowedMode, ChatRequest, Finish, Message, Outcome, StrictPolicy, Tool, ToolCall, ToolChoice,
};
use crate::providers::DecodedRequest;

/// A tiny xorshift64 (no new crates): deterministic random chunk sizes and inputs (also the
/// text protocol's random tests).
pub(crate) struct XorShift(pub u64);

impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A decoder under test: chunks in, outcome out.
pub(crate) type ChunkedDecode<'a> = dyn Fn(&[&[u8]]) -> Result<Outcome, DecodeError> + 'a;

/// Feeds `body` in every chunking this suite cares about through `decode(chunks)` and asserts
/// each result equals the whole-body one, which it returns.
pub(crate) fn assert_chunking_invariant(
    body: &[u8],
    decode: &ChunkedDecode<'_>,
) -> Result<Outcome, DecodeError> {
    let whole = decode(&[body]);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(decode(&bytes), whole, "1-byte chunks");
    // Every split point (bounded for big bodies: every byte of the first and last 2 KiB).
    for split in 0..=body.len() {
        if body.len() > 4096 && split > 2048 && split < body.len() - 2048 {
            continue;
        }
        let (a, b) = body.split_at(split);
        assert_eq!(decode(&[a, b]), whole, "split at {split}");
    }
    // Inside every multi-byte UTF-8 character.
    for (i, &b) in body.iter().enumerate() {
        if b >= 0xC0 {
            let (x, y) = body.split_at(i + 1);
            assert_eq!(decode(&[x, y]), whole, "split inside the UTF-8 char at {i}");
        }
    }
    for seed in 1..=8u64 {
        let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut chunks = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let n = (rng.next() % 17 + 1) as usize;
            let (a, b) = rest.split_at(n.min(rest.len()));
            chunks.push(a);
            rest = b;
        }
        assert_eq!(decode(&chunks), whole, "random chunks, seed {seed}");
    }
    whole
}

/// A codec's own stream decoder, as its tests drive it (bytes in, outcome at the end).
pub(crate) trait CodecStream {
    fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError>;
    fn finish(self) -> Result<Outcome, DecodeError>;
}

macro_rules! codec_stream {
    ($($stream:ty),*) => {$(
        impl CodecStream for $stream {
            fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
                <$stream>::push(self, bytes)
            }
            fn finish(self) -> Result<Outcome, DecodeError> {
                <$stream>::finish(self)
            }
        }
    )*};
}

codec_stream!(
    super::anthropic::Stream,
    super::gemini::Stream,
    super::openai_chat::Stream,
    super::openai_responses::Stream
);

/// `assert_chunking_invariant` over a fresh stream decoder from `new` for each chunking.
pub(crate) fn stream_every_chunking<S: CodecStream>(
    body: &[u8],
    new: impl Fn() -> S,
) -> Result<Outcome, DecodeError> {
    assert_chunking_invariant(body, &|chunks| {
        let mut s = new();
        for c in chunks {
            s.push(c)?;
        }
        s.finish()
    })
}

/// Pushes `body` into `s` cut after each of the `chunks` sizes in turn, the rest last; the
/// outcome, panicking on a decode error.
pub(crate) fn stream_in_chunks(mut s: impl CodecStream, body: &[u8], chunks: &[usize]) -> Outcome {
    let mut rest = body;
    for &n in chunks {
        let (a, b) = rest.split_at(n.min(rest.len()));
        s.push(a).unwrap();
        rest = b;
    }
    s.push(rest).unwrap();
    s.finish().unwrap()
}

/// An answer with `status`, no headers and `body`.
pub(crate) fn response(status: u16, body: &str) -> HttpResponse {
    HttpResponse {
        status,
        headers: BTreeMap::new(),
        body: body.as_bytes().to_vec(),
    }
}

/// The message of the error a codec's `decode_request` gives for `body` posted to `path`.
pub(crate) fn request_error(
    decode_request: fn(&HttpRequest) -> Result<DecodedRequest, DecodeError>,
    path: &str,
    body: Value,
) -> String {
    decode_request(&HttpRequest::post(path, body))
        .unwrap_err()
        .to_string()
}

/// Each `(raw, finish)`: the answer `body_of(raw)` decodes to `finish`, with `raw` kept as the
/// raw finish.
pub(crate) fn assert_finish_reasons(
    cases: &[(&str, Finish)],
    body_of: impl Fn(&str) -> String,
    decode: impl Fn(&HttpResponse) -> Result<Outcome, DecodeError>,
) {
    for &(raw, finish) in cases {
        let o = decode(&response(200, &body_of(raw))).unwrap();
        assert_eq!(
            (o.finish, o.raw_finish.as_deref()),
            (finish, Some(raw)),
            "{raw}"
        );
    }
}

/// A tool choice of every kind: the three plain ones, a forced one, and an allowed list in each
/// mode (a tool name with an underscore among them).
pub(crate) fn every_choice() -> [ToolChoice; 6] {
    [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Forced("get_weather".into()),
        ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            tools: vec!["a".into(), "b".into()],
        },
        ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools: vec!["a".into(), "b_c".into()],
        },
    ]
}

/// The tool choices Chat and Responses both send as a bare string, with that string.
pub(crate) fn openai_string_choices() -> [(ToolChoice, Value); 3] {
    [
        (ToolChoice::Auto, Value::from("auto")),
        (ToolChoice::None, Value::from("none")),
        (ToolChoice::Required, Value::from("required")),
    ]
}

/// A `get_weather` call with id `id` and `arguments`, no thought signature.
pub(crate) fn weather_call(id: &str, arguments: Value) -> ToolCall {
    ToolCall::unsigned(id, "get_weather", arguments)
}

/// `get_weather`'s result for the call `call_id`: `content`, an error result when `is_error`.
pub(crate) fn weather_result(call_id: &str, content: &str, is_error: bool) -> Message {
    Message::Tool {
        call_id: call_id.into(),
        name: "get_weather".into(),
        content: content.into(),
        is_error,
        parts: Vec::new(),
    }
}

/// Asserts some encoder note mentions `text`.
pub(crate) fn assert_noted(notes: &[String], text: &str) {
    assert!(notes.iter().any(|n| n.contains(text)), "{text}: {notes:?}");
}

/// Each tool call's id and arguments, in order.
pub(crate) fn ids_and_arguments(o: &Outcome) -> Vec<(&str, &Value)> {
    o.tool_calls
        .iter()
        .map(|c| (c.id.as_str(), &c.arguments))
        .collect()
}

/// A tool `name` whose parameters are any object, nothing else set.
pub(crate) fn object_tool(name: &str) -> Tool {
    Tool::function(name, None, serde_json::json!({"type": "object"}))
}

/// A tool taking one string `q`, described as "`name` tool".
pub(crate) fn q_tool(name: &str) -> Tool {
    Tool::function(
        name,
        Some(format!("{name} tool")),
        serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    )
}

/// `model` asked "hi" with a `q_tool` per name and `choice`.
pub(crate) fn q_request(model: &str, tools: &[&str], choice: Option<ToolChoice>) -> ChatRequest {
    ChatRequest::new(model)
        .with_user("hi")
        .with_tools(tools.iter().map(|n| q_tool(n)))
        .with_choice(choice)
}

/// `r` with a system message ("sys") first and a developer message ("dev") last.
pub(crate) fn with_instructions(mut r: ChatRequest) -> ChatRequest {
    r.messages.insert(
        0,
        Message::System {
            content: "sys".into(),
        },
    );
    r.messages.push(Message::Developer {
        content: "dev".into(),
    });
    r
}

pub(crate) fn tool(name: &str) -> Tool {
    Tool::function(
        name,
        Some(format!("The {name} tool.")),
        serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

pub(crate) fn request(tools: &[&str], stream: bool) -> ChatRequest {
    ChatRequest::new("gpt-test")
        .with_user("Weather in Paris?")
        .with_tools(tools.iter().map(|n| tool(n)))
        .with_stream(stream)
        .with_strict(StrictPolicy::Auto)
}
