//! The decode-side restore of the strict rewrite, incrementally: a filter over streamed
//! argument bytes that removes exactly the `"key": null` members the buffered restore
//! (`restore.rs`) removes, and forwards every other byte as soon as it is known not to belong
//! to such a member.
//!
//! What is held back is at most the current member of the innermost object: from its leading
//! comma (or its key, for an object's first member) until its key is read and, when the key is
//! one the rewrite made nullable, until its value is known to be or not to be `null`. A removed
//! member takes its leading comma with it (or the next member's comma, when it was the first).
//!
//! One shape cannot be decided byte by byte: an object whose schema is a bare `anyOf`/`oneOf`
//! (the restore picks the branch whose properties cover all of the object's keys). Such an
//! object is held whole, restored with the buffered code and written compactly.
//! Known difference: a key repeated in one object (invalid for a strict model) is judged per
//! occurrence here, while the buffered restore sees only the last one.

use serde_json::{Map, Value};

use super::restore::{array_items, restore_under};
use super::util::{self, MAX_WALK_DEPTH};
use crate::model::{ChatRequest, Provider};

/// The filter for calls of `tool`, when `provider` is where the strict rewrite applies and
/// it rewrote this tool (else nothing needs removing).
pub(crate) fn stream_filter<'s>(
    provider: Provider,
    req: &'s ChatRequest,
    tool: &str,
) -> Option<NullFilter<'s>> {
    let tool = req.tool(tool)?;
    super::prepare::openai_rewrote(provider, tool, req.strict)
        .then(|| NullFilter::new(&tool.parameters))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ObjState {
    /// After `{` or `,`: a key (or `}`) comes next.
    BeforeKey,
    /// Inside the key's string.
    InKey,
    /// After the key, before `:`.
    AfterKey,
    /// After `:`, before the value's first byte.
    BeforeValue,
    /// Inside a `null` being removed: how many of its bytes were read.
    DropNull(u8),
    /// The value started (a scalar's rest, or back from a nested container).
    AfterValue,
}

struct Obj<'s> {
    /// The object parts (the schema and its `allOf` entries) that apply; empty: nothing to remove.
    parts: Vec<&'s Map<String, Value>>,
    depth: usize,
    state: ObjState,
    /// A member was forwarded (so the next one keeps its leading comma).
    emitted: bool,
    /// The raw bytes of the current key, quotes included.
    key: Vec<u8>,
    /// The current member is removed when its value is `null`.
    droppable: bool,
    /// Whitespace after a removed `null` is removed with it.
    skip_ws: bool,
}

enum Frame<'s> {
    Obj(Obj<'s>),
    Array {
        items: Vec<&'s Value>,
        depth: usize,
    },
    /// An object held whole (its branch depends on all its keys).
    Capture {
        schemas: Vec<&'s Value>,
        buf: Vec<u8>,
        nesting: usize,
        in_string: bool,
        escape: bool,
    },
}

/// The incremental restore over one call's argument bytes. `push` returns the bytes that can
/// be forwarded now; `finish` what is still held (when the arguments ended early).
pub(crate) struct NullFilter<'s> {
    root: &'s Value,
    stack: Vec<Frame<'s>>,
    /// The root value was started.
    started: bool,
    in_string: bool,
    escape: bool,
    hold: Vec<u8>,
    holding: bool,
    /// Where the held member's leading comma is.
    hold_comma: Option<usize>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'s> NullFilter<'s> {
    pub(crate) fn new(root: &'s Value) -> NullFilter<'s> {
        NullFilter {
            root,
            stack: Vec::new(),
            started: false,
            in_string: false,
            escape: false,
            hold: Vec::new(),
            holding: false,
            hold_comma: None,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        for &b in bytes {
            self.byte(b, &mut out);
        }
        out
    }

    /// Releases whatever is held (a member or an object cut short): the arguments ended.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.hold);
        self.holding = false;
        self.hold_comma = None;
        for f in &mut self.stack {
            if let Frame::Capture { buf, .. } = f {
                out.append(buf);
            }
        }
        self.stack.clear();
        out
    }

    fn emit(&mut self, b: u8, out: &mut Vec<u8>) {
        if self.holding {
            self.hold.push(b);
        } else {
            out.push(b);
        }
    }

    /// Forwards the held member (dropping its leading comma when no member before it was kept).
    fn release(&mut self, out: &mut Vec<u8>) {
        if !self.holding {
            return;
        }
        let emitted = match self.stack.last_mut() {
            Some(Frame::Obj(o)) => std::mem::replace(&mut o.emitted, true),
            _ => true,
        };
        if let (false, Some(i)) = (emitted, self.hold_comma) {
            self.hold.remove(i);
        }
        out.append(&mut self.hold);
        self.holding = false;
        self.hold_comma = None;
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        if let Some(Frame::Capture { .. }) = self.stack.last() {
            self.capture(b, out);
            return;
        }
        if self.in_string {
            if let Some(Frame::Obj(o)) = self.stack.last_mut()
                && o.state == ObjState::InKey
            {
                o.key.push(b);
            }
            self.emit(b, out);
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
                self.key_done(out);
            }
            return;
        }
        match self.stack.last_mut() {
            None => {
                if !self.started && !is_ws(b) {
                    self.started = true;
                    let root = self.root;
                    self.start_value(b, vec![root], 0, out);
                } else {
                    out.push(b);
                }
            }
            Some(Frame::Array { items, depth }) => match b {
                b']' => {
                    out.push(b);
                    self.stack.pop();
                }
                b'{' | b'[' | b'"' => {
                    let (items, depth) = (items.clone(), *depth);
                    self.start_value(b, items, depth + 1, out);
                }
                _ => out.push(b),
            },
            Some(Frame::Obj(_)) => self.object_byte(b, out),
            Some(Frame::Capture { .. }) => {}
        }
    }

    fn object_byte(&mut self, b: u8, out: &mut Vec<u8>) {
        let Some(Frame::Obj(o)) = self.stack.last_mut() else {
            return;
        };
        match o.state {
            ObjState::BeforeKey => match b {
                b'"' => {
                    o.state = ObjState::InKey;
                    o.key.clear();
                    o.key.push(b);
                    self.holding = true;
                    self.in_string = true;
                    self.hold.push(b);
                }
                b'}' => {
                    self.release(out);
                    out.push(b);
                    self.stack.pop();
                }
                _ => self.emit(b, out),
            },
            ObjState::InKey => self.emit(b, out),
            ObjState::AfterKey => {
                if b == b':' {
                    o.state = ObjState::BeforeValue;
                }
                self.emit(b, out);
            }
            ObjState::BeforeValue => {
                if is_ws(b) {
                    self.emit(b, out);
                } else if o.droppable && b == b'n' {
                    o.state = ObjState::DropNull(1);
                    self.hold.push(b);
                } else {
                    o.state = ObjState::AfterValue;
                    let key = std::mem::take(&mut o.key);
                    let depth = o.depth + 1;
                    let schemas = self.children(&key);
                    self.release(out);
                    self.start_value(b, schemas, depth, out);
                }
            }
            ObjState::DropNull(n) => {
                if n < 3 {
                    o.state = ObjState::DropNull(n + 1);
                    self.hold.push(b);
                } else {
                    // `null` is complete: the member goes, with its leading comma.
                    o.state = ObjState::AfterValue;
                    o.skip_ws = true;
                    self.hold.clear();
                    self.holding = false;
                    self.hold_comma = None;
                }
            }
            ObjState::AfterValue => match b {
                b',' => {
                    o.state = ObjState::BeforeKey;
                    o.skip_ws = false;
                    self.holding = true;
                    self.hold_comma = Some(self.hold.len());
                    self.hold.push(b);
                }
                b'}' => {
                    out.push(b);
                    self.stack.pop();
                }
                _ if is_ws(b) && o.skip_ws => {}
                _ => out.push(b),
            },
        }
    }

    /// The key just ended: decide whether its member may be removed; forward it if not.
    fn key_done(&mut self, out: &mut Vec<u8>) {
        let Some(Frame::Obj(o)) = self.stack.last_mut() else {
            return;
        };
        if o.state != ObjState::InKey {
            // A string value ended: the member's value continues in `AfterValue`.
            return;
        }
        o.state = ObjState::AfterKey;
        let key: Option<String> = serde_json::from_slice(&o.key).ok();
        let root = self.root;
        o.droppable = key.is_some_and(|k| {
            o.parts.iter().any(|p| {
                let Some(sub) = p
                    .get("properties")
                    .and_then(Value::as_object)
                    .and_then(|props| props.get(&k))
                else {
                    return false;
                };
                let required = util::required_names(p.get("required")).any(|x| x == k);
                !required && !util::accepts_null(root, sub)
            })
        });
        if !o.droppable {
            self.release(out);
        }
    }

    /// The schemas of the current member's value, from every part that names its key.
    fn children(&self, raw_key: &[u8]) -> Vec<&'s Value> {
        let Some(Frame::Obj(o)) = self.stack.last() else {
            return Vec::new();
        };
        let Ok(k) = serde_json::from_slice::<String>(raw_key) else {
            return Vec::new();
        };
        o.parts
            .iter()
            .filter_map(|p| {
                p.get("properties")
                    .and_then(Value::as_object)
                    .and_then(|props| props.get(&k))
            })
            .collect()
    }

    /// A value starts with `b`; `schemas` are the schemas it is restored against.
    fn start_value(&mut self, b: u8, schemas: Vec<&'s Value>, depth: usize, out: &mut Vec<u8>) {
        let root = self.root;
        let schemas: Vec<&'s Value> = if depth > MAX_WALK_DEPTH {
            Vec::new()
        } else {
            schemas
                .into_iter()
                .filter_map(|s| util::deref(root, s))
                .collect()
        };
        match b {
            b'{' => {
                let mut parts = Vec::new();
                let mut ambiguous = false;
                for s in &schemas {
                    if let Some(m) = s.as_object() {
                        ambiguous |= object_parts(root, m, &mut parts, 0);
                    }
                }
                if ambiguous {
                    self.stack.push(Frame::Capture {
                        schemas,
                        buf: vec![b],
                        nesting: 1,
                        in_string: false,
                        escape: false,
                    });
                    return;
                }
                out.push(b);
                self.stack.push(Frame::Obj(Obj {
                    parts,
                    depth,
                    state: ObjState::BeforeKey,
                    emitted: false,
                    key: Vec::new(),
                    droppable: false,
                    skip_ws: false,
                }));
            }
            b'[' => {
                out.push(b);
                let items = schemas
                    .iter()
                    .filter_map(|s| s.as_object().and_then(|m| array_items(root, m)))
                    .collect();
                self.stack.push(Frame::Array { items, depth });
            }
            b'"' => {
                out.push(b);
                self.in_string = true;
            }
            _ => out.push(b),
        }
    }

    fn capture(&mut self, b: u8, out: &mut Vec<u8>) {
        let Some(Frame::Capture {
            buf,
            nesting,
            in_string,
            escape,
            ..
        }) = self.stack.last_mut()
        else {
            return;
        };
        buf.push(b);
        if *in_string {
            if *escape {
                *escape = false;
            } else if b == b'\\' {
                *escape = true;
            } else if b == b'"' {
                *in_string = false;
            }
            return;
        }
        match b {
            b'"' => *in_string = true,
            b'{' | b'[' => *nesting += 1,
            b'}' | b']' => *nesting -= 1,
            _ => {}
        }
        if *nesting > 0 {
            return;
        }
        let Some(Frame::Capture { schemas, buf, .. }) = self.stack.pop() else {
            return;
        };
        match serde_json::from_slice::<Value>(&buf) {
            Ok(mut v) => {
                for s in schemas {
                    restore_under(self.root, s, &mut v);
                }
                out.extend(serde_json::to_vec(&v).unwrap_or(buf));
            }
            Err(_) => out.extend(buf),
        }
    }
}

/// Collects the object parts of `schema` (itself and its `allOf` entries, refs followed) the
/// restore applies to an object value; true when one of them is a bare `anyOf`/`oneOf`, whose
/// branch depends on all the object's keys.
fn object_parts<'s>(
    root: &'s Value,
    schema: &'s Map<String, Value>,
    parts: &mut Vec<&'s Map<String, Value>>,
    depth: usize,
) -> bool {
    if depth > MAX_WALK_DEPTH || parts.iter().any(|p| std::ptr::eq(*p, schema)) {
        return false;
    }
    if !schema.contains_key("properties") && !schema.contains_key("allOf") {
        return schema.contains_key("anyOf") || schema.contains_key("oneOf");
    }
    parts.push(schema);
    let mut ambiguous = false;
    for e in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(e) = util::deref(root, e).and_then(Value::as_object) {
            ambiguous |= object_parts(root, e, parts, depth + 1);
        }
    }
    ambiguous
}

#[cfg(test)]
mod tests;
