//! One `<tool_call>` body → call candidates (JSON values), with the recoveries the instructions
//! forbid but models still need: code fences, characters around the JSON, array wrapping,
//! an extra `}` and a missing `}`.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::validate::Candidate;
use crate::model::DiagnosticKind as K;

/// A recovered problem or a fatal one, with its message.
pub(super) type Note = (K, String);

pub(super) struct BodyParse<'a> {
    /// Recovered, block-level problems (in the order they were met).
    pub notes: Vec<Note>,
    /// The call candidates, or why the block holds none.
    pub result: Result<Vec<Candidate>, Note>,
    /// Text after the JSON value of an unclosed block (it is assistant text, not garbage).
    pub rest: &'a str,
}

/// The JSON value of a body: an object read by the fast path, or any value.
enum Top {
    Call(Candidate),
    Value(Value),
}

/// Parses a body. `closed`: the block had its `</tool_call>`; `validates` tells whether a
/// candidate would become a call (a missing `}` is only repaired when the result validates).
pub(super) fn parse_body<'a>(
    body: &'a str,
    closed: bool,
    validates: &dyn Fn(&Value) -> bool,
) -> BodyParse<'a> {
    let mut notes = Vec::new();
    let mut s = body.trim();
    let mut fenced = false;
    if let Some(r) = s.strip_prefix("```") {
        // ```json, ```xml, or a bare fence; the language word is dropped with it.
        s = r
            .trim_start_matches(|c: char| c.is_ascii_alphanumeric())
            .trim_start();
        if let Some(inner) = s.strip_suffix("```") {
            s = inner.trim_end();
        }
        fenced = true;
        notes.push((
            K::CodeFence,
            "removed a code fence around the call".to_string(),
        ));
    }
    let fail = |notes, note| BodyParse {
        notes,
        result: Err(note),
        rest: "",
    };
    let Some(start) = s.find(['{', '[']) else {
        let note = if s.is_empty() && !closed {
            (
                K::TruncatedCall,
                "the output ended inside an empty <tool_call>".to_string(),
            )
        } else if s.is_empty() {
            (K::MalformedJson, "empty <tool_call> block".to_string())
        } else {
            (
                K::MalformedJson,
                format!("no JSON object in the block: {}", excerpt(s)),
            )
        };
        return fail(notes, note);
    };
    if start > 0 {
        let garbage = s.get(..start).unwrap_or_default();
        notes.push((
            K::LeadingGarbage,
            format!("ignored {} before the JSON", excerpt(garbage)),
        ));
        s = s.get(start..).unwrap_or_default();
    }
    // Fast path: the usual body is one object, read straight into its call fields (no map is
    // built for it). Anything else, including every error, takes the general path below, which
    // parses again as a `Value` so that its messages stay exactly those of serde_json.
    let mut fast = serde_json::Deserializer::from_str(s).into_iter::<Candidate>();
    let (value, mut rest) = if let Some(Ok(c)) = fast.next() {
        (
            Top::Call(c),
            s.get(fast.byte_offset()..).unwrap_or_default(),
        )
    } else {
        let mut values = serde_json::Deserializer::from_str(s).into_iter::<Value>();
        match values.next() {
            Some(Ok(v)) => (
                Top::Value(v),
                s.get(values.byte_offset()..).unwrap_or_default(),
            ),
            Some(Err(e)) if e.is_eof() => {
                if !closed {
                    let msg = format!("the output ended inside the call: {e}");
                    return fail(notes, (K::TruncatedCall, msg));
                }
                match repair(s, validates) {
                    Some(v) => {
                        notes.push((
                            K::MissingBraces,
                            "appended the missing closing brackets".into(),
                        ));
                        (Top::Value(v), "")
                    }
                    None => {
                        return fail(notes, (K::MalformedJson, format!("incomplete JSON: {e}")));
                    }
                }
            }
            Some(Err(e)) => return fail(notes, (K::MalformedJson, e.to_string())),
            None => return fail(notes, (K::MalformedJson, "empty <tool_call> block".into())),
        }
    };
    if fenced && let Some(r) = rest.trim_start().strip_prefix("```") {
        rest = r;
    }
    if closed {
        let garbage = rest.trim();
        if !garbage.is_empty() {
            notes.push((
                K::TrailingGarbage,
                format!("ignored {} after the JSON", excerpt(garbage)),
            ));
        }
        rest = "";
    }
    let result = match value {
        Top::Call(c) => Ok(vec![c]),
        Top::Value(v @ Value::Object(_)) => Ok(vec![Candidate::from_value(v)]),
        Top::Value(Value::Array(items)) if items.is_empty() => {
            Err((K::MissingName, "an empty array holds no call".to_string()))
        }
        Top::Value(Value::Array(items)) => {
            notes.push((
                K::ArrayWrapped,
                format!("unwrapped an array of {} call(s)", items.len()),
            ));
            Ok(items.into_iter().map(Candidate::from_value).collect())
        }
        Top::Value(_) => Err((K::MalformedJson, "expected a JSON object".to_string())),
    };
    BodyParse {
        notes,
        result,
        rest,
    }
}

/// Reads an object as a call: only `name`, `arguments` and `parameters` are kept, every other
/// member is still parsed as a `Value` (and dropped) so that exactly the same inputs are accepted
/// as by the general path (e.g. `1e999` is an error either way). A repeated key keeps its last
/// value, as a `serde_json::Map` does. Anything but an object is an error (and goes the general
/// path).
impl<'de> Deserialize<'de> for Candidate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Candidate, D::Error> {
        d.deserialize_map(CandidateVisitor)
    }
}

struct CandidateVisitor;

impl<'de> Visitor<'de> for CandidateVisitor {
    type Value = Candidate;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a call object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Candidate, A::Error> {
        let mut c = Candidate {
            object: true,
            ..Candidate::default()
        };
        while let Some(key) = map.next_key::<Field>()? {
            let value = map.next_value::<Value>()?;
            match key {
                Field::Name => c.name = Some(value),
                Field::Arguments => c.arguments = Some(value),
                Field::Parameters => c.parameters = Some(value),
                Field::Other => {}
            }
        }
        Ok(c)
    }
}

/// An object key, told apart without allocating it.
enum Field {
    Name,
    Arguments,
    Parameters,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        d.deserialize_str(FieldVisitor)
    }
}

struct FieldVisitor;

impl Visitor<'_> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, k: &str) -> Result<Field, E> {
        Ok(match k {
            "name" => Field::Name,
            "arguments" => Field::Arguments,
            "parameters" => Field::Parameters,
            _ => Field::Other,
        })
    }
}

/// Appends the closing brackets an incomplete value lacks; kept only if every candidate validates.
fn repair(s: &str, validates: &dyn Fn(&Value) -> bool) -> Option<Value> {
    let mut stack = Vec::new();
    let (mut in_str, mut esc) = (false, false);
    for b in s.bytes() {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => stack.push('}'),
            b'[' => stack.push(']'),
            // The guard pops: a matching closer falls through to `_`, a mismatched one gives up.
            b'}' | b']' if stack.pop() != Some(char::from(b)) => return None,
            _ => {}
        }
    }
    if in_str || stack.is_empty() {
        return None;
    }
    let mut fixed = s.to_string();
    fixed.extend(stack.iter().rev());
    let v: Value = serde_json::from_str(&fixed).ok()?;
    let ok = match &v {
        Value::Array(items) => !items.is_empty() && items.iter().all(validates),
        other => validates(other),
    };
    ok.then_some(v)
}

/// At most 40 characters of `s`, quoted, for messages.
pub(super) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{:?}…", s.get(..i).unwrap_or_default()),
        None => format!("{s:?}"),
    }
}
