//! Drift at the wire level: the shape of stored responses (JSON paths with array indices folded
//! to `[]`, their types, stream event kinds, noise fields) and the structural differences
//! between two shapes. Pure functions.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Finding, Kind, Severity};
use crate::cassette::{Cassette, StoredResponse};

/// Keys whose values change on every recording (ids, timestamps, usage, fingerprints,
/// signatures, padding): compared only as cosmetic noise, never descended into.
pub const NOISE_KEYS: &[&str] = &[
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
    "x_groq",
];

/// Keys holding tool arguments (user data, not wire shape): kept as one typed leaf.
const OPAQUE_KEYS: &[&str] = &["input", "args", "arguments", "partialArgs", "partial_json"];

/// What the responses of one cassette look like.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Shape {
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
pub fn shape_of(c: &Cassette) -> Shape {
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
pub fn parse_entry(entry: &str) -> (Option<String>, Option<Value>) {
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
fn root_len(path: &str) -> usize {
    if path.starts_with('<') {
        path.find('>').map_or(path.len(), |i| i + 1)
    } else {
        1
    }
}

/// Whether a folded path ends in (or passes through) a noise key.
pub fn is_noise(path: &str) -> bool {
    let rest = &path[root_len(path).min(path.len())..];
    rest.split(['.', '['])
        .any(|seg| NOISE_KEYS.contains(&seg.trim_end_matches(']')))
}

/// The parent of a folded path (`$.a.b` → `$.a`, `$.a[]` → `$.a`); `None` at a root.
fn parent(path: &str) -> Option<&str> {
    let root = root_len(path);
    if path.len() <= root {
        return None;
    }
    if let Some(p) = path.strip_suffix("[]") {
        return Some(p);
    }
    path.rfind('.').filter(|i| *i >= root).map(|i| &path[..i])
}

/// The event kind a path belongs to (`<kind>.x` → `kind`), `None` for buffered bodies.
fn event_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix('<')?;
    rest.find('>').map(|i| &rest[..i])
}

fn non_null(t: &BTreeSet<&'static str>) -> BTreeSet<&'static str> {
    t.iter().copied().filter(|x| *x != "null").collect()
}

fn types_text(t: &BTreeSet<&'static str>) -> String {
    t.iter().copied().collect::<Vec<_>>().join("|")
}

/// Keeps only the topmost paths of a set (a removed object is one finding, not one per leaf).
fn topmost(paths: &BTreeSet<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for p in paths {
        let mut up = parent(p);
        let mut covered = false;
        while let Some(q) = up {
            if paths.contains(q) {
                covered = true;
                break;
            }
            up = parent(q);
        }
        if !covered {
            out.push((*p).to_string());
        }
    }
    out
}

/// Structural differences. When the model's behaviour changed (other calls, text appeared or
/// vanished), whole fields and event kinds coming and going follow from it: they are counted
/// in the second value and not listed. Renames and type changes are always listed.
pub fn diff(old: &Shape, new: &Shape, behaviour_changed: bool) -> (Vec<Finding>, usize) {
    let mut out = Vec::new();
    let mut explained = 0;
    if old.statuses != new.statuses && old.statuses.len() == new.statuses.len() {
        out.push(Finding::new(
            Severity::Behaviour,
            Kind::Status,
            None,
            list(&old.statuses),
            list(&new.statuses),
        ));
    }
    let new_events: BTreeSet<&str> = new
        .events
        .difference(&old.events)
        .map(String::as_str)
        .collect();
    let gone_events: BTreeSet<&str> = old
        .events
        .difference(&new.events)
        .map(String::as_str)
        .collect();
    for (set, kind) in [
        (&new_events, Kind::EventAdded),
        (&gone_events, Kind::EventRemoved),
    ] {
        for e in set {
            if behaviour_changed {
                explained += 1;
                continue;
            }
            let (before, after) = if kind == Kind::EventAdded {
                (None, Some(e.to_string()))
            } else {
                (Some(e.to_string()), None)
            };
            out.push(Finding::new(
                Severity::Behaviour,
                kind,
                Some(format!("<{e}>")),
                before,
                after,
            ));
        }
    }
    let in_changed_event =
        |p: &str| event_of(p).is_some_and(|e| new_events.contains(e) || gone_events.contains(e));
    let removed: BTreeSet<&str> = old
        .types
        .keys()
        .filter(|p| !new.types.contains_key(*p) && !in_changed_event(p))
        .map(String::as_str)
        .collect();
    let added: BTreeSet<&str> = new
        .types
        .keys()
        .filter(|p| !old.types.contains_key(*p) && !in_changed_event(p))
        .map(String::as_str)
        .collect();
    let mut removed = topmost(&removed);
    let mut added = topmost(&added);
    // A field renamed in place: one removed and one added under the same parent, same types.
    let parents: BTreeSet<String> = removed
        .iter()
        .filter_map(|p| parent(p))
        .map(str::to_string)
        .collect();
    for par in parents {
        let r: Vec<&String> = removed
            .iter()
            .filter(|p| parent(p) == Some(par.as_str()))
            .collect();
        let a: Vec<&String> = added
            .iter()
            .filter(|p| parent(p) == Some(par.as_str()))
            .collect();
        if let ([r], [a]) = (r.as_slice(), a.as_slice())
            && non_null(&old.types[r.as_str()]) == non_null(&new.types[a.as_str()])
        {
            let sev = if is_noise(r) || is_noise(a) {
                Severity::Cosmetic
            } else {
                Severity::Behaviour
            };
            out.push(Finding::new(
                sev,
                Kind::FieldRenamed,
                Some((*r).clone()),
                Some((*r).clone()),
                Some((*a).clone()),
            ));
            let (r, a) = ((*r).clone(), (*a).clone());
            removed.retain(|p| *p != r);
            added.retain(|p| *p != a);
        }
    }
    for p in removed {
        if behaviour_changed && !is_noise(&p) {
            explained += 1;
            continue;
        }
        let sev = if is_noise(&p) {
            Severity::Cosmetic
        } else {
            Severity::Behaviour
        };
        out.push(Finding::new(
            sev,
            Kind::FieldRemoved,
            Some(p.clone()),
            Some(types_text(&old.types[&p])),
            None,
        ));
    }
    for p in added {
        if behaviour_changed && !is_noise(&p) {
            explained += 1;
            continue;
        }
        out.push(Finding::new(
            Severity::Cosmetic,
            Kind::FieldAdded,
            Some(p.clone()),
            None,
            Some(types_text(&new.types[&p])),
        ));
    }
    for (p, t_old) in &old.types {
        let Some(t_new) = new.types.get(p) else {
            continue;
        };
        let (a, b) = (non_null(t_old), non_null(t_new));
        if a != b && !a.is_empty() && !b.is_empty() {
            let sev = if is_noise(p) {
                Severity::Cosmetic
            } else {
                Severity::Behaviour
            };
            out.push(Finding::new(
                sev,
                Kind::TypeChanged,
                Some(p.clone()),
                Some(types_text(t_old)),
                Some(types_text(t_new)),
            ));
        }
    }
    let changed_noise: Vec<&str> = old
        .noise
        .iter()
        .filter(|(p, v)| new.noise.get(*p).is_some_and(|w| w != *v))
        .map(|(p, _)| p.as_str())
        .collect();
    if !changed_noise.is_empty() {
        out.push(Finding::new(
            Severity::Cosmetic,
            Kind::Noise,
            None,
            None,
            Some(changed_noise.join(", ")),
        ));
    }
    (out, explained)
}

fn list(v: &[u16]) -> Option<String> {
    Some(v.iter().map(u16::to_string).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(body: &Value) -> Shape {
        let mut s = Shape::default();
        walk(&mut s, "$", body);
        s
    }

    #[test]
    fn rename_is_one_finding() {
        let old = shape(
            &serde_json::json!({"choices": [{"finish_reason": "stop", "message": {"refusal": null, "content": "x"}}]}),
        );
        let new = shape(
            &serde_json::json!({"choices": [{"stop_reason": "stop", "message": {"refusal": null, "content": "x"}}]}),
        );
        let (f, _) = diff(&old, &new, false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::FieldRenamed);
        assert_eq!(f[0].path.as_deref(), Some("$.choices[].finish_reason"));
    }

    #[test]
    fn ids_are_noise() {
        let old = shape(
            &serde_json::json!({"id": "chatcmpl-1", "created": 1, "usage": {"total_tokens": 3}, "x": 1}),
        );
        let new = shape(
            &serde_json::json!({"id": "chatcmpl-2", "created": 2, "usage": {"total_tokens": 4, "extra": 1}, "x": 1}),
        );
        let (f, _) = diff(&old, &new, false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Cosmetic);
        assert_eq!(f[0].after.as_deref(), Some("$.created, $.id, $.usage"));
    }

    #[test]
    fn sse_and_array_entries() {
        assert_eq!(
            parse_entry("event: ping\ndata: {\"type\":\"ping\"}\n\n")
                .0
                .as_deref(),
            Some("ping")
        );
        assert_eq!(parse_entry("data: [DONE]\n\n").0.as_deref(), Some("[DONE]"));
        assert_eq!(
            parse_entry("data: {\"object\":\"chat.completion.chunk\"}\n\n")
                .0
                .as_deref(),
            Some("chat.completion.chunk")
        );
        assert_eq!(
            parse_entry(",\r\n{\"candidates\":[]}").0.as_deref(),
            Some("data")
        );
        assert_eq!(parse_entry("\n]").0, None);
    }
}
