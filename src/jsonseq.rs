//! Incremental framing of a streamed JSON array (`[{…}\n,\r\n{…}]`, Gemini without `alt=sse`)
//! into its top-level elements, for bytes in any chunking.
//!
//! Only strings, escapes and nesting depth are tracked (elements are not parsed here), each byte
//! is looked at once, and an element is copied only when it spans chunks: work is linear in the
//! input whatever the chunk sizes. A body of bare top-level values (`{…}{…}` or one per line) is
//! framed the same way.

use std::fmt;

/// Bytes that cannot belong to a JSON array of values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonSeqError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for JsonSeqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// One complete top-level element: its text and the 1-based line it starts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Element<'a> {
    pub text: &'a str,
    pub line: usize,
}

/// What a caller hands the decoder to take each element as it completes; its error ends the
/// push.
pub(crate) type OnElement<'f, E> = dyn FnMut(Element<'_>) -> Result<(), E> + 'f;

/// Lexical states inside an element (the low bits of a [`STEP`] entry).
const CODE: u8 = 0;
const STRING: u8 = 1;
const ESCAPE: u8 = 2;
const LEX: u8 = 0b11;
/// [`STEP`] flags: the byte opens, or closes, a nesting level.
const OPENS: u8 = 0b100;
const CLOSES: u8 = 0b1000;

/// `STEP[state][byte]`: the next lexical state and whether the byte opens or closes a level.
/// Row 3 is never reached; it is there so that indexing by `lex & LEX` needs no bounds check.
static STEP: [[u8; 256]; 4] = {
    let mut t = [[CODE; 256], [STRING; 256], [STRING; 256], [CODE; 256]];
    t[CODE as usize][b'"' as usize] = STRING;
    t[CODE as usize][b'{' as usize] = CODE | OPENS;
    t[CODE as usize][b'[' as usize] = CODE | OPENS;
    t[CODE as usize][b'}' as usize] = CODE | CLOSES;
    t[CODE as usize][b']' as usize] = CODE | CLOSES;
    t[STRING as usize][b'"' as usize] = CODE;
    t[STRING as usize][b'\\' as usize] = ESCAPE;
    t
};

/// `QUIET[state][byte]`: the byte leaves the lexical state and the depth as they are and is not
/// a line end (most of an element). Built from [`STEP`]; an escaped byte is never quiet.
static QUIET: [[bool; 256]; 4] = {
    let mut t = [[false; 256]; 4];
    let mut state = 0;
    while state < 2 {
        let mut b = 0;
        while b < 256 {
            t[state][b] = STEP[state][b] == state as u8 && b != b'\n' as usize;
            b += 1;
        }
        state += 1;
    }
    t
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Outer {
    /// Nothing but whitespace seen yet.
    #[default]
    Start,
    /// Inside `[`, between elements.
    InArray,
    /// Top-level values without an enclosing array.
    Bare,
    /// After the closing `]`: only whitespace may follow.
    Closed,
}

#[derive(Debug, Default)]
pub(crate) struct JsonSeqDecoder {
    outer: Outer,
    /// Nesting depth inside the current element (0: between elements).
    depth: usize,
    /// Lexical state inside an element: [`CODE`], [`STRING`] or [`ESCAPE`].
    lex: u8,
    /// The part of the current element that arrived in earlier chunks.
    partial: Vec<u8>,
    line: usize,
    column: usize,
    element_line: usize,
}

impl JsonSeqDecoder {
    pub(crate) fn new() -> JsonSeqDecoder {
        JsonSeqDecoder {
            line: 1,
            ..JsonSeqDecoder::default()
        }
    }

    /// Feeds bytes; calls `on_element` for every element completed by them.
    ///
    /// One byte inside an element (tiny network reads) is handled here, inlined into the caller,
    /// without the loop setup of the general path: a few compares and an append. `always`: the
    /// compiler otherwise keeps it out of line in Gemini's push (a call per byte).
    #[inline(always)]
    pub(crate) fn push<E>(
        &mut self,
        chunk: &[u8],
        on_element: &mut OnElement<'_, E>,
    ) -> Result<(), E>
    where
        E: From<JsonSeqError>,
    {
        if let [b] = *chunk
            && self.depth > 0
        {
            // Most bytes change nothing but the column: one lookup, no state written back.
            if QUIET[usize::from(self.lex & LEX)][usize::from(b)] {
                self.column += 1;
                self.partial.push(b);
                return Ok(());
            }
            if self.in_element(b) {
                return self.emit(chunk, on_element);
            }
            self.partial.push(b);
            return Ok(());
        }
        self.push_bytes(chunk, on_element)
    }

    /// Advances over byte `b` of the current element (`depth > 0`); true when it closes it.
    ///
    /// The lexer is the [`STEP`] table, so that [`QUIET`] (the 1-byte path's test) is derived
    /// from the same definition and cannot disagree with it.
    #[inline(always)]
    fn in_element(&mut self, b: u8) -> bool {
        self.advance_position(b);
        let step = STEP[usize::from(self.lex & LEX)][usize::from(b)];
        self.lex = step & LEX;
        self.depth += usize::from(step & OPENS != 0);
        self.depth -= usize::from(step & CLOSES != 0);
        self.depth == 0
    }

    #[inline(always)]
    fn advance_position(&mut self, b: u8) {
        if b == b'\n' {
            self.line += 1;
            self.column = 0;
        } else {
            self.column += 1;
        }
    }

    /// `push` for any chunk.
    fn push_bytes<E>(&mut self, chunk: &[u8], on_element: &mut OnElement<'_, E>) -> Result<(), E>
    where
        E: From<JsonSeqError>,
    {
        // Start of the current element within this chunk, when it began here.
        let mut start: Option<usize> = if self.depth > 0 { Some(0) } else { None };
        let mut i = 0;
        while i < chunk.len() {
            if self.lex == STRING {
                // Most of an element is string contents: jump to the next byte that matters.
                let skip = crate::sse::find_any(&chunk[i..], [b'"', b'\\', b'\n'])
                    .unwrap_or(chunk.len() - i);
                self.column += skip;
                i += skip;
                if i == chunk.len() {
                    break;
                }
            }
            let b = chunk[i];
            if self.depth > 0 {
                if self.in_element(b) {
                    let from = start.take().unwrap_or(0);
                    self.emit(&chunk[from..=i], on_element)?;
                }
                i += 1;
                continue;
            }
            self.advance_position(b);
            match (self.outer, b) {
                (_, b' ' | b'\t' | b'\r' | b'\n') => {}
                (Outer::Start, b'[') => self.outer = Outer::InArray,
                (Outer::Start | Outer::Bare, b'{') => {
                    self.outer = Outer::Bare;
                    self.open_element(&mut start, i);
                }
                (Outer::InArray, b',') => {}
                (Outer::InArray, b']') => self.outer = Outer::Closed,
                (Outer::InArray, b'{' | b'[') => self.open_element(&mut start, i),
                _ => {
                    return Err(E::from(JsonSeqError {
                        line: self.line,
                        column: self.column,
                        message: format!("unexpected byte {:?} between elements", b as char),
                    }));
                }
            }
            i += 1;
        }
        if let Some(from) = start {
            self.partial.extend_from_slice(&chunk[from..]);
        }
        Ok(())
    }

    /// True when an element or the enclosing array is still open.
    pub(crate) fn is_incomplete(&self) -> bool {
        self.depth > 0 || self.outer == Outer::InArray
    }

    fn open_element(&mut self, start: &mut Option<usize>, i: usize) {
        self.depth = 1;
        self.element_line = self.line;
        *start = Some(i);
    }

    fn emit<E>(&mut self, tail: &[u8], on_element: &mut OnElement<'_, E>) -> Result<(), E>
    where
        E: From<JsonSeqError>,
    {
        let line = self.element_line;
        let invalid = |e: std::str::Utf8Error| JsonSeqError {
            line,
            column: 0,
            message: format!("invalid UTF-8 at byte {} of the element", e.valid_up_to()),
        };
        if self.partial.is_empty() {
            let text = std::str::from_utf8(tail).map_err(invalid)?;
            return on_element(Element { text, line });
        }
        let mut whole = std::mem::take(&mut self.partial);
        whole.extend_from_slice(tail);
        let r = match std::str::from_utf8(&whole) {
            Ok(text) => on_element(Element { text, line }),
            Err(e) => Err(E::from(invalid(e))),
        };
        whole.clear();
        self.partial = whole; // keep the allocation for the next spanning element
        r
    }
}

#[cfg(test)]
mod tests;
