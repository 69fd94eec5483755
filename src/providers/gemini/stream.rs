//! Gemini streamed responses: SSE (`alt=sse`) or a streamed JSON array, sniffed from the first
//! non-whitespace byte; each chunk is a `GenerateContentResponse` fed to the shared `Accum`.
//! Also the large synthetic streams the tests and `cargo bench` decode.

use std::fmt::Write as _;

use super::decode::{Accum, Chunk};
use crate::jsonseq::{JsonSeqDecoder, JsonSeqError};
use crate::model::DecodeError;
use crate::model::{ChatRequest, Diagnostic, Outcome};
use crate::sse::SseDecoder;

impl From<JsonSeqError> for DecodeError {
    fn from(e: JsonSeqError) -> DecodeError {
        DecodeError::at(e.message, e.line, Some(e.column))
    }
}

/// `repr(u8)`: an explicit one-byte tag, so the per-push `match` is a byte compare instead of
/// decoding a niche inside the decoders (measurable when pushes are a byte each).
#[repr(u8)]
enum Framing {
    /// Only whitespace so far: the framing is not known yet.
    Unknown,
    Sse(SseDecoder),
    Array(JsonSeqDecoder),
}

/// Push-based stream decoder: feed bytes in any chunking, then `finish`.
pub struct Stream {
    req: ChatRequest,
    framing: Framing,
    acc: Accum,
}

impl Stream {
    pub fn new(req: &ChatRequest) -> Stream {
        Stream {
            req: req.clone(),
            framing: Framing::Unknown,
            acc: Accum::default(),
        }
    }

    pub fn request(&self) -> ChatRequest {
        self.req.clone()
    }

    /// What has been decoded so far: Gemini sends each call whole, so calls appear complete.
    pub fn progress(&self) -> crate::providers::Progress<'_> {
        let o = &self.acc.outcome;
        crate::providers::Progress {
            text: o.text.as_deref().into_iter().collect(),
            calls: o
                .tool_calls
                .iter()
                .map(crate::providers::CallProgress::whole)
                .collect(),
        }
    }

    /// Inlined, and the framing matched first, so that the framers' fast paths for chunks that
    /// complete nothing reach callers. `always`: with both framings in its body the compiler
    /// otherwise keeps it out of line (a call and register saves per push, measured in the bench).
    #[inline(always)]
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let acc = &mut self.acc;
        match &mut self.framing {
            Framing::Sse(sse) => sse.push(bytes, &mut |ev| apply(acc, ev.data, ev.line)),
            Framing::Array(seq) => seq.push(bytes, &mut |el| apply(acc, el.text, el.line)),
            Framing::Unknown => self.sniff(bytes),
        }
    }

    /// Before the framing is known: leading whitespace carries nothing in either framing, so it
    /// is dropped until a byte decides.
    fn sniff(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let Some(pos) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
            return Ok(());
        };
        let bytes = &bytes[pos..];
        self.framing = match bytes[0] {
            b'[' | b'{' => Framing::Array(JsonSeqDecoder::new()),
            _ => Framing::Sse(SseDecoder::new()),
        };
        self.push(bytes)
    }

    /// Decodes what arrived. EOF is Gemini's only terminator: without any `finishReason` (or an
    /// error chunk) the outcome carries `StreamTruncated`.
    pub fn finish(mut self) -> Result<Outcome, DecodeError> {
        let acc = &mut self.acc;
        let mut cut = false;
        match &mut self.framing {
            Framing::Unknown => {}
            Framing::Sse(sse) => sse.finish(&mut |ev| apply(acc, ev.data, ev.line))?,
            Framing::Array(seq) => cut = seq.is_incomplete(),
        }
        if self.acc.chunks == 0 {
            return Err(DecodeError::new(
                "not a Gemini stream: no response chunk (an SSE `data:` event or a JSON array element)",
            ));
        }
        let complete = (self.acc.saw_finish && !cut) || self.acc.outcome.error.is_some();
        let mut outcome = self.acc.into_outcome();
        if !complete {
            outcome
                .diagnostics
                .push(Diagnostic::stream_truncated(if cut {
                    "stream ended inside the JSON array"
                } else {
                    "stream ended without a finishReason"
                }));
        }
        Ok(outcome)
    }
}

fn apply(acc: &mut Accum, data: &str, line: usize) -> Result<(), DecodeError> {
    let chunk: Chunk<'_> = serde_json::from_str(data)
        .map_err(|e| DecodeError::json("gemini stream chunk", &e, line))?;
    acc.chunk(chunk, 200);
    Ok(())
}

/// A large SSE stream (CRLF, as the API sends it) of `calls` calls, each preceded by a text
/// chunk of `fragment_len` bytes: many small chunks, like a real long answer.
#[doc(hidden)]
pub fn synthetic_stream(calls: usize, fragment_len: usize) -> String {
    let mut s = String::new();
    let text = "lorem ipsum dolor sit amet ".repeat(fragment_len / 27 + 1);
    let text = &text[..fragment_len];
    let usage = r#""usageMetadata":{"promptTokenCount":70,"candidatesTokenCount":40,"totalTokenCount":186},"modelVersion":"gemini-bench","responseId":"bench""#;
    for c in 0..calls {
        let _ = write!(
            s,
            "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{text} {c}\"}}],\"role\": \"model\"}},\"index\": 0}}],{usage}}}\r\n\r\n"
        );
        let _ = write!(
            s,
            "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"functionCall\": {{\"name\": \"search\",\"args\": {{\"query\": \"item {c} {text}\",\"limit\": {c},\"tags\": [\"a\",\"b\"]}}}},\"thoughtSignature\": \"CikB0e2Kbw5tJ9dwYB9m1I9W28H1Pvbhg7iFnlQJMZT9ndxhy{c}\"}}],\"role\": \"model\"}},\"index\": 0}}],{usage}}}\r\n\r\n"
        );
    }
    let _ = write!(
        s,
        "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"\"}}],\"role\": \"model\"}},\"finishReason\": \"STOP\",\"index\": 0}}],{usage}}}\r\n\r\n"
    );
    s
}

/// The same chunks as a streamed JSON array (no `alt=sse`).
#[doc(hidden)]
pub fn synthetic_array(calls: usize, fragment_len: usize) -> String {
    let sse = synthetic_stream(calls, fragment_len);
    let items: Vec<&str> = sse
        .split("\r\n\r\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .collect();
    format!("[{}]", items.join("\n,\r\n"))
}
