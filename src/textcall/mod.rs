//! The `<tool_call>` text parser: incremental (`push` / `finish`), linear, and total (never panics);
//! every recovery and rejection is a typed [`Diagnostic`] in the result.
//!
//! Pieces: [`scan`] splits text from block bodies, [`body`] turns a body into candidates,
//! [`validate`] turns a candidate into a call, [`config`] reads the request. [`fast`] reads the
//! usual well-formed call without serde (giving up to serde_json on anything else), [`json`]
//! builds argument values with the pointers of repeated keys, [`suggest`] names the nearest
//! allowed tool.
//!
//! Decisions:
//! - call ids are `call_N`, N counting every call *attempt* in emission order (failed ones too),
//!   so a diagnostic's `call_index` is the N of the call it is about;
//! - a closed block that yields no call is dropped from the text (its diagnostics say why); an
//!   unclosed one at the end of the output is given back as text (it may be prose, or a cut-off call);
//! - text after the JSON of an unclosed block is assistant text;
//! - when tags were processed and the remaining text is only whitespace, `text` is `None`;
//!   without tags the text is passed through unchanged;
//! - a key repeated in the arguments keeps its last value (as `JSON.parse` does) and is
//!   reported as `DuplicateKey` with its JSON pointer.

mod body;
mod config;
mod fast;
mod json;
mod scan;
mod suggest;
mod validate;

pub use config::ParserConfig;

use std::borrow::Cow;

use serde::Serialize;

use crate::model::{Diagnostic, DiagnosticKind as K, ToolCall};
use body::Calls;
use scan::{Detector, Scanner, Sink};
use validate::{Candidate, LastUnknown, Note};

/// Chunks at least this long have their tags counted first (see [`Collector::reserve`]).
const RESERVE_FROM: usize = 4096;

/// What the parser found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Parsed {
    pub tool_calls: Vec<ToolCall>,
    pub text: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The incremental parser. Feed the model's text in any chunking; the outcome does not depend on it.
#[derive(Debug)]
pub struct Parser {
    scanner: Scanner,
    detector: Detector,
    out: Collector,
}

#[derive(Debug)]
struct Collector {
    config: ParserConfig,
    text: String,
    calls: Vec<ToolCall>,
    diagnostics: Vec<Diagnostic>,
    /// Reused for the notes of a block's single call (empty between blocks).
    notes: Vec<Note>,
    /// Reused by the body reader.
    scratch: fast::Scratch,
    unknown: LastUnknown,
    /// Call attempts so far (the next call index).
    attempts: usize,
    /// Index of the first attempt of the last closed block (for tags trailing it).
    last_block: Option<usize>,
    tags_seen: bool,
    /// Diagnostics past [`crate::model::MAX_DIAGNOSTICS`], counted, not kept.
    dropped: usize,
}

impl Parser {
    pub fn new(config: ParserConfig) -> Parser {
        Parser {
            scanner: Scanner::new(!config.disabled),
            detector: Detector::default(),
            out: Collector {
                config,
                text: String::new(),
                calls: Vec::new(),
                diagnostics: Vec::new(),
                notes: Vec::new(),
                scratch: fast::Scratch::default(),
                unknown: LastUnknown::default(),
                attempts: 0,
                last_block: None,
                tags_seen: false,
                dropped: 0,
            },
        }
    }

    /// Feeds the next chunk. A 1-byte chunk (token-by-token streaming sends many) usually takes
    /// the inlined path; the rest goes out of line.
    #[inline(always)]
    pub fn push(&mut self, chunk: &str) {
        if let &[c] = chunk.as_bytes()
            && self.scanner.push_byte(c, &mut self.out)
        {
            return;
        }
        self.push_chunk(chunk);
    }

    #[inline(never)]
    fn push_chunk(&mut self, chunk: &str) {
        if self.out.config.disabled {
            self.detector.push(chunk);
            self.out.text.push_str(chunk);
        } else {
            self.out.reserve(chunk);
            self.scanner.push(chunk, &mut self.out);
        }
    }

    /// Text released so far (never a possible tag prefix, never block content).
    pub fn text_so_far(&self) -> &str {
        &self.out.text
    }

    /// Calls completed so far.
    pub fn calls_so_far(&self) -> &[ToolCall] {
        &self.out.calls
    }

    pub fn finish(mut self) -> Parsed {
        let mut out = self.out;
        if out.config.disabled {
            if let Some(at) = self.detector.found {
                out.diag(
                    K::ParsingDisabled,
                    "tool_choice is none: <tool_call> kept as text".into(),
                    (at, None),
                    false,
                );
            }
        } else {
            self.scanner.finish(&mut out);
        }
        if out.dropped > 0 {
            out.diagnostics.push(Diagnostic {
                kind: K::DiagnosticsTruncated,
                message: format!(
                    "{} more diagnostics not kept (the first {} are above)",
                    out.dropped,
                    crate::model::MAX_DIAGNOSTICS
                )
                .into(),
                offset: None,
                call_index: None,
                recovered: true,
            });
        }
        let text = if out.text.is_empty() || (out.tags_seen && out.text.trim().is_empty()) {
            None
        } else {
            Some(out.text)
        };
        Parsed {
            tool_calls: out.calls,
            text,
            diagnostics: out.diagnostics,
        }
    }
}

/// Parses a whole text.
pub fn parse(config: &ParserConfig, text: &str) -> Parsed {
    let mut p = Parser::new(config.clone());
    p.push(text);
    p.finish()
}

impl Collector {
    /// Before a long chunk: room for a call and a diagnostic per `<tool_call>` in it. Growing
    /// the vectors call by call instead copies them again at each doubling, into fresh memory;
    /// counting the tags costs a SIMD pass over the chunk.
    fn reserve(&mut self, chunk: &str) {
        if chunk.len() >= RESERVE_FROM {
            let tags = memchr::memmem::find_iter(chunk.as_bytes(), scan::OPEN).count();
            self.calls.reserve(tags);
            let room = crate::model::MAX_DIAGNOSTICS.saturating_sub(self.diagnostics.len());
            self.diagnostics.reserve(tags.min(room));
        }
    }

    /// Something dropped right after the last block, recovered, about that block.
    fn dropped_after_block(&mut self, kind: K, message: &'static str, offset: usize) {
        let index = self.last_block;
        self.diag(kind, message.into(), (offset, index), true);
    }

    fn diag(
        &mut self,
        kind: K,
        message: Cow<'static, str>,
        (offset, call_index): (usize, Option<usize>),
        recovered: bool,
    ) {
        if self.diagnostics.len() >= crate::model::MAX_DIAGNOSTICS {
            self.dropped += 1;
            return;
        }
        self.diagnostics.push(Diagnostic {
            kind,
            message,
            offset: Some(offset),
            call_index,
            recovered,
        });
    }
}

impl Sink for Collector {
    fn text(&mut self, s: &str) {
        self.text.push_str(s);
    }

    #[inline]
    fn text_char(&mut self, c: char) {
        self.text.push(c);
    }

    fn block(&mut self, body_text: &str, offset: usize, closed: bool) {
        self.tags_seen = true;
        let first = self.attempts;
        let config = &self.config;
        // Repair is rare: its check may clone the repaired candidates.
        let parsed = body::parse_body(
            body_text,
            closed,
            &|c| {
                validate::check(
                    config,
                    c.clone(),
                    &mut Vec::new(),
                    &mut LastUnknown::default(),
                )
                .is_ok()
            },
            &mut self.scratch,
        );
        let candidates = match parsed.result {
            Ok(c) => c,
            Err((kind, message)) => {
                self.attempts += 1;
                for (k, m) in parsed.notes {
                    self.diag(k, m, (offset, Some(first)), false);
                }
                self.diag(kind, message, (offset, Some(first)), false);
                if !closed {
                    // Not a call after all (prose, or cut off): the model's text, as written.
                    self.text.push_str("<tool_call>");
                    self.text.push_str(body_text);
                }
                self.last_block = Some(first);
                return;
            }
        };
        self.emit(candidates, parsed.notes, offset, closed);
        self.text.push_str(parsed.rest);
    }

    fn call(&mut self, candidate: Candidate, offset: usize) {
        self.tags_seen = true;
        self.emit(Calls::One(candidate), Vec::new(), offset, true);
    }

    fn extra_open(&mut self, offset: usize) {
        self.tags_seen = true;
        let index = self.attempts;
        self.diag(
            K::ExtraOpenTag,
            "dropped a repeated <tool_call>".into(),
            (offset, Some(index)),
            true,
        );
    }

    fn extra_close(&mut self, offset: usize) {
        self.dropped_after_block(K::ExtraCloseTag, "dropped a repeated </tool_call>", offset);
    }

    fn trailing_gt(&mut self, offset: usize) {
        self.dropped_after_block(
            K::TrailingGarbage,
            "dropped \">\" after </tool_call>",
            offset,
        );
    }
}

impl Collector {
    /// Checks a block's candidates and records its calls and diagnostics (`block_notes`: the
    /// block-level recoveries).
    fn emit(&mut self, candidates: Calls, block_notes: Vec<Note>, offset: usize, closed: bool) {
        let candidates = match candidates {
            Calls::One(c) if closed && block_notes.is_empty() => return self.emit_one(c, offset),
            other => other,
        };
        let first = self.attempts;
        let (one, many) = match candidates {
            Calls::One(c) => {
                let mut notes = Vec::new();
                let result = validate::check(&self.config, c, &mut notes, &mut self.unknown);
                (Some((notes, result)), Vec::new())
            }
            Calls::Many(cs) => {
                let checked: Vec<(Vec<Note>, Result<validate::Checked, Note>)> = cs
                    .into_iter()
                    .map(|c| {
                        let mut notes = Vec::new();
                        let result =
                            validate::check(&self.config, c, &mut notes, &mut self.unknown);
                        (notes, result)
                    })
                    .collect();
                (None, checked)
            }
        };
        let any_ok = one.iter().chain(&many).any(|(_, r)| r.is_ok());
        for (k, m) in block_notes {
            self.diag(k, m, (offset, Some(first)), any_ok);
        }
        if !closed {
            self.diag(
                K::MissingCloseTag,
                "no </tool_call> after the call".into(),
                (offset, Some(first)),
                any_ok,
            );
        }
        for (notes, result) in one.into_iter().chain(many) {
            self.record(notes, result, offset);
        }
        self.last_block = Some(first);
    }

    /// Records the next call attempt: its notes (recovered when the call stands), then the call
    /// or why it was rejected.
    fn record(
        &mut self,
        notes: impl IntoIterator<Item = Note>,
        result: Result<validate::Checked, Note>,
        offset: usize,
    ) {
        let index = self.attempts;
        self.attempts += 1;
        let ok = result.is_ok();
        for (k, m) in notes {
            self.diag(k, m, (offset, Some(index)), ok);
        }
        match result {
            Ok(c) => self
                .calls
                .push(ToolCall::unsigned(call_id(index), c.name, c.arguments)),
            Err((k, m)) => self.diag(k, m, (offset, Some(index)), false),
        }
    }
}

impl Collector {
    /// The usual block: closed, one call, nothing to recover at the block level (the same outcome
    /// as [`Collector::emit`], without its vectors).
    fn emit_one(&mut self, candidate: Candidate, offset: usize) {
        self.last_block = Some(self.attempts);
        let mut notes = std::mem::take(&mut self.notes);
        let result = validate::check(&self.config, candidate, &mut notes, &mut self.unknown);
        self.record(notes.drain(..), result, offset);
        self.notes = notes;
    }
}

/// `call_N`, without the formatting machinery (one per call).
fn call_id(index: usize) -> String {
    let mut digits = [b'0'; 20];
    let mut n = index;
    let mut start = digits.len();
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
        start -= 1;
        if n == 0 {
            break;
        }
    }
    let digits = std::str::from_utf8(digits.get(start..).unwrap_or_default()).unwrap_or_default();
    let mut id = String::with_capacity(5 + digits.len());
    id.push_str("call_");
    id.push_str(digits);
    id
}

#[cfg(test)]
mod tests;
