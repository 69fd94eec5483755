//! Wire helpers shared by the simulated APIs: FNV ids, small fragments, SSE framing, JSON
//! bodies and token estimates. Everything here is deterministic.

use std::collections::BTreeMap;

use serde_json::Value;

use super::exchange::{SimBody, SimResponse};
use crate::fnv::fnv1a;

/// Fixed creation time of every simulated answer (2026-01-01T00:00:00Z): answers must be
/// byte-identical for identical requests.
pub(crate) const CREATED: u64 = 1_767_225_600;

/// A derived hash: the request seed, what the id is for, and its position.
fn mix(seed: u64, salt: &str, pos: usize) -> u64 {
    let mut buf = Vec::with_capacity(16 + salt.len() + 8);
    buf.extend_from_slice(&seed.to_le_bytes());
    buf.extend_from_slice(salt.as_bytes());
    buf.extend_from_slice(&(pos as u64).to_le_bytes());
    fnv1a(&buf)
}

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `prefix` + `len` alphanumeric characters, the same for the same request, salt and position.
pub(crate) fn id(prefix: &str, seed: u64, salt: &str, pos: usize, len: usize) -> String {
    let mut out = String::with_capacity(prefix.len() + len);
    out.push_str(prefix);
    let mut h = mix(seed, salt, pos);
    for i in 0..len {
        if i % 10 == 0 && i > 0 {
            h = mix(h, salt, i);
        }
        out.push(char::from(ALPHABET[(h % 62) as usize]));
        h /= 62;
    }
    out
}

/// Splits `s` into fragments of 5 to 9 bytes (at char boundaries), so that tags, keys and
/// escapes are split across stream events like real token streams do.
pub(crate) fn fragments(s: &str, seed: u64) -> Vec<&str> {
    const SIZES: [usize; 5] = [5, 8, 6, 9, 7];
    let mut out = Vec::new();
    let mut start = 0;
    let mut turn = (seed % 5) as usize;
    while start < s.len() {
        let mut end = (start + SIZES[turn % 5]).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
        turn += 1;
    }
    out
}

pub(crate) use crate::respond::sse;

fn headers(content_type: &str) -> BTreeMap<String, String> {
    let mut h = BTreeMap::new();
    h.insert("content-type".to_string(), content_type.to_string());
    h
}

/// A whole JSON body; `pretty` like the OpenAI and Gemini servers format theirs.
pub(crate) fn json_response(status: u16, body: &Value, pretty: bool) -> SimResponse {
    let bytes = if pretty {
        serde_json::to_vec_pretty(body).unwrap_or_default()
    } else {
        body.to_string().into_bytes()
    };
    SimResponse {
        status,
        headers: headers("application/json"),
        body: SimBody::Full(bytes),
    }
}

/// A 200 stream of pre-framed chunks.
pub(crate) fn stream_response(content_type: &str, chunks: Vec<Vec<u8>>) -> SimResponse {
    let mut h = headers(content_type);
    h.insert("cache-control".to_string(), "no-cache".to_string());
    SimResponse {
        status: 200,
        headers: h,
        body: SimBody::Chunks(chunks),
    }
}

/// A rough token count (4 bytes per token, at least 1): usage numbers must be plausible and stable.
pub(crate) fn tokens(len: usize) -> u64 {
    (len as u64).div_ceil(4).max(1)
}

/// Compact JSON text of a value.
pub(crate) fn compact(v: &Value) -> String {
    v.to_string()
}

/// The first half of `s` (at a char boundary): arguments cut by the output-token limit.
pub(crate) fn half(s: &str) -> &str {
    let mut end = s.len() / 2;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The stream's first half (at least its first event), then `error`: a failure after a 200.
pub(crate) fn fail_midway(mut chunks: Vec<Vec<u8>>, error: Vec<u8>) -> Vec<Vec<u8>> {
    chunks.truncate((chunks.len() / 2).max(1));
    chunks.push(error);
    chunks
}

/// The stream's first half (at least its first event): it ends before its terminal event.
pub(crate) fn cut_midway(mut chunks: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    chunks.truncate((chunks.len() / 2).max(1));
    chunks
}
