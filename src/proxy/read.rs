//! Reading a client's request within the proxy's limits: the body under a size cap (a larger
//! declared `Content-Length` refused before any byte is read) and a time limit, then the text
//! checks that come before JSON parsing (UTF-8, nesting depth), each failure its own status.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::HeaderMap;
use hyper::body::Incoming;

use super::config::ProxyConfig;

/// Why a request body was not read whole.
#[derive(Debug)]
pub(super) enum BodyError {
    /// Over `max_body_bytes` (declared or sent): 413.
    TooLarge,
    /// Not finished within `body_timeout_ms`: 408.
    Timeout,
    /// The client's stream broke off or was malformed: 400.
    Broken(String),
}

impl BodyError {
    /// The status and message the client gets, in its format's envelope.
    pub(super) fn answer(&self, config: &ProxyConfig) -> (u16, String) {
        match self {
            BodyError::TooLarge => (
                413,
                format!(
                    "the request body is over the proxy's limit of {} bytes (max_body_bytes)",
                    config.max_body_bytes
                ),
            ),
            BodyError::Timeout => (
                408,
                format!(
                    "the request body was not received within {} ms (body_timeout_ms)",
                    config.body_timeout_ms
                ),
            ),
            BodyError::Broken(e) => (400, format!("the request body could not be read: {e}")),
        }
    }
}

/// The whole body, or why not: a declared length over the cap is refused without reading.
pub(super) async fn body(
    headers: &HeaderMap,
    body: Incoming,
    config: &ProxyConfig,
) -> Result<Bytes, BodyError> {
    let max = config.max_body_bytes;
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(BodyError::TooLarge);
    }
    let limit = Duration::from_millis(config.body_timeout_ms);
    match tokio::time::timeout(limit, Limited::new(body, max).collect()).await {
        Err(_) => Err(BodyError::Timeout),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(BodyError::TooLarge),
        Ok(Err(e)) => Err(BodyError::Broken(e.to_string())),
    }
}

/// What is wrong with `bytes` as request text before JSON parsing: invalid UTF-8 (with the
/// byte offset) or arrays and objects nested deeper than `max_depth`.
pub(super) fn text_problem(bytes: &[u8], max_depth: usize) -> Option<String> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Some(format!(
            "the request body is not valid UTF-8 (at byte {})",
            e.valid_up_to()
        ));
    }
    nested_deeper(bytes, max_depth).map(|at| {
        format!(
            "the request body nests arrays and objects deeper than {max_depth} levels (at byte {at}; max_json_depth)"
        )
    })
}

/// The offset of the first bracket that opens level `max_depth + 1` (brackets in strings skipped).
pub(super) fn nested_deeper(bytes: &[u8], max_depth: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}
