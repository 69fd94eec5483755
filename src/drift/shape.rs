//! Drift at the wire level: the shape of stored responses (JSON paths with array indices folded
//! to `[]`, their types, stream event kinds, noise fields). Pure functions.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::cassette::{Cassette, StoredResponse};

/// Keys whose values change on every recording (ids, timestamps, usage, fingerprints,
/// signatures, padding): compared only as cosmetic noise, never descended into.
pub(crate) const NOISE_KEYS: &[&str] = &[
    "id",
    "call_id",
    "tool_call_id",
    "tool_use_id",
    "item_id",
    "responseId",
    "created",
    "created_at",
    "completed_at",
    "createTime",
    "usage",
    "usageMetadata",
    "system_fingerprint",
    "sequence_number",
    "obfuscation",
    "signature",
    "thoughtSignature",
    "thought_signature",
    "x_groq",
];

/// Keys holding tool arguments (user data, not wire shape): kept as one typed leaf.
const OPAQUE_KEYS: &[&str] = &["input", "args", "arguments", "partialArgs", "partial_json"];

/// What the responses of one cassette look like.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Shape {
    /// Folded path (`$.choices[].message.content`, `<message_delta>.delta.stop_reason`) → JSON types seen.
    pub types: BTreeMap<String, BTreeSet<&'static str>>,
    /// Folded path of a noise key → the values seen there (compact JSON).
    pub noise: BTreeMap<String, BTreeSet<String>>,
    /// Stream event kinds: the SSE `event:` name, else the data's `type` (or `object`), else `data`.
    pub events: BTreeSet<String>,
    /// HTTP status of each interaction, in order.
    pub statuses: Vec<u16>,
}

/// The shape of every response of a cassette (interactions merged: drift is per trial).
pub(crate) fn shape_of(c: &Cassette) -> Shape {
    let mut s = Shape::default();
    for it in &c.interactions {
        add_response(&mut s, &it.response);
    }
    s
}

fn add_response(s: &mut Shape, r: &StoredResponse) {
    s.statuses.push(r.status);
    if let Some(body) = &r.body {
        walk(s, "$", body);
    }
    for entry in r.stream.iter().flatten() {
        let (kind, data) = parse_entry(entry);
        let Some(kind) = kind else { continue };
        s.events.insert(kind.clone());
        if let Some(v) = data {
            walk(s, &format!("<{kind}>"), &v);
        }
    }
}

/// One stored stream entry → (event kind, JSON data). SSE events and JSON-array elements.
pub(crate) fn parse_entry(entry: &str) -> (Option<String>, Option<Value>) {
    let (mut name, mut data, mut sse) = (String::new(), Vec::new(), false);
    for line in entry.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            name = v.trim().to_string();
            sse = true;
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v));
            sse = true;
        }
    }
    let text = if sse {
        data.join("\n")
    } else {
        let t = entry
            .trim()
            .trim_start_matches(['[', ','])
            .trim_end_matches(']')
            .trim();
        t.to_string()
    };
    if text.is_empty() && name.is_empty() {
        return (None, None);
    }
    let value: Option<Value> = serde_json::from_str(&text).ok();
    let kind = if !name.is_empty() {
        name
    } else if let Some(v) = &value {
        let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        field("type")
            .or_else(|| field("object"))
            .unwrap_or_else(|| {
                if v.get("error").is_some() {
                    "error".into()
                } else {
                    "data".into()
                }
            })
    } else {
        text.trim().to_string()
    };
    (Some(kind), value)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn walk(s: &mut Shape, path: &str, v: &Value) {
    s.types
        .entry(path.to_string())
        .or_default()
        .insert(type_name(v));
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = format!("{path}.{k}");
                if NOISE_KEYS.contains(&k.as_str()) {
                    s.types
                        .entry(p.clone())
                        .or_default()
                        .insert(type_name(child));
                    s.noise.entry(p).or_default().insert(child.to_string());
                } else if OPAQUE_KEYS.contains(&k.as_str()) {
                    s.types.entry(p).or_default().insert(type_name(child));
                } else {
                    walk(s, &p, child);
                }
            }
        }
        Value::Array(items) => {
            for child in items {
                walk(s, &format!("{path}[]"), child);
            }
        }
        _ => {}
    }
}

/// Length of a path's root: `$` for a body, `<kind>` for a stream event (kinds may hold dots).
pub(super) fn root_len(path: &str) -> usize {
    if path.starts_with('<') {
        path.find('>').map_or(path.len(), |i| i + 1)
    } else {
        1
    }
}

/// Whether a folded path ends in (or passes through) a noise key.
pub(crate) fn is_noise(path: &str) -> bool {
    let rest = &path[root_len(path).min(path.len())..];
    rest.split(['.', '['])
        .any(|seg| NOISE_KEYS.contains(&seg.trim_end_matches(']')))
}

#[cfg(test)]
mod tests;
