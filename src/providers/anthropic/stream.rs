//! Anthropic streamed Messages: SSE events → outcome, push-based and chunking-invariant; plus the
//! large synthetic stream the tests and `cargo bench` decode.

use std::fmt::Write as _;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::decode::{Builder, Delta, MessageHead, WireError, WireUsage, provider_error};
use crate::model::DecodeError;
use crate::model::{ChatRequest, Diagnostic, Outcome};
use crate::providers::openai_chat::wire::BStr;
use crate::sse::{SseDecoder, SseEvent};

/// The fields of an event this decoder reads.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum EventKey {
    Type,
    Index,
    Delta,
    ContentBlock,
    Message,
    Usage,
    Error,
    #[serde(other)]
    Other,
}

/// One event's data read into locals (borrowed strings: deltas, the hot path, allocate only when
/// a fragment contains escapes) and applied to the state, without building an event struct: a
/// derived one was copied through every serde result layer, the largest per-event cost.
struct EventSeed<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut e = Event::default();
        while let Some(key) = map.next_key::<EventKey>()? {
            match key {
                EventKey::Type => e.kind = Some(map.next_value()?),
                EventKey::Index => e.index = map.next_value()?,
                EventKey::Delta => e.delta = map.next_value()?,
                EventKey::ContentBlock => e.content_block = map.next_value()?,
                EventKey::Message => e.message = map.next_value()?,
                EventKey::Usage => e.usage = map.next_value()?,
                EventKey::Error => e.error = map.next_value()?,
                EventKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let Some(kind) = e.kind.take() else {
            return Err(de::Error::missing_field("type"));
        };
        self.0.apply(kind.as_str(), e);
        Ok(())
    }
}

/// The fields of one event, filled in place by [`EventSeed`] (`kind` is required: taken out
/// before the event is applied).
#[derive(Default)]
struct Event<'a> {
    kind: Option<BStr<'a>>,
    index: Option<u64>,
    delta: Option<Delta<'a>>,
    content_block: Option<Value>,
    message: Option<MessageHead>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
}

/// Push-based stream decoder: feed bytes in any chunking, then `finish`.
pub struct Stream {
    req: ChatRequest,
    sse: SseDecoder,
    state: State,
}

#[derive(Default)]
struct State {
    b: Builder,
    /// `message_stop` or an `error` event ended the stream.
    ended: bool,
    /// `message_start` opened it.
    opened: bool,
}

impl Stream {
    pub fn new(req: &ChatRequest) -> Stream {
        Stream {
            req: req.clone(),
            sse: SseDecoder::new(),
            state: State::default(),
        }
    }

    pub fn request(&self) -> ChatRequest {
        self.req.clone()
    }

    /// What has been decoded so far (see [`crate::providers::Progress`]).
    pub fn progress(&self) -> crate::providers::Progress<'_> {
        self.state.b.progress()
    }

    /// Inlined so that the SSE framer's fast path for chunks that end no line reaches callers.
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let state = &mut self.state;
        self.sse.push(bytes, &mut |ev| state.event(ev))
    }

    /// Decodes what arrived; without `message_stop` the outcome carries `StreamTruncated`.
    pub fn finish(mut self) -> Result<Outcome, DecodeError> {
        let state = &mut self.state;
        self.sse.finish(&mut |ev| state.event(ev))?;
        let ended = self.state.ended;
        if !ended && !self.state.opened {
            return Err(DecodeError::new(
                "not an Anthropic message stream: no `message_start` or `message_stop` event",
            ));
        }
        let mut outcome = self.state.b.into_outcome();
        if !ended {
            outcome.diagnostics.push(Diagnostic::stream_truncated(
                "stream ended without message_stop",
            ));
        }
        Ok(outcome)
    }
}

impl State {
    fn event(&mut self, ev: SseEvent<'_>) -> Result<(), DecodeError> {
        let mut de = serde_json::Deserializer::from_str(ev.data);
        EventSeed(self)
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .map_err(|err| DecodeError::json("anthropic stream event", &err, ev.line))
    }

    /// Applies an event of type `kind`.
    fn apply(&mut self, kind: &str, e: Event<'_>) {
        let b = &mut self.b;
        match kind {
            "content_block_delta" => {
                if let (Some(i), Some(d)) = (e.index, &e.delta) {
                    b.delta(i, d);
                }
            }
            "content_block_start" => {
                if let (Some(i), Some(block)) = (e.index, &e.content_block) {
                    b.start(i, block);
                }
            }
            "content_block_stop" => {
                if let Some(i) = e.index {
                    b.stop(i);
                }
            }
            "message_start" => {
                self.opened = true;
                if let Some(m) = e.message {
                    b.outcome.model = m.model;
                    if let Some(u) = &m.usage {
                        b.usage(u);
                    }
                    b.container(m.container.as_ref());
                }
            }
            "message_delta" => {
                if let Some(r) = e.delta.as_ref().and_then(|d| d.stop_reason.as_ref()) {
                    b.stop_reason(r.as_str());
                }
                b.container(e.delta.as_ref().and_then(|d| d.container.as_ref()));
                if let Some(u) = &e.usage {
                    b.usage(u);
                }
            }
            "message_stop" => self.ended = true,
            "error" => {
                // An error after the 200: the stream ends here (the SDK raises a status error).
                let err = e.error.unwrap_or(WireError::unknown());
                b.outcome.error = Some(provider_error(200, &err));
                self.ended = true;
            }
            _ => {} // `ping` and event types added later carry nothing we need
        }
    }
}

/// A large stream of `calls` tool calls whose arguments arrive in `fragment_len`-byte
/// `input_json_delta` fragments, framed like the real API (CRLF-free, `event:` lines, pings).
#[doc(hidden)]
pub fn synthetic_stream(calls: usize, fragment_len: usize) -> String {
    let fragment_len = fragment_len.max(1);
    let mut s = String::new();
    let ev = |s: &mut String, name: &str, data: &str| {
        let _ = write!(s, "event: {name}\ndata: {data}\n\n");
    };
    ev(
        &mut s,
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}"#,
    );
    ev(
        &mut s,
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    );
    ev(
        &mut s,
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Calling tools."}}"#,
    );
    ev(
        &mut s,
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    );
    for c in 0..calls {
        let index = c + 1;
        let start = format!(
            r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"toolu_{c:06}","name":"search","input":{{}}}}}}"#
        );
        ev(&mut s, "content_block_start", &start);
        let args = format!(
            r#"{{"query": "item {c} {}", "limit": {c}, "tags": ["a", "b"]}}"#,
            "lorem ipsum dolor sit amet ".repeat(8)
        );
        let bytes = args.as_bytes();
        for chunk in bytes.chunks(fragment_len) {
            // ASCII arguments: every chunk boundary is a char boundary.
            let frag = String::from_utf8_lossy(chunk);
            let data = serde_json::json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": frag}});
            ev(&mut s, "content_block_delta", &data.to_string());
        }
        ev(
            &mut s,
            "content_block_stop",
            &format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
        );
        if c % 50 == 0 {
            ev(&mut s, "ping", r#"{"type": "ping"}"#);
        }
    }
    ev(
        &mut s,
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5000}}"#,
    );
    ev(&mut s, "message_stop", r#"{"type":"message_stop"}"#);
    s
}
