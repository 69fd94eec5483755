//! The Chat stream chunk the proxy writes per delta, as borrowed structs: the same bytes as the
//! `json!` objects they replace (same keys, same order), without building a `serde_json::Value`
//! (an ordered map, a hash per key and an allocation per node) for every event of a stream.

use serde::Serialize;

/// One Chat stream chunk, as its keys go on the wire.
#[derive(Serialize)]
pub(super) struct ChatChunk<'a, D: Serialize> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub choices: [ChunkChoice<'a, D>; 1],
}

#[derive(Serialize)]
pub(super) struct ChunkChoice<'a, D: Serialize> {
    pub index: u32,
    pub delta: &'a D,
    pub logprobs: (),
    /// `null` until the last chunk.
    pub finish_reason: Option<&'a str>,
}

/// The first delta: `{"role":"assistant","content":"","refusal":null}`.
#[derive(Serialize)]
pub(super) struct RoleDelta {
    pub role: &'static str,
    pub content: &'static str,
    pub refusal: (),
}

/// A text fragment: `{"content":…}`.
#[derive(Serialize)]
pub(super) struct TextDelta<'a> {
    pub content: &'a str,
}

/// The last delta, `{}`, beside the finish reason.
#[derive(Serialize)]
pub(super) struct EmptyDelta {}

/// A call's start or one of its argument fragments: `{"tool_calls":[…]}` with one call delta.
#[derive(Serialize)]
pub(super) struct CallsDelta<C: Serialize> {
    pub tool_calls: [C; 1],
}

/// A call's start: `{"index":k,"id":…,"type":"function","function":{"name":…,"arguments":""}}`.
#[derive(Serialize)]
pub(super) struct CallStart<'a> {
    pub index: usize,
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: NameAndArguments<'a>,
}

#[derive(Serialize)]
pub(super) struct NameAndArguments<'a> {
    pub name: &'a str,
    pub arguments: &'static str,
}

/// An argument fragment: `{"index":k,"function":{"arguments":…}}`.
#[derive(Serialize)]
pub(super) struct CallArguments<'a> {
    pub index: usize,
    pub function: Arguments<'a>,
}

#[derive(Serialize)]
pub(super) struct Arguments<'a> {
    pub arguments: &'a str,
}
