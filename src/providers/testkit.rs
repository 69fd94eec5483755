//! Test helpers shared by the provider codecs: chunking invariance (whole, per byte, every split
//! point, inside multi-byte UTF-8, seeded random chunks) and request builders.

use crate::model::DecodeError;
use crate::model::{ChatRequest, Outcome, StrictPolicy, Tool};

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

pub(crate) fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: Some(format!("The {name} tool.")),
        parameters: serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        strict: None,
    }
}

pub(crate) fn request(tools: &[&str], stream: bool) -> ChatRequest {
    ChatRequest::new("gpt-test")
        .with_user("Weather in Paris?")
        .with_tools(tools.iter().map(|n| tool(n)))
        .with_stream(stream)
        .with_strict(StrictPolicy::Auto)
}
