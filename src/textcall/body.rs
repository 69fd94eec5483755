//! One `<tool_call>` body → call candidates (JSON values), with the recoveries the instructions
//! forbid but models still need: code fences, characters around the JSON, array wrapping,
//! an extra `}` and a missing `}`.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::fast;
use super::json::{self, Tracked};
use super::validate::{Arguments, Candidate, Name, Note};
use crate::model::DiagnosticKind as K;

pub(super) struct BodyParse<'a> {
    /// Recovered, block-level problems (in the order they were met).
    pub notes: Vec<Note>,
    /// The call candidates, or why the block holds none.
    pub result: Result<Calls, Note>,
    /// Text after the JSON value of an unclosed block (it is assistant text, not garbage).
    pub rest: &'a str,
}

/// The candidates of a body: one object (the usual case, no vector), or an array's items.
#[derive(Debug, PartialEq)]
pub(super) enum Calls {
    One(Candidate),
    Many(Vec<Candidate>),
}

/// Parses a body. `closed`: the block had its `</tool_call>`; `validates` tells whether a
/// candidate would become a call (a missing `}` is only repaired when the result validates).
/// `scratch`: the fast reader's reusable buffers.
pub(super) fn parse_body<'a>(
    body: &'a str,
    closed: bool,
    validates: &dyn Fn(&Candidate) -> bool,
    scratch: &mut fast::Scratch,
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
        notes.push((K::CodeFence, "removed a code fence around the call".into()));
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
                "the output ended inside an empty <tool_call>".into(),
            )
        } else if s.is_empty() {
            (K::MalformedJson, "empty <tool_call> block".into())
        } else {
            (
                K::MalformedJson,
                format!("no JSON object in the block: {}", excerpt(s)).into(),
            )
        };
        return fail(notes, note);
    };
    if start > 0 {
        let garbage = s.get(..start).unwrap_or_default();
        notes.push((
            K::LeadingGarbage,
            format!("ignored {} before the JSON", excerpt(garbage)).into(),
        ));
        s = s.get(start..).unwrap_or_default();
    }
    // The usual call goes the fast reader's way. Otherwise one serde_json pass reads the value
    // straight into call candidates (no map is built for a call object); every value is
    // accepted by the visitors, so every error is the parser's own, with its exact message.
    let read = match fast::read_call(s, scratch) {
        Some((c, end)) => Some(Ok((Calls::One(c), end))),
        None => {
            let mut values = serde_json::Deserializer::from_str(s).into_iter::<Calls>();
            values.next().map(|r| r.map(|c| (c, values.byte_offset())))
        }
    };
    let (calls, mut rest) = match read {
        Some(Ok((c, end))) => (c, s.get(end..).unwrap_or_default()),
        Some(Err(e)) if e.is_eof() => {
            if !closed {
                let msg = format!("the output ended inside the call: {e}");
                return fail(notes, (K::TruncatedCall, msg.into()));
            }
            match repair(s, validates) {
                Some(c) => {
                    notes.push((
                        K::MissingBraces,
                        "appended the missing closing brackets".into(),
                    ));
                    (c, "")
                }
                None => {
                    return fail(
                        notes,
                        (K::MalformedJson, format!("incomplete JSON: {e}").into()),
                    );
                }
            }
        }
        Some(Err(e)) => return fail(notes, (K::MalformedJson, e.to_string().into())),
        None => return fail(notes, (K::MalformedJson, "empty <tool_call> block".into())),
    };
    if fenced && let Some(r) = rest.trim_start().strip_prefix("```") {
        rest = r;
    }
    if closed {
        let garbage = rest.trim();
        if !garbage.is_empty() {
            notes.push((
                K::TrailingGarbage,
                format!("ignored {} after the JSON", excerpt(garbage)).into(),
            ));
        }
        rest = "";
    }
    let result = match calls {
        Calls::Many(items) if items.is_empty() => {
            Err((K::MissingName, "an empty array holds no call".into()))
        }
        Calls::Many(items) => {
            notes.push((
                K::ArrayWrapped,
                format!("unwrapped an array of {} call(s)", items.len()).into(),
            ));
            Ok(Calls::Many(items))
        }
        one => Ok(one),
    };
    BodyParse {
        notes,
        result,
        rest,
    }
}

/// The top value: an object is a call, an array holds calls; the body starts with `{` or `[`,
/// so nothing else reaches here (it would be an error, never a panic).
impl<'de> Deserialize<'de> for Calls {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Calls, D::Error> {
        d.deserialize_any(CallsVisitor)
    }
}

struct CallsVisitor;

impl<'de> Visitor<'de> for CallsVisitor {
    type Value = Calls;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a call object or an array of calls")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Calls, A::Error> {
        CandidateVisitor.visit_map(map).map(Calls::One)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Calls, A::Error> {
        let mut items = Vec::new();
        while let Some(c) = seq.next_element::<Candidate>()? {
            items.push(c);
        }
        Ok(Calls::Many(items))
    }
}

/// Reads an object as a call: only `name`, `arguments` and `parameters` are kept, every other
/// member is still parsed as a `Value` (and dropped) so that exactly the inputs serde_json's
/// `Value` accepts are accepted (e.g. `1e999` is an error). A repeated key keeps its last value,
/// as a `serde_json::Map` does. Any other value is parsed as a `Value` too, and is no call.
impl<'de> Deserialize<'de> for Candidate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Candidate, D::Error> {
        d.deserialize_any(CandidateVisitor)
    }
}

struct CandidateVisitor;

impl<'de> Visitor<'de> for CandidateVisitor {
    type Value = Candidate;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Candidate, E> {
        Ok(Candidate::default())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Candidate, E> {
        Ok(Candidate::default())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Candidate, E> {
        Ok(Candidate::default())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Candidate, E> {
        Ok(Candidate::default())
    }

    fn visit_str<E>(self, _: &str) -> Result<Candidate, E> {
        Ok(Candidate::default())
    }

    fn visit_unit<E>(self) -> Result<Candidate, E> {
        Ok(Candidate::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Candidate, A::Error> {
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Candidate::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Candidate, A::Error> {
        let mut c = Candidate {
            object: true,
            ..Candidate::default()
        };
        while let Some(key) = map.next_key::<Field>()? {
            match key {
                Field::Name => {
                    c.name = match map.next_value()? {
                        Value::String(s) => Name::Text(s),
                        _ => Name::Other,
                    };
                }
                Field::Arguments => {
                    c.arguments = Some(map.next_value_seed(ArgumentsSeed)?);
                    c.alias = false;
                }
                Field::Parameters => {
                    // Read either way (the same inputs are accepted); `arguments` wins.
                    let p = map.next_value_seed(ArgumentsSeed)?;
                    if c.arguments.is_none() || c.alias {
                        c.arguments = Some(p);
                        c.alias = true;
                    }
                }
                Field::Other => {
                    map.next_value::<Value>()?;
                }
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

/// Reads `arguments` (or `parameters`): a JSON string is parsed at once from the parser's own
/// unescaped text (no `String` is kept for it), anything else is read as a value.
struct ArgumentsSeed;

impl<'de> DeserializeSeed<'de> for ArgumentsSeed {
    type Value = Arguments;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arguments, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgumentsSeed {
    type Value = Arguments;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<Arguments, E> {
        Ok(Arguments::Text(json::parse(v).map_err(|e| e.to_string())))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Arguments, E> {
        Ok(Arguments::other(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Arguments, E> {
        Ok(Arguments::other(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Arguments, E> {
        Ok(Arguments::other(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Arguments, E> {
        Ok(Arguments::other(v.into()))
    }

    fn visit_unit<E>(self) -> Result<Arguments, E> {
        Ok(Arguments::other(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Arguments, A::Error> {
        let mut duplicates = Vec::new();
        let value = json::Seed {
            path: crate::pointer::Ptr::Root,
            duplicates: &mut duplicates,
        }
        .visit_seq(seq)?;
        Ok(Arguments::Value(Tracked { value, duplicates }))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Arguments, A::Error> {
        let mut duplicates = Vec::new();
        let value = json::Seed {
            path: crate::pointer::Ptr::Root,
            duplicates: &mut duplicates,
        }
        .visit_map(map)?;
        Ok(Arguments::Value(Tracked { value, duplicates }))
    }
}

/// Appends the closing brackets an incomplete value lacks; kept only if every candidate validates.
fn repair(s: &str, validates: &dyn Fn(&Candidate) -> bool) -> Option<Calls> {
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
    let calls: Calls = serde_json::from_str(&fixed).ok()?;
    let ok = match &calls {
        Calls::Many(items) => !items.is_empty() && items.iter().all(validates),
        Calls::One(c) => validates(c),
    };
    ok.then_some(calls)
}

/// At most 40 characters of `s`, quoted, for messages.
pub(super) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{:?}…", s.get(..i).unwrap_or_default()),
        None => format!("{s:?}"),
    }
}
