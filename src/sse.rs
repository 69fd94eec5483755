//! Incremental Server-Sent Events framing: bytes in any chunking → `(event, data)` pairs.
//!
//! Follows the WHATWG event-stream rules: lines end in CRLF, LF or CR; `:` lines are comments
//! (keep-alives); `data` lines of one event are joined with `\n`; one leading space after the colon
//! is dropped; a blank line dispatches. Work is linear in the input: each byte is scanned once,
//! whatever the chunk sizes, and a CR at a chunk boundary is resolved when the next byte arrives.

use std::fmt;

/// One dispatched event. Borrowed from the decoder's buffers: copy what you keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SseEvent<'a> {
    /// The `event:` field, or `""` when absent (the spec's default type `message`).
    pub event: &'a str,
    pub data: &'a str,
    /// 1-based line number of the event's first `data` line in the whole stream.
    pub line: usize,
}

/// What a caller hands the decoder to take each event as it completes; its error ends the push.
pub(crate) type OnEvent<'f, E> = dyn FnMut(SseEvent<'_>) -> Result<(), E> + 'f;

/// Input that is not valid UTF-8 inside an event line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    /// Bytes of the current, not yet terminated line.
    partial: Vec<u8>,
    /// The previous chunk ended in CR: an LF opening this chunk belongs to that line end.
    pending_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    line: usize,
    data_line: usize,
}

impl SseDecoder {
    pub(crate) fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Feeds bytes; calls `on_event` for every event completed by them.
    ///
    /// A chunk that ends no line can complete no event: it only extends the pending line. That
    /// case is checked here, inlined into the caller, so that small network reads (down to one
    /// byte) cost a compare and an append; the bytes are still scanned once, in `line`.
    /// `always`: callers with several framers (Gemini) otherwise get a call per byte.
    #[inline(always)]
    pub(crate) fn push<E>(&mut self, chunk: &[u8], on_event: &mut OnEvent<'_, E>) -> Result<(), E>
    where
        E: From<SseError>,
    {
        // One compare for both line ends: every byte above CR (13) is neither; the rare bytes
        // below it take the general path, which is correct for any byte.
        if let [b] = *chunk
            && b > b'\r'
            && !self.pending_cr
        {
            self.partial.push(b);
            return Ok(());
        }
        self.push_lines(chunk, on_event)
    }

    /// `push` for any chunk: splits it into lines and handles each complete one.
    fn push_lines<E>(&mut self, mut chunk: &[u8], on_event: &mut OnEvent<'_, E>) -> Result<(), E>
    where
        E: From<SseError>,
    {
        if self.pending_cr {
            self.pending_cr = false;
            if let [b'\n', rest @ ..] = chunk {
                chunk = rest;
            }
        }
        while let Some(pos) = find_any(chunk, [b'\n', b'\r']) {
            let (line, rest) = chunk.split_at(pos);
            let is_cr = rest[0] == b'\r';
            chunk = &rest[1..];
            if is_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            if self.partial.is_empty() {
                self.line(line, on_event)?;
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                let r = self.line(&whole, on_event);
                whole.clear();
                self.partial = whole;
                r?;
            }
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// Ends the stream: an event left without its blank line is dispatched (servers that close
    /// right after the last `data:` line exist), and an unterminated last line is processed.
    pub(crate) fn finish<E>(&mut self, on_event: &mut OnEvent<'_, E>) -> Result<(), E>
    where
        E: From<SseError>,
    {
        if !self.partial.is_empty() {
            let whole = std::mem::take(&mut self.partial);
            self.line(&whole, on_event)?;
        }
        self.dispatch(on_event)
    }

    fn line<E>(&mut self, line: &[u8], on_event: &mut OnEvent<'_, E>) -> Result<(), E>
    where
        E: From<SseError>,
    {
        self.line += 1;
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|e| SseError {
            line: self.line,
            message: format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
        })?;
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                } else {
                    self.data_line = self.line;
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            _ => {} // id, retry and unknown fields carry nothing a decoder needs
        }
        Ok(())
    }

    fn dispatch<E>(&mut self, on_event: &mut OnEvent<'_, E>) -> Result<(), E> {
        if !self.has_data {
            self.event.clear();
            return Ok(());
        }
        let r = on_event(SseEvent {
            event: &self.event,
            data: &self.data,
            line: self.data_line,
        });
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        r
    }
}

/// Position of the first byte of `bytes` equal to one of `needles`.
///
/// The line and string scans of the stream framers (here and in `jsonseq`) are where whole-body
/// decoding spends its time outside JSON parsing: this looks at 16 bytes per step with word-wide
/// bit tricks (no `unsafe`, no dependency) instead of one byte per step.
#[inline]
pub(crate) fn find_any<const N: usize>(bytes: &[u8], needles: [u8; N]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // High bit set in each byte of `x` that is zero. Bytes above the first zero byte may be
    // flagged wrongly (borrow), so only the lowest flag is used.
    let zero_bytes = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let hits = |word: &[u8]| {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default());
        needles
            .iter()
            .fold(0, |m, &n| m | zero_bytes(x ^ (LO * u64::from(n))))
    };
    let mut blocks = bytes.chunks_exact(16);
    let mut base = 0;
    for block in &mut blocks {
        let (lo, hi) = (hits(&block[..8]), hits(&block[8..]));
        if lo != 0 {
            return Some(base + (lo.trailing_zeros() / 8) as usize);
        }
        if hi != 0 {
            return Some(base + 8 + (hi.trailing_zeros() / 8) as usize);
        }
        base += 16;
    }
    let rest = blocks.remainder();
    rest.iter()
        .position(|b| needles.contains(b))
        .map(|p| base + p)
}

/// Splits a complete SSE body into its events' raw text, each ending with its blank line, so that
/// concatenating the pieces gives back the body byte for byte. Used to store streams one event per
/// line of a cassette.
pub(crate) fn split_events(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = body.as_bytes();
    let mut start = 0;
    let mut i = 0;
    let mut line_start = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' || b == b'\r' {
            let blank = i == line_start;
            let mut end = i + 1;
            if b == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                end += 1;
            }
            if blank && line_start > start {
                out.push(body[start..end].to_string());
                start = end;
            }
            i = end;
            line_start = end;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        out.push(body[start..].to_string());
    }
    out
}

#[cfg(test)]
mod tests;
