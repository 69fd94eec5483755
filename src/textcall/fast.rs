//! A fast reader for the usual, well-formed call body. It gives up (`None`) on anything else —
//! a float, a `\u` escape, deep nesting, any syntax error — and serde_json then reads the body
//! from the start, so every value and every message is serde_json's; what this reader accepts
//! it reads into exactly the values serde_json would build.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::json::{self, Tracked};
use super::validate::{Arguments, Candidate, Name};
use crate::pointer::Ptr;

/// The bytes that end a run of plain string content: `"`, `\\` and control characters.
static STRING_STOP: [bool; 256] = {
    let mut stop = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stop[b] = true;
        b += 1;
    }
    stop[b'"' as usize] = true;
    stop[b'\\' as usize] = true;
    stop
};

/// The high bit of each byte of `word` (little-endian) that ends a plain string run: `"`, `\\`
/// or a control character. Bits above the lowest one may be false alarms (a borrow runs on),
/// the lowest one is exact, and only the lowest is used.
fn stops(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte is zero in `x`: the classic test; below 0x20 in `word`: the same test against 0x20.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) | control
}

/// Objects up to this many members find repeated keys by comparing keys (see [`Reader::object`]).
const SMALL: usize = 16;

/// Nesting this reader handles (serde_json allows 128: deeper bodies go its way).
const MAX_DEPTH: usize = 64;

/// Buffers the reader reuses from call to call.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// The unescaped text of a string `arguments` while it is read.
    text: String,
    /// The members of the objects being read, innermost last (see [`Reader::object`]).
    members: Vec<(String, Value)>,
}

/// Reads a call object at the start of `s`; gives the candidate and the offset after the object.
pub(super) fn read_call(s: &str, scratch: &mut Scratch) -> Option<(Candidate, usize)> {
    let Scratch { text, members } = scratch;
    members.clear();
    let mut r = Reader {
        text: s,
        pos: 0,
        members,
    };
    let scratch = text;
    r.expect(b'{')?;
    let mut c = Candidate {
        object: true,
        ..Candidate::default()
    };
    r.ws();
    if !r.eat(b'}') {
        loop {
            r.expect(b'"')?;
            let key = r.string()?;
            r.colon()?;
            match &*key {
                "name" => {
                    c.name = if r.eat(b'"') {
                        Name::Text(r.string()?.into_owned())
                    } else {
                        r.value(Ptr::Root, &mut Vec::new(), 1)?;
                        Name::Other
                    };
                }
                "arguments" => {
                    c.arguments = Some(r.arguments(scratch)?);
                    c.alias = false;
                }
                "parameters" => {
                    // Read either way (the same inputs are accepted); `arguments` wins.
                    let p = r.arguments(scratch)?;
                    if c.arguments.is_none() || c.alias {
                        c.arguments = Some(p);
                        c.alias = true;
                    }
                }
                _ => {
                    r.value(Ptr::Root, &mut Vec::new(), 1)?;
                }
            }
            if r.end_of_member(b'}')? {
                break;
            }
        }
    }
    Some((c, r.pos))
}

/// Reads a whole JSON text (surrounding whitespace allowed, nothing else).
pub(super) fn read_document(s: &str, members: &mut Vec<(String, Value)>) -> Option<Tracked> {
    let base = members.len();
    let mut r = Reader {
        text: s,
        pos: 0,
        members,
    };
    let mut duplicates = Vec::new();
    r.ws();
    let value = r.value(Ptr::Root, &mut duplicates, 0);
    r.ws();
    let end = r.pos;
    // A text this reader gives up on leaves the members of its open objects behind.
    members.truncate(base);
    (end == s.len()).then_some(Tracked {
        value: value?,
        duplicates,
    })
}

struct Reader<'a, 'm> {
    text: &'a str,
    pos: usize,
    members: &'m mut Vec<(String, Value)>,
}

impl<'a> Reader<'a, '_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.pos += usize::from(hit);
        hit
    }

    /// JSON whitespace, as serde_json skips it.
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    fn colon(&mut self) -> Option<()> {
        self.ws();
        self.expect(b':')?;
        self.ws();
        Some(())
    }

    /// After a member or item: `,` (false: another one follows) or `close` (true).
    fn end_of_member(&mut self, close: u8) -> Option<bool> {
        self.ws();
        if self.eat(b',') {
            self.ws();
            Some(false)
        } else {
            self.eat(close).then_some(true)
        }
    }

    /// Bytes up to a quote, a backslash or a control character (an error in a string): eight
    /// bytes at a time, then byte by byte for the last few.
    fn plain_run(&self) -> usize {
        let rest = self.text.as_bytes().get(self.pos..).unwrap_or_default();
        let mut words = rest.chunks_exact(8);
        let mut run = 0;
        for word in &mut words {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            let stops = stops(u64::from_le_bytes(bytes));
            if stops != 0 {
                return run + (stops.trailing_zeros() / 8) as usize;
            }
            run += 8;
        }
        let tail = words.remainder();
        run + tail
            .iter()
            .position(|&b| STRING_STOP[usize::from(b)])
            .unwrap_or(tail.len())
    }

    /// A string's content, after its opening quote: borrowed unless it has escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos;
        let end = start + self.plain_run();
        match self.text.as_bytes().get(end)? {
            b'"' => {
                self.pos = end + 1;
                Some(Cow::Borrowed(self.text.get(start..end)?))
            }
            b'\\' => {
                let mut out = String::with_capacity(end - start + 16);
                self.string_into(&mut out)?;
                Some(Cow::Owned(out))
            }
            _ => None,
        }
    }

    /// A string's content, after its opening quote, unescaped onto `out`.
    fn string_into(&mut self, out: &mut String) -> Option<()> {
        loop {
            let start = self.pos;
            let end = start + self.plain_run();
            out.push_str(self.text.get(start..end)?);
            self.pos = end;
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => {
                    let c = match self.text.as_bytes().get(self.pos + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        // `\u` (surrogates and all) is left to serde_json, like every error.
                        _ => return None,
                    };
                    out.push(c);
                    self.pos += 2;
                }
                _ => return None,
            }
        }
    }

    /// `arguments`: a string is unescaped into `scratch` and read as a JSON text (by serde_json
    /// when this reader gives up on it, for its exact value or message); anything else is a value.
    fn arguments(&mut self, scratch: &mut String) -> Option<Arguments> {
        if self.eat(b'"') {
            scratch.clear();
            self.string_into(scratch)?;
            let parsed = match read_document(scratch, self.members) {
                Some(t) => Ok(t),
                None => json::parse(scratch).map_err(|e| e.to_string()),
            };
            return Some(Arguments::Text(parsed));
        }
        let mut duplicates = Vec::new();
        let value = self.value(Ptr::Root, &mut duplicates, 1)?;
        Some(Arguments::Value(Tracked { value, duplicates }))
    }

    /// A value at `path`, `depth` containers deep.
    fn value(&mut self, path: Ptr<'_>, dups: &mut Vec<String>, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'"' => {
                self.pos += 1;
                Some(Value::String(self.string()?.into_owned()))
            }
            b'{' if depth < MAX_DEPTH => {
                self.pos += 1;
                self.object(path, dups, depth + 1)
            }
            b'[' if depth < MAX_DEPTH => {
                self.pos += 1;
                self.array(path, dups, depth + 1)
            }
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        let rest = self.text.as_bytes().get(self.pos..)?;
        if !rest.starts_with(word.as_bytes()) {
            return None;
        }
        self.pos += word.len();
        Some(value)
    }

    /// An integer as serde_json reads it: `u64`, or `i64` when negative; a fraction, an
    /// exponent, `-0` or an overflow (all `f64` there) make this reader give up.
    fn integer(&mut self) -> Option<Value> {
        let negative = self.eat(b'-');
        let first = self.peek()?;
        if !first.is_ascii_digit() {
            return None;
        }
        self.pos += 1;
        let mut n = u64::from(first - b'0');
        if first == b'0' {
            if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return None;
            }
        } else {
            while let Some(d @ b'0'..=b'9') = self.peek() {
                n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                self.pos += 1;
            }
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return None;
        }
        if negative {
            // serde_json's own test: `-0` and what `i64` cannot hold become floats.
            let v = (n as i64).wrapping_neg();
            (v < 0).then_some(Value::from(v))
        } else {
            Some(Value::from(n))
        }
    }

    /// An object's members are gathered on the shared `members` stack and moved into a map of
    /// their exact number once the object ends (a map grown member by member has room for one
    /// more, and objects are most of what a call allocates). A repeated key is found by comparing
    /// with the members gathered so far, when the object is small, and keeps its first position
    /// and its last value; past [`SMALL`] members the rest is inserted into the map directly.
    fn object(&mut self, path: Ptr<'_>, dups: &mut Vec<String>, depth: usize) -> Option<Value> {
        let base = self.members.len();
        let mut large: Option<Map<String, Value>> = None;
        self.ws();
        if !self.eat(b'}') {
            loop {
                self.expect(b'"')?;
                let key = self.string()?.into_owned();
                self.colon()?;
                let value = self.value(Ptr::Key(&path, &key), dups, depth)?;
                if let Some(map) = &mut large {
                    json::insert(map, key, value, &path, dups);
                } else if let Some(slot) = self
                    .members
                    .get_mut(base..)
                    .and_then(|frame| frame.iter_mut().find(|(k, _)| *k == key))
                {
                    dups.push(Ptr::Key(&path, &key).render());
                    slot.1 = value;
                } else if self.members.len() - base == SMALL {
                    let mut map = Map::with_capacity(2 * SMALL);
                    map.extend(self.members.drain(base..));
                    json::insert(&mut map, key, value, &path, dups);
                    large = Some(map);
                } else {
                    self.members.push((key, value));
                }
                if self.end_of_member(b'}')? {
                    break;
                }
            }
        }
        let map = match large {
            Some(map) => map,
            None => {
                let mut map = Map::with_capacity(self.members.len() - base);
                for (k, v) in self.members.drain(base..) {
                    map.insert(k, v);
                }
                map
            }
        };
        Some(Value::Object(map))
    }

    fn array(&mut self, path: Ptr<'_>, dups: &mut Vec<String>, depth: usize) -> Option<Value> {
        let mut items = Vec::new();
        self.ws();
        if !self.eat(b']') {
            loop {
                items.push(self.value(Ptr::Index(&path, items.len()), dups, depth)?);
                if self.end_of_member(b']')? {
                    break;
                }
            }
        }
        Some(Value::Array(items))
    }
}

#[cfg(test)]
mod tests;
