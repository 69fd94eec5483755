//! A request as a loopback server reads it: method, path, the query percent-decoded, headers
//! lower-cased, and the body read whole within [`BodyLimits`] or the reason it was not
//! ([`BodyError`]: too large 413, too slow 408, broken 400 — the same statuses on every server).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::HeaderMap;
use hyper::body::Incoming;

/// One request as read: plain values, no IO left to do.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    /// The query string's pairs, percent-decoded ([`parse_query`]).
    pub query: BTreeMap<String, String>,
    /// Header names lower-case; values that are not UTF-8 left out; the last of a repeated name.
    pub headers: BTreeMap<String, String>,
    /// The whole body, or why it was not read (the server answers that; the connection closes
    /// after the answer, since a body not read whole leaves it unusable).
    pub body: Result<Bytes, BodyError>,
}

/// How much of a request body a server reads, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BodyLimits {
    /// A body over this many bytes is refused (a larger declared `Content-Length` before any of
    /// the body is read).
    pub max_bytes: usize,
    /// A body not received whole within this is refused; `None`: no time limit.
    pub timeout: Option<Duration>,
}

impl Default for BodyLimits {
    /// 32 MiB (Anthropic's documented limit, the largest of the four APIs), no time limit.
    fn default() -> BodyLimits {
        BodyLimits {
            max_bytes: 32 * 1024 * 1024,
            timeout: None,
        }
    }
}

/// Why a request body was not read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// Over the limit of this many bytes (declared or sent).
    TooLarge(usize),
    /// Not received whole within this time.
    Timeout(Duration),
    /// The client's stream broke off or was malformed.
    Broken(String),
}

impl BodyError {
    /// The status every loopback server answers it with: 413, 408 or 400.
    pub(crate) fn status(&self) -> u16 {
        match self {
            BodyError::TooLarge(_) => 413,
            BodyError::Timeout(_) => 408,
            BodyError::Broken(_) => 400,
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::TooLarge(max) => {
                write!(f, "the request body is over the limit of {max} bytes")
            }
            BodyError::Timeout(limit) => write!(
                f,
                "the request body was not received within {} ms",
                limit.as_millis()
            ),
            BodyError::Broken(e) => write!(f, "the request body could not be read: {e}"),
        }
    }
}

/// Reads `req` whole: its head as plain values, its body within `limits`.
pub(super) async fn read(req: hyper::Request<Incoming>, limits: BodyLimits) -> Request {
    let (parts, body) = req.into_parts();
    // The body first: nothing else is built while a slow client holds the request open.
    let body = read_body(&parts.headers, body, limits).await;
    let headers = parts
        .headers
        .iter()
        .filter_map(|(k, v)| {
            let v = std::str::from_utf8(v.as_bytes()).ok()?;
            Some((k.as_str().to_ascii_lowercase(), v.to_string()))
        })
        .collect();
    Request {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parse_query(parts.uri.query().unwrap_or("")),
        headers,
        body,
    }
}

/// The whole body, or why not: a declared length over the limit is refused without reading.
async fn read_body(
    headers: &HeaderMap,
    body: Incoming,
    limits: BodyLimits,
) -> Result<Bytes, BodyError> {
    let max = limits.max_bytes;
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(BodyError::TooLarge(max));
    }
    let collect = Limited::new(body, max).collect();
    let collected = match limits.timeout {
        None => collect.await,
        Some(limit) => tokio::time::timeout(limit, collect)
            .await
            .map_err(|_| BodyError::Timeout(limit))?,
    };
    match collected {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(BodyError::TooLarge(max)),
        Err(e) => Err(BodyError::Broken(e.to_string())),
    }
}

/// A URL's query string as a map (`a=1&b` → `{a: "1", b: ""}`), keys and values percent-decoded
/// the form way (`+` is a space; a `%` not followed by two hex digits stays); empty pairs are
/// skipped, the last of a repeated key wins, bytes that do not decode to UTF-8 become U+FFFD.
pub(crate) fn parse_query(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    if !s.contains(['%', '+']) {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
