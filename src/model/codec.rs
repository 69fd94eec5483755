//! What encoding and decoding return besides values: an encoder's [`Encoded`] request with notes,
//! and the coded errors of both directions (`EncodeError`, `DecodeError`; every layer sees them).

use std::fmt;

use serde::Serialize;

use crate::http::HttpRequest;

/// An encoder's output: the request, plus notes on choices it made that a reviewer should see
/// (for example why a tool was sent with `strict: false`). Notes go into the trial's snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub request: HttpRequest,
    pub notes: Vec<String>,
}

/// The encoder refused to build a request: it fails closed instead of sending something the
/// provider would reject or silently reinterpret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EncodeError {
    /// Stable upper-case code, e.g. `GROUNDING_NOT_SUPPORTED`, `STRICT_SCHEMA`, `FORCED_WITH_THINKING`.
    pub code: String,
    pub message: String,
}

impl EncodeError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> EncodeError {
        EncodeError {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for EncodeError {}

/// A body the decoder cannot make sense of, with where it went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub message: String,
    /// 1-based line of the body (for streams: the SSE line of the event's data).
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl DecodeError {
    pub fn new(message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub fn at(message: impl Into<String>, line: usize, column: Option<usize>) -> DecodeError {
        DecodeError {
            message: message.into(),
            line: Some(line),
            column,
        }
    }

    /// A serde_json error inside a body or an event's data that starts at `base_line`.
    pub fn json(context: &str, err: &serde_json::Error, base_line: usize) -> DecodeError {
        DecodeError::at(
            format!("{context}: {err}"),
            base_line + err.line().saturating_sub(1),
            Some(err.column()),
        )
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "line {l}, column {c}: {}", self.message),
            (Some(l), None) => write!(f, "line {l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<crate::sse::SseError> for DecodeError {
    fn from(e: crate::sse::SseError) -> DecodeError {
        DecodeError::at(e.message, e.line, None)
    }
}
