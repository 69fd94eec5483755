//! The incremental tag scanner: splits model text into plain text and `<tool_call>` bodies,
//! for any chunking, scanning each byte once.
//!
//! Tags are ASCII, so every cut this module makes falls on a UTF-8 boundary of the `&str` chunks.
//! A possible tag prefix (`<`, `<tool_`, `</tool_ca`, …) is held back as a state (how many bytes of
//! which tag matched), never as re-scanned text. Inside a body, JSON strings are tracked so that a
//! `</tool_call>` inside an argument string does not close the block; if the output ends inside
//! such a string, [`Scanner::finish`] falls back to the first literal close tag and re-scans only
//! the rest, once, with string tracking off (so the total work stays linear).
//!
//! Two shortcuts keep the usual cases cheap, with the same outcome: a whole block held by one
//! chunk is read by the fast reader straight after its `<tool_call>` (no byte loop, no copy),
//! and a 1-byte chunk is handled inline from a summed-up state ([`Scanner::push_byte`]).

use super::fast;
use super::validate::Candidate;

pub(super) const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// Receives the scanner's output in text order.
pub(super) trait Sink {
    /// Plain text outside blocks, released as soon as it cannot start a tag.
    fn text(&mut self, s: &str);
    /// The same, one char (a 1-byte chunk).
    fn text_char(&mut self, c: char);
    /// A block body; `offset` is where its `<tool_call>` starts. `closed`: a `</tool_call>` ended
    /// it (otherwise the output ended, or a new `<tool_call>` began, first).
    fn block(&mut self, body: &str, offset: usize, closed: bool);
    /// A closed block whose body is one well-formed call object, already read (the usual
    /// block in a long chunk); the same outcome as [`Sink::block`] on its body.
    fn call(&mut self, candidate: Candidate, offset: usize);
    /// A `<tool_call>` inside a block that has no content yet (dropped).
    fn extra_open(&mut self, offset: usize);
    /// A `</tool_call>` right after a closing tag (dropped).
    fn extra_close(&mut self, offset: usize);
    /// A run of `>` right after a closing tag (dropped); `offset` of the first.
    fn trailing_gt(&mut self, offset: usize);
}

/// Where the scanner is: in plain text, directly after a close tag, or in a call's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Text,
    /// Directly after `</tool_call>`: `>` and repeated close tags are absorbed here.
    AfterClose,
    Body,
}

/// What a `<` starts, as far as the chunk shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lt {
    Tag(Tag),
    NotTag,
    Pending,
}

/// Which tag a pending `<…` prefix is matching; the second byte decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tag {
    Undecided,
    Open,
    Close,
}

/// What a 1-byte chunk may find, summed up from the state after each [`Scanner::push`] so that
/// [`Scanner::push_byte`] tests one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fast {
    /// Text, no pending tag.
    Text,
    /// Body, no pending tag.
    Body,
    /// A `<` (a tag of either kind, or none).
    Lt,
    /// A pending tag whose kind is decided.
    Tag,
    /// Anything else, or parsing is off: the general path.
    No,
}

#[derive(Debug)]
pub(super) struct Scanner {
    fast: Fast,
    region: Region,
    tag: Tag,
    tag_len: usize,
    tag_at: usize,
    in_str: bool,
    esc: bool,
    /// Set for the re-scan after the end-of-output fallback: close tags close even in strings.
    literal: bool,
    /// Body-relative position of the first `</tool_call>` seen inside a JSON string.
    candidate: Option<usize>,
    body: String,
    block_at: usize,
    body_at: usize,
    /// Absolute offset of the current chunk's first byte.
    pos: usize,
    /// Reused by the fast reader.
    scratch: fast::Scratch,
    gt_run: bool,
}

impl Scanner {
    /// `enabled`: false when parsing is off (then only [`Detector`] looks at the text).
    pub(super) fn new(enabled: bool) -> Scanner {
        Scanner {
            fast: if enabled { Fast::Text } else { Fast::No },
            region: Region::Text,
            tag: Tag::Undecided,
            tag_len: 0,
            tag_at: 0,
            in_str: false,
            esc: false,
            literal: false,
            candidate: None,
            body: String::new(),
            block_at: 0,
            body_at: 0,
            pos: 0,
            scratch: fast::Scratch::default(),
            gt_run: false,
        }
    }

    /// Scans a 1-byte chunk (token-by-token streaming sends many) if it is a usual case: text or
    /// body, a `<`, or a byte that continues a pending tag without ending it. Returns false,
    /// having changed nothing, for anything else (then [`Scanner::push`] takes it).
    #[inline(always)]
    pub(super) fn push_byte(&mut self, c: u8, sink: &mut impl Sink) -> bool {
        // A 1-byte `&str` is ASCII: the mask changes nothing but lets the compiler know that the
        // char is one byte long.
        let ch = char::from(c & 0x7F);
        // Text and body bytes, nearly every byte: tested before the dispatch below.
        if self.fast == Fast::Text {
            if c != b'<' {
                sink.text_char(ch);
                self.pos += 1;
                return true;
            }
        } else if self.fast == Fast::Body && (c != b'<' || self.esc) {
            // The string tracking of `skip_body`, for one byte (a `<` after a backslash in a
            // string is string content).
            if self.esc {
                self.esc = false;
            } else if self.in_str {
                match c {
                    b'"' => self.in_str = false,
                    b'\\' => self.esc = true,
                    _ => {}
                }
            } else if c == b'"' && !self.literal {
                self.in_str = true;
            }
            self.body.push(ch);
            self.pos += 1;
            return true;
        }
        match self.fast {
            Fast::Text | Fast::Body if c == b'<' && !self.esc => {
                self.start_tag(0);
                self.fast = Fast::Lt;
            }
            // The second byte decides the tag (and never ends it).
            Fast::Lt => {
                if !self.advance_tag(c) {
                    return false;
                }
                self.fast = Fast::Tag;
            }
            Fast::Tag => {
                let text = self.tag_text().as_bytes();
                if text.get(self.tag_len) != Some(&c) || self.tag_len + 1 == text.len() {
                    return false;
                }
                self.tag_len += 1;
            }
            _ => return false,
        }
        self.pos += 1;
        true
    }

    /// Scans one chunk.
    pub(super) fn push(&mut self, chunk: &str, sink: &mut impl Sink) {
        let bytes = chunk.as_bytes();
        let mut i = 0;
        while let Some(&c) = bytes.get(i) {
            if self.tag_len > 0 {
                if self.advance_tag(c) {
                    i += 1;
                    if self.tag_len == self.tag_text().len() {
                        let (tag, at) = (self.tag, self.tag_at);
                        self.tag_len = 0;
                        self.tag = Tag::Undecided;
                        self.on_tag(tag, at, sink);
                    }
                } else {
                    self.flush_tag(sink); // then look at `c` again in the restored region
                }
                continue;
            }
            match self.region {
                Region::Text => {
                    let start = i;
                    let mut from = i;
                    loop {
                        let rest = bytes.get(from..).unwrap_or_default();
                        let Some(p) = memchr::memchr(b'<', rest) else {
                            sink.text(chunk.get(start..).unwrap_or_default());
                            i = bytes.len();
                            break;
                        };
                        let at = from + p;
                        match self.classify(bytes, at) {
                            Lt::NotTag => from = at + 1,
                            lt => {
                                if at > start {
                                    sink.text(chunk.get(start..at).unwrap_or_default());
                                }
                                i = self.take_tag(chunk, lt, at, sink);
                                break;
                            }
                        }
                    }
                }
                Region::AfterClose => match c {
                    b'>' => {
                        if !self.gt_run {
                            sink.trailing_gt(self.pos + i);
                            self.gt_run = true;
                        }
                        i += 1;
                    }
                    b'<' => {
                        self.gt_run = false;
                        match self.classify(bytes, i) {
                            // Text after all: looked at again as text.
                            Lt::NotTag => self.region = Region::Text,
                            lt => i = self.take_tag(chunk, lt, i, sink),
                        }
                    }
                    _ => {
                        self.gt_run = false;
                        self.region = Region::Text;
                    }
                },
                Region::Body => {
                    let start = i;
                    loop {
                        i = self.skip_body(bytes, i);
                        if i >= bytes.len() {
                            self.body.push_str(chunk.get(start..).unwrap_or_default());
                            break;
                        }
                        match self.classify(bytes, i) {
                            Lt::NotTag => i += 1,
                            lt => {
                                self.body.push_str(chunk.get(start..i).unwrap_or_default());
                                i = self.take_tag(chunk, lt, i, sink);
                                break;
                            }
                        }
                    }
                }
            }
        }
        self.pos += bytes.len();
        self.fast = match (self.tag_len, self.tag, self.region) {
            (0, _, Region::Text) => Fast::Text,
            (0, _, Region::Body) => Fast::Body,
            (1, Tag::Undecided, _) => Fast::Lt,
            (_, Tag::Open | Tag::Close, _) => Fast::Tag,
            _ => Fast::No,
        };
    }

    /// What the `<` at `bytes[i]` starts, judged on the bytes at hand: a whole tag (the usual
    /// case, matched at once), no tag, or a prefix cut by the end of the chunk (then matched
    /// byte by byte as the next chunks arrive).
    fn classify(&self, bytes: &[u8], i: usize) -> Lt {
        let rest = bytes.get(i..).unwrap_or_default();
        let in_string = self.region == Region::Body && self.in_str && !self.literal;
        let tags = [
            (Tag::Open, OPEN, !in_string),
            (Tag::Close, CLOSE, self.region != Region::Text),
        ];
        let mut pending = false;
        for (tag, text, allowed) in tags {
            if allowed {
                if rest.starts_with(text.as_bytes()) {
                    return Lt::Tag(tag);
                }
                pending |= text.as_bytes().starts_with(rest);
            }
        }
        if pending { Lt::Pending } else { Lt::NotTag }
    }

    /// Acts on a whole tag, or starts matching a pending one, at `chunk[i]`; returns the index
    /// after what it consumed.
    fn take_tag(&mut self, chunk: &str, lt: Lt, i: usize, sink: &mut impl Sink) -> usize {
        match lt {
            Lt::Tag(Tag::Open) => {
                self.on_tag(Tag::Open, self.pos + i, sink);
                let next = i + OPEN.len();
                if self.region == Region::Body && self.body.is_empty() && !self.literal {
                    return self.read_block(chunk, next, sink).unwrap_or(next);
                }
                next
            }
            Lt::Tag(tag) => {
                self.on_tag(tag, self.pos + i, sink);
                i + CLOSE.len()
            }
            Lt::Pending | Lt::NotTag => {
                self.start_tag(i);
                i + 1
            }
        }
    }

    /// At the start of a body: if the chunk holds the whole block as whitespace, a call object
    /// the fast reader reads, whitespace and `</tool_call>`, hands the call over at once and
    /// returns the index after the close tag. The byte loop would end this body at the same
    /// close tag: in a valid JSON text every `<` is inside a string, where it closes nothing.
    /// Otherwise (`None`) the bytes are scanned as usual; what the reader read is read at most
    /// once more, so the work stays linear.
    fn read_block(&mut self, chunk: &str, i: usize, sink: &mut impl Sink) -> Option<usize> {
        let rest = chunk.get(i..)?;
        let json_space = |s: &str| s.len() - s.trim_start_matches([' ', '\n', '\t', '\r']).len();
        let start = json_space(rest);
        if rest.as_bytes().get(start) != Some(&b'{') {
            return None;
        }
        let (candidate, len) = fast::read_call(rest.get(start..)?, &mut self.scratch)?;
        let end = start + len;
        let close = end + json_space(rest.get(end..)?);
        if !rest.get(close..)?.starts_with(CLOSE) {
            return None;
        }
        sink.call(candidate, self.block_at);
        self.region = Region::AfterClose;
        self.gt_run = false;
        Some(i + close + CLOSE.len())
    }

    /// Tracks JSON strings in `bytes[i..]` up to the next `<` (or the end); returns its index.
    fn skip_body(&mut self, bytes: &[u8], mut i: usize) -> usize {
        let (mut in_str, mut esc) = (self.in_str, self.esc);
        let tracking = !self.literal;
        while let Some(&b) = bytes.get(i) {
            if esc {
                esc = false;
            } else if in_str {
                match b {
                    b'"' => in_str = false,
                    b'\\' => esc = true,
                    b'<' => break,
                    _ => {}
                }
            } else {
                match b {
                    b'"' if tracking => in_str = true,
                    b'<' => break,
                    _ => {}
                }
            }
            i += 1;
        }
        (self.in_str, self.esc) = (in_str, esc);
        i
    }

    /// Ends the output: releases a held-back prefix and hands over an unclosed block.
    pub(super) fn finish(&mut self, sink: &mut impl Sink) {
        if self.tag_len > 0 {
            self.flush_tag(sink);
        }
        if self.region != Region::Body {
            return;
        }
        if self.in_str
            && !self.literal
            && let Some(c) = self.candidate
        {
            // The block never closed because a quote never closed: the first literal close tag
            // ends it after all, and what follows is scanned again without string tracking.
            let rest = self
                .body
                .get(c + CLOSE.len()..)
                .unwrap_or_default()
                .to_string();
            self.body.truncate(c);
            sink.block(&self.body, self.block_at, true);
            self.body.clear();
            self.region = Region::AfterClose;
            self.gt_run = false;
            self.literal = true;
            self.in_str = false;
            self.pos = self.body_at + c + CLOSE.len();
            self.push(&rest, sink);
            self.finish(sink); // `literal` is set: no second fallback
            return;
        }
        sink.block(&self.body, self.block_at, false);
        self.body.clear();
        self.region = Region::Text;
    }

    fn start_tag(&mut self, i: usize) {
        self.tag = Tag::Undecided;
        self.tag_len = 1;
        self.tag_at = self.pos + i;
        self.esc = false;
    }

    fn tag_text(&self) -> &'static str {
        match self.tag {
            Tag::Undecided => "<",
            Tag::Open => OPEN,
            Tag::Close => CLOSE,
        }
    }

    /// Whether `c` continues the pending tag; decides the tag kind on the second byte.
    fn advance_tag(&mut self, c: u8) -> bool {
        if self.tag == Tag::Undecided {
            let in_string = self.region == Region::Body && self.in_str && !self.literal;
            let open_ok = !in_string;
            let close_ok = self.region != Region::Text;
            self.tag = match c {
                b't' if open_ok => Tag::Open,
                b'/' if close_ok => Tag::Close,
                _ => return false,
            };
            self.tag_len = 2;
            return true;
        }
        if self.tag_text().as_bytes().get(self.tag_len) == Some(&c) {
            self.tag_len += 1;
            true
        } else {
            false
        }
    }

    /// The pending prefix was not a tag: it is ordinary text (or body).
    fn flush_tag(&mut self, sink: &mut impl Sink) {
        let prefix = self.tag_text().get(..self.tag_len).unwrap_or_default();
        self.tag_len = 0;
        self.tag = Tag::Undecided;
        match self.region {
            Region::Body => self.body.push_str(prefix),
            Region::Text | Region::AfterClose => {
                sink.text(prefix);
                self.region = Region::Text;
            }
        }
    }

    fn on_tag(&mut self, tag: Tag, at: usize, sink: &mut impl Sink) {
        match (self.region, tag) {
            (Region::Text | Region::AfterClose, Tag::Open) => self.open_block(at),
            (Region::AfterClose, Tag::Close) => sink.extra_close(at),
            (Region::Body, Tag::Close) if self.in_str && !self.literal => {
                self.candidate.get_or_insert(self.body.len());
                self.body.push_str(CLOSE);
            }
            (Region::Body, Tag::Close) => {
                sink.block(&self.body, self.block_at, true);
                self.body.clear();
                self.region = Region::AfterClose;
                self.gt_run = false;
            }
            (Region::Body, Tag::Open) => {
                if self.body.trim().is_empty() {
                    sink.extra_open(at);
                    self.body.clear();
                    self.body_at = at + OPEN.len();
                } else {
                    // A new block starts before this one closed: close it implicitly.
                    sink.block(&self.body, self.block_at, false);
                    self.open_block(at);
                }
            }
            // Not produced: `advance_tag` refuses a close tag in text.
            (Region::Text, Tag::Close) | (_, Tag::Undecided) => {}
        }
    }

    fn open_block(&mut self, at: usize) {
        self.region = Region::Body;
        self.block_at = at;
        self.body_at = at + OPEN.len();
        self.body.clear();
        self.in_str = false;
        self.esc = false;
        self.candidate = None;
    }
}

/// Finds whether `<tool_call>` occurs in text pushed in any chunking (for disabled parsing).
#[derive(Debug, Default)]
pub(super) struct Detector {
    matched: usize,
    pos: usize,
    pub(super) found: Option<usize>,
}

impl Detector {
    pub(super) fn push(&mut self, chunk: &str) {
        if self.found.is_some() {
            return;
        }
        let open = OPEN.as_bytes();
        for (i, &c) in chunk.as_bytes().iter().enumerate() {
            // `<` occurs only at the start of the tag, so a mismatch restarts at this byte.
            if open.get(self.matched) == Some(&c) {
                self.matched += 1;
            } else {
                self.matched = usize::from(c == b'<');
            }
            if self.matched == open.len() {
                self.found = Some(self.pos + i + 1 - open.len());
                return;
            }
        }
        self.pos += chunk.len();
    }
}
