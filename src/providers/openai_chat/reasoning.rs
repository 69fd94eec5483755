//! A model server's reasoning text on a Chat Completions message: `reasoning` (vLLM since PR
//! #27752, OpenRouter) or `reasoning_content` (DeepSeek, llama.cpp, vLLM before). Kept as one
//! opaque item of the turn, `{field: text}` for each field the answer carried, and written back
//! on the assistant message it came with: a server with interleaved thinking renders it into the
//! next prompt (vLLM docs, "Interleaved Thinking"; vllm-project/vllm#38488).

use serde_json::{Map, Value};

/// The fields, in the order they are written back.
pub(crate) const FIELDS: [&str; 2] = ["reasoning", "reasoning_content"];

/// The item for the non-empty texts among `(field, text)`, or `None` when there is none.
pub(crate) fn item<'a>(texts: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Value> {
    let map: Map<String, Value> = texts
        .into_iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(f, t)| (f.to_string(), Value::String(t.to_string())))
        .collect();
    (!map.is_empty()).then_some(Value::Object(map))
}

/// Whether `v` is such an item: an object whose keys are all reasoning fields holding text.
pub(crate) fn is_item(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        !o.is_empty()
            && o.iter()
                .all(|(k, v)| FIELDS.contains(&k.as_str()) && v.is_string())
    })
}

/// Writes the reasoning items among `opaque` onto `message`; the number of items written.
pub(crate) fn write(message: &mut Map<String, Value>, opaque: &[Value]) -> usize {
    let mut written = 0;
    for item in opaque.iter().filter(|v| is_item(v)) {
        if let Some(o) = item.as_object() {
            message.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        written += 1;
    }
    written
}
