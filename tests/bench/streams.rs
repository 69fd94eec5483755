//! The four providers' stream decoders, whole body and 1-byte pushes, against the stream
//! targets. Each calls its provider's `Stream` directly, not `providers::StreamDecoder`: the
//! enum dispatch per push costs the 1-byte path (ratios 2.0-2.5x measured through it), and the
//! figures are the decoders'.

use std::time::Duration;

use crate::report::{Report, fastest_pair, mb_per_s};
use tooltape::{
    ChatRequest, Outcome, providers::anthropic, providers::gemini, providers::openai_chat,
    providers::openai_responses,
};

/// The request every stream-decode section decodes against: no tools, streaming.
fn stream_request() -> ChatRequest {
    ChatRequest::new("bench")
        .with_stream(true)
        .with_strict(Default::default())
}

/// Times `decode(body, chunk_len)` (which returns the calls it decoded) on the whole body and in
/// 1-byte chunks, alternately; reports `{label}, …` figures against the stream targets
/// (>= 300 MB/s whole, 1-byte less than 2x slower).
fn stream_decode(
    report: &mut Report,
    label: &str,
    body: &[u8],
    decode: &dyn Fn(&[u8], usize) -> usize,
) {
    let calls = decode(body, body.len());
    report.note(&format!("{label}: {} bytes, {calls} calls", body.len()));
    let (whole, bytewise) = fastest_pair(
        Duration::from_millis(1000),
        || {
            std::hint::black_box(decode(body, body.len()));
        },
        || {
            std::hint::black_box(decode(body, 1));
        },
    );
    let (w, b) = (mb_per_s(body.len(), whole), mb_per_s(body.len(), bytewise));
    let ratio = bytewise.as_secs_f64() / whole.as_secs_f64();
    report.figure(
        &format!("{label}, whole body"),
        w,
        "MB/s",
        Some((">= 300", w >= 300.0)),
    );
    report.figure(&format!("{label}, 1-byte chunks"), b, "MB/s", None);
    report.figure(
        &format!("{label}, 1-byte / whole time"),
        ratio,
        "x",
        Some(("< 2", ratio < 2.0)),
    );
}

/// Chat Completions: 256 calls, arguments in 4-byte fragments.
pub fn openai_chat(report: &mut Report) {
    report.section("openai-chat stream decode");
    let body = openai_chat::synthetic_stream(256, 4);
    let req = stream_request();
    stream_decode(
        report,
        "openai-chat stream",
        body.as_bytes(),
        &|bytes, chunk| {
            let mut s = openai_chat::Stream::new(&req);
            for c in bytes.chunks(chunk) {
                let _ = s.push(c);
            }
            s.finish().map(|o| o.tool_calls.len()).unwrap_or(0)
        },
    );
    calls_scale(
        report,
        "openai-chat stream",
        &|calls| openai_chat::synthetic_stream(calls, 17),
        &|body| {
            let mut s = openai_chat::Stream::new(&req);
            let _ = s.push(body);
            s.finish().map(|o| o.tool_calls.len()).unwrap_or(0)
        },
    );
}

/// Calls in the small and the large stream of [`calls_scale`].
const SCALE: (usize, usize) = (500, 16_000);

/// The time per byte of a stream of `SCALE.1` calls against one of `SCALE.0` (bodies from
/// `make`, decoded whole by `decode`, which returns the calls it decoded): a decoder whose work
/// per call grows with the calls before it (a search through them all, as 740759c brought back:
/// 367 -> 135 MB/s on 8,000 calls) shows it here as a ratio above the target, whatever the
/// machine's speed.
fn calls_scale(
    report: &mut Report,
    label: &str,
    make: &dyn Fn(usize) -> String,
    decode: &dyn Fn(&[u8]) -> usize,
) {
    let (small, large) = (make(SCALE.0), make(SCALE.1));
    let decoded = (decode(small.as_bytes()), decode(large.as_bytes()));
    if decoded != SCALE {
        report.note(&format!(
            "{label}: decoded {decoded:?} calls, expected {SCALE:?}"
        ));
        report.missed += 1;
        return;
    }
    let (t_small, t_large) = fastest_pair(
        Duration::from_millis(1500),
        || {
            std::hint::black_box(decode(small.as_bytes()));
        },
        || {
            std::hint::black_box(decode(large.as_bytes()));
        },
    );
    let per_byte = |d: Duration, len: usize| d.as_secs_f64() / len as f64;
    let ratio = per_byte(t_large, large.len()) / per_byte(t_small, small.len());
    report.figure(
        &format!(
            "{label}, time per byte at {} calls / at {}",
            SCALE.1, SCALE.0
        ),
        ratio,
        "x",
        Some(("< 1.5", ratio < 1.5)),
    );
}

/// Responses: 256 calls, arguments in 4-byte fragments.
pub fn openai_responses(report: &mut Report) {
    report.section("openai-responses stream decode");
    let body = openai_responses::synthetic_stream(256, 4);
    let req = stream_request();
    stream_decode(
        report,
        "openai-responses stream",
        body.as_bytes(),
        &|bytes, chunk| {
            let mut s = openai_responses::Stream::new(&req);
            for c in bytes.chunks(chunk) {
                let _ = s.push(c);
            }
            s.finish().map(|o| o.tool_calls.len()).unwrap_or(0)
        },
    );
}

/// Anthropic Messages: 400 calls, arguments in 12-byte `input_json_delta` fragments.
pub fn anthropic(report: &mut Report) {
    report.section("anthropic stream decode");
    let body = anthropic::synthetic_stream(400, 12);
    let req = stream_request();
    stream_decode(
        report,
        "anthropic stream",
        body.as_bytes(),
        &|bytes, chunk| {
            let mut s = anthropic::Stream::new(&req);
            let pushed = bytes.chunks(chunk).all(|c| s.push(c).is_ok());
            calls_of(pushed.then(|| s.finish().ok()).flatten())
        },
    );
}

/// Gemini, both framings (SSE and the streamed JSON array): 1000 calls after 200-byte texts.
pub fn gemini(report: &mut Report) {
    report.section("gemini stream decode");
    let req = stream_request();
    for (label, body) in [
        ("gemini sse", gemini::synthetic_stream(1000, 200)),
        ("gemini json array", gemini::synthetic_array(1000, 200)),
    ] {
        stream_decode(report, label, body.as_bytes(), &|bytes, chunk| {
            let mut s = gemini::Stream::new(&req);
            let pushed = bytes.chunks(chunk).all(|c| s.push(c).is_ok());
            calls_of(pushed.then(|| s.finish().ok()).flatten())
        });
    }
}

/// Calls decoded (0 when the decode failed), dropping the outcome inside the timed run.
fn calls_of(o: Option<Outcome>) -> usize {
    o.map_or(0, |o| o.tool_calls.len())
}
