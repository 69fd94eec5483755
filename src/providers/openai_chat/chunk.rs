//! One Chat Completions stream chunk applied straight to the decoder state by serde seeds.
//!
//! The stream hot path: deserializing each `chat.completion.chunk` into a tree of derived structs
//! and then applying it moved that tree through every `Result<Option<…>>` layer (dozens of copies
//! per event). Seeds write into [`State`] as fields arrive instead; only a tool-call delta, which
//! must be located by `index`/`id` before its arguments apply, is still read as a small struct.
//!
//! Semantics are those of the whole-chunk decode: only the first choice counts, and only when its
//! `index` is 0 (or absent); a `delta` seen before its choice's `index` is kept as raw JSON and
//! applied once the index is known.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::state::State;
use super::wire::{BStr, CallDeltaWire, UsageWire};

/// Applies one chunk's JSON text to `st`.
pub(super) fn apply(st: &mut State, data: &str) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(data);
    Chunk(st).deserialize(&mut de)?;
    de.end()
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChunkKey {
    Choices,
    Model,
    Usage,
    Error,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChoiceKey {
    Index,
    Delta,
    FinishReason,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum DeltaKey {
    Content,
    Refusal,
    Reasoning,
    ReasoningContent,
    ToolCalls,
    #[serde(other)]
    Other,
}

/// Each seed below is its own visitor over [`State`], read as a map or as a sequence.
macro_rules! self_visiting_seeds {
    ($($seed:ident: $read:ident),*) => {$(
        impl<'de> DeserializeSeed<'de> for $seed<'_> {
            type Value = ();
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.$read(self)
            }
        }
    )*};
}

self_visiting_seeds!(
    Chunk: deserialize_map,
    Choices: deserialize_seq,
    Choice: deserialize_map,
    Delta: deserialize_map,
    Calls: deserialize_seq
);

struct Chunk<'s>(&'s mut State);

impl<'de> Visitor<'de> for Chunk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a chat.completion.chunk object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        while let Some(key) = map.next_key::<ChunkKey>()? {
            match key {
                ChunkKey::Choices => map.next_value_seed(OrNull(Choices(st)))?,
                ChunkKey::Model => {
                    if let Some(m) = map.next_value::<Option<BStr<'de>>>()? {
                        st.set_model(m);
                    }
                }
                ChunkKey::Usage => {
                    if let Some(u) = map.next_value::<Option<UsageWire>>()? {
                        st.usage = Some(u.to_usage());
                    }
                }
                ChunkKey::Error => {
                    let err = map.next_value::<Value>()?;
                    st.set_error(&err);
                }
                ChunkKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `null` (nothing to apply) or a value the inner seed applies.
struct OrNull<S>(S);

impl<'de, S: DeserializeSeed<'de, Value = ()>> DeserializeSeed<'de> for OrNull<S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, S: DeserializeSeed<'de, Value = ()>> Visitor<'de> for OrNull<S> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.deserialize(d)
    }
}

/// `choices`: a list of which only the first element is read.
struct Choices<'s>(&'s mut State);

impl<'de> Visitor<'de> for Choices<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // With `n > 1` other choices interleave; only choice 0 is the answer.
        seq.next_element_seed(Choice(self.0))?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

struct Choice<'s>(&'s mut State);

impl<'de> Visitor<'de> for Choice<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a choice object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        let mut index: Option<u64> = None;
        let mut deferred: Option<&'de RawValue> = None;
        let mut finish: Option<BStr<'de>> = None;
        while let Some(key) = map.next_key::<ChoiceKey>()? {
            match key {
                ChoiceKey::Index => index = map.next_value()?,
                // The usual order (`index` first): apply as it is read.
                ChoiceKey::Delta if index == Some(0) => {
                    map.next_value_seed(OrNull(Delta(&mut *st)))?;
                }
                ChoiceKey::Delta => deferred = map.next_value()?,
                ChoiceKey::FinishReason => finish = map.next_value()?,
                ChoiceKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if index.unwrap_or(0) != 0 {
            return Ok(());
        }
        if let Some(raw) = deferred {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            OrNull(Delta(&mut *st))
                .deserialize(&mut de)
                .map_err(de::Error::custom)?;
        }
        // The last non-null finish_reason wins (Mistral sends it with the whole call).
        if let Some(f) = finish {
            st.finish_reason = Some(f.0.into_owned());
        }
        Ok(())
    }
}

/// `delta`: text, refusal, reasoning and tool-call deltas.
struct Delta<'s>(&'s mut State);

impl<'de> Visitor<'de> for Delta<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a delta object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        while let Some(key) = map.next_key::<DeltaKey>()? {
            match key {
                // A refusal is the text the model answered with (see `decode`).
                DeltaKey::Content | DeltaKey::Refusal => {
                    if let Some(t) = map.next_value::<Option<BStr<'de>>>()? {
                        st.text.push_str(t.as_str());
                    }
                }
                // A model server's reasoning text (`reasoning.rs`), kept per field.
                DeltaKey::Reasoning | DeltaKey::ReasoningContent => {
                    if let Some(t) = map.next_value::<Option<BStr<'de>>>()? {
                        let k = usize::from(matches!(key, DeltaKey::ReasoningContent));
                        st.reasoning[k].push_str(t.as_str());
                    }
                }
                DeltaKey::ToolCalls => map.next_value_seed(OrNull(Calls(&mut *st)))?,
                DeltaKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `tool_calls`: a list of call deltas applied in order.
struct Calls<'s>(&'s mut State);

impl<'de> Visitor<'de> for Calls<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(call) = seq.next_element::<CallDeltaWire<'de>>()? {
            self.0.apply_call(call);
        }
        Ok(())
    }
}
