//! Redaction: the ONE table of secrets and volatile data used when a cassette is written and when
//! a replayed request is matched against it, plus the scan that refuses to write (or `tooltape
//! scan` reports) anything key-shaped. Pattern matching is hand-written (no regex).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cassette::{Cassette, StoredResponse};
use crate::http::HttpRequest;

/// What every secret is replaced with.
pub const REDACTED: &str = "<REDACTED>";

/// Request/response headers that carry credentials: kept as [`REDACTED`], never in clear.
pub(crate) const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
    "x-goog-user-project",
    "x-amz-security-token",
];

/// JSON fields that carry credentials wherever they appear in a body (Responses `mcp` tools'
/// `authorization`, Anthropic `mcp_servers[].authorization_token`): replaced when writing,
/// flagged by the scan when not [`REDACTED`].
pub(crate) const SECRET_FIELDS: &[&str] = &["authorization_token", "authorization"];

/// Key shapes: (prefix, minimum run of token characters after it, what it is). Used by
/// redaction and by the scan alike.
pub(crate) const KEY_SHAPES: &[(&str, usize, &str)] = &[
    ("sk-", 20, "an API key (sk-…: OpenAI, Anthropic)"),
    ("AIza", 30, "a Google API key (AIza…)"),
    ("ya29.", 20, "a Google OAuth token (ya29.…)"),
    ("github_pat_", 20, "a GitHub token (github_pat_…)"),
    ("ghp_", 30, "a GitHub token (ghp_…)"),
    ("gho_", 30, "a GitHub token (gho_…)"),
    ("ghu_", 30, "a GitHub token (ghu_…)"),
    ("ghs_", 30, "a GitHub token (ghs_…)"),
    ("ghr_", 30, "a GitHub token (ghr_…)"),
    ("AKIA", 16, "an AWS access key id (AKIA…)"),
    ("ASIA", 16, "an AWS access key id (ASIA…)"),
    ("xoxb-", 10, "a Slack token (xoxb-…)"),
    ("xoxa-", 10, "a Slack token (xoxa-…)"),
    ("xoxp-", 10, "a Slack token (xoxp-…)"),
];

/// Query parameters that carry credentials (Gemini's `?key=`).
pub(crate) const SECRET_QUERY: &[&str] = &["key", "api_key", "api-key", "access_token"];

/// Response headers dropped because they change on every call (ids, timings, counters, dates,
/// cookies, transport framing) or say who the account is.
pub(crate) const VOLATILE_HEADERS: &[&str] = &[
    "x-request-id",
    "request-id",
    "openai-processing-ms",
    "openai-organization",
    "openai-project",
    "openai-version",
    "openai-model",
    "anthropic-organization-id",
    "x-envoy-upstream-service-time",
    "cf-ray",
    "cf-cache-status",
    "set-cookie",
    "cookie",
    "date",
    "age",
    "alt-svc",
    "server",
    "server-timing",
    "strict-transport-security",
    "vary",
    "via",
    "x-cloud-trace-context",
    "x-amzn-requestid",
    "x-generation-id",
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
    "access-control-expose-headers",
    "x-content-type-options",
    "x-frame-options",
    "x-xss-protection",
    "x-robots-tag",
    "content-disposition",
];

/// Prefixes of volatile headers (rate-limit counters, SDK noise).
pub(crate) const VOLATILE_PREFIXES: &[&str] = &[
    "x-ratelimit-",
    "anthropic-ratelimit-",
    "x-stainless-",
    "x-amz-",
];

/// Whether a header (any case) is dropped from stored responses.
pub(crate) fn is_volatile_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    VOLATILE_HEADERS.contains(&n.as_str()) || VOLATILE_PREFIXES.iter().any(|p| n.starts_with(p))
}

pub(crate) fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str())
}

pub(crate) fn is_secret_query(name: &str) -> bool {
    SECRET_QUERY.contains(&name.to_ascii_lowercase().as_str())
}

/// Literal secrets known at run time (the keys in the environment), each at least 8 bytes.
#[derive(Clone, Debug, Default)]
pub struct Secrets(Vec<String>);

impl Secrets {
    pub fn new(values: impl IntoIterator<Item = String>) -> Secrets {
        let mut v: Vec<String> = values.into_iter().filter(|s| s.len() >= 8).collect();
        // Longest first, so a key containing another is replaced whole.
        v.sort_by_key(|s| std::cmp::Reverse(s.len()));
        v.dedup();
        Secrets(v)
    }

    /// The provider keys set in this process's environment.
    pub fn from_env() -> Secrets {
        let vars = crate::model::Provider::ALL
            .iter()
            .flat_map(|p| p.key_vars().iter());
        Secrets::new(vars.filter_map(|v| std::env::var(v).ok()))
    }

    pub fn values(&self) -> &[String] {
        &self.0
    }
}

/// A key-shaped string found in a text: byte range and what it looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub start: usize,
    pub end: usize,
    pub what: &'static str,
}

fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn bearer_char(b: u8) -> bool {
    token_char(b) || matches!(b, b'.' | b'~' | b'+' | b'/' | b'=')
}

/// Every key-shaped string and literal secret in `text`, sorted and non-overlapping.
pub fn find_secrets(text: &str, secrets: &Secrets) -> Vec<Hit> {
    let bytes = text.as_bytes();
    let mut hits = Vec::new();
    for s in secrets.values() {
        let mut from = 0;
        while let Some(i) = text[from..].find(s.as_str()) {
            hits.push(Hit {
                start: from + i,
                end: from + i + s.len(),
                what: "a key from the environment",
            });
            from += i + s.len();
        }
    }
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !token_char(bytes[i - 1]);
        if boundary {
            if let Some(&(prefix, min, what)) = KEY_SHAPES
                .iter()
                .find(|(p, _, _)| bytes[i..].starts_with(p.as_bytes()))
            {
                let start_run = i + prefix.len();
                let run = bytes[start_run..]
                    .iter()
                    .take_while(|b| token_char(**b) || **b == b'.')
                    .count();
                if run >= min {
                    hits.push(Hit {
                        start: i,
                        end: start_run + run,
                        what,
                    });
                    i = start_run + run;
                    continue;
                }
            }
            if bytes.len() >= i + 7 && bytes[i..i + 7].eq_ignore_ascii_case(b"bearer ") {
                let mut j = i + 7;
                while j < bytes.len() && bytes[j] == b' ' {
                    j += 1;
                }
                let run = bytes[j..].iter().take_while(|b| bearer_char(**b)).count();
                if run >= 8 {
                    hits.push(Hit {
                        start: j,
                        end: j + run,
                        what: "a bearer token",
                    });
                    i = j + run;
                    continue;
                }
            }
        }
        i += 1;
    }
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
    let mut out: Vec<Hit> = Vec::new();
    for h in hits {
        if out.last().is_none_or(|l| h.start >= l.end) {
            out.push(h);
        }
    }
    out
}

/// `text` with every secret replaced by [`REDACTED`]; every other byte kept as it was.
pub fn redact_text(text: &str, secrets: &Secrets) -> String {
    let hits = find_secrets(text, secrets);
    if hits.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for h in hits {
        out.push_str(&text[at..h.start]);
        out.push_str(REDACTED);
        at = h.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Redacts a JSON value in place: secret fields (Responses `mcp` tools' `authorization` and
/// `headers`, Anthropic `mcp_servers[].authorization_token`) and key-shaped strings anywhere.
pub(crate) fn redact_json(v: &mut Value, secrets: &Secrets) {
    match v {
        Value::String(s) => {
            let r = redact_text(s, secrets);
            if r != *s {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_json(x, secrets)),
        Value::Object(m) => {
            if m.get("type").and_then(Value::as_str) == Some("mcp")
                && let Some(Value::Object(h)) = m.get_mut("headers")
            {
                h.values_mut()
                    .for_each(|x| *x = Value::String(REDACTED.into()));
            }
            for f in SECRET_FIELDS {
                if let Some(t) = m.get_mut(*f)
                    && t.is_string()
                {
                    *t = Value::String(REDACTED.into());
                }
            }
            m.values_mut().for_each(|x| redact_json(x, secrets));
        }
        _ => {}
    }
}

fn redact_headers(h: &mut BTreeMap<String, String>, secrets: &Secrets) {
    for (k, v) in h.iter_mut() {
        *v = if is_secret_header(k) {
            REDACTED.to_string()
        } else {
            redact_text(v, secrets)
        };
    }
}

/// A request as stored and as matched: secret headers, secret query values and body secrets replaced.
pub fn redact_request(r: &mut HttpRequest, secrets: &Secrets) {
    redact_headers(&mut r.headers, secrets);
    for (k, v) in r.query.iter_mut() {
        *v = if is_secret_query(k) {
            REDACTED.to_string()
        } else {
            redact_text(v, secrets)
        };
    }
    redact_json(&mut r.body, secrets);
}

/// A response as stored: volatile headers dropped, secrets replaced in headers, body, stream
/// events (byte-exact except the replaced spans) and text.
pub fn redact_response(r: &mut StoredResponse, secrets: &Secrets) {
    r.headers.retain(|k, _| !is_volatile_header(k));
    redact_headers(&mut r.headers, secrets);
    if let Some(b) = &mut r.body {
        redact_json(b, secrets);
    }
    if let Some(events) = &mut r.stream {
        for e in events.iter_mut() {
            let red = redact_text(e, secrets);
            if red != *e {
                *e = red;
            }
        }
    }
    if let Some(t) = &mut r.text {
        *t = redact_text(t, secrets);
    }
}

/// Redacts every interaction of a cassette.
pub(crate) fn redact_cassette(c: &mut Cassette, secrets: &Secrets) {
    for it in &mut c.interactions {
        redact_request(&mut it.request, secrets);
        redact_response(&mut it.response, secrets);
    }
}

/// A forbidden pattern in a cassette's text: 1-based line and column, and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForbiddenMatch {
    pub line: usize,
    pub column: usize,
    pub what: String,
}

/// Scans a serialized cassette (or any text) for secrets: key-shaped strings, literal keys,
/// and secret headers or query parameters whose value is not [`REDACTED`].
pub fn scan(text: &str, secrets: &Secrets) -> Vec<ForbiddenMatch> {
    let mut found: Vec<(usize, String)> = find_secrets(text, secrets)
        .into_iter()
        .map(|h| (h.start, format!("{} in clear", h.what)))
        .collect();
    // JSON-escaped forms (`\u0073k-proj-…`): the same shapes, on the unescaped text, reported
    // at the escaped position.
    if text.contains("\\u") {
        let (plain, at) = unescape_ascii(text);
        for h in find_secrets(&plain, secrets) {
            found.push((at[h.start], format!("{} in clear (JSON-escaped)", h.what)));
        }
    }
    for field in SECRET_FIELDS {
        let needle = format!("\"{field}\": \"");
        let mut from = 0;
        while let Some(i) = text[from..].find(&needle) {
            let at = from + i;
            from = at + needle.len();
            if inside_object_named(text, at, "headers") {
                continue; // headers are judged below
            }
            if !text[from..].starts_with(REDACTED) && !text[from..].starts_with('"') {
                found.push((at, format!("secret field `{field}` not redacted")));
            }
        }
    }
    let lower = text.to_ascii_lowercase();
    let names = SECRET_HEADERS
        .iter()
        .map(|h| (*h, "secret header"))
        .chain(SECRET_QUERY.iter().map(|q| (*q, "secret query parameter")));
    for (name, kind) in names {
        let needle = format!("\"{name}\": \"");
        let mut from = 0;
        while let Some(i) = lower[from..].find(&needle) {
            let at = from + i;
            let value_at = at + needle.len();
            from = value_at;
            // Only header and query maps: `"key"` is also an ordinary JSON field in bodies.
            if kind.contains("query") && !inside_object_named(text, at, "query") {
                continue;
            }
            if !kind.contains("query") && !inside_object_named(text, at, "headers") {
                continue;
            }
            if !text[value_at..].starts_with(REDACTED) {
                found.push((at, format!("{kind} `{name}` not redacted")));
            }
        }
    }
    found.sort();
    found.dedup_by_key(|f| f.0);
    found
        .into_iter()
        .map(|(at, what)| {
            let (line, column) = crate::located::line_col(text, at);
            ForbiddenMatch { line, column, what }
        })
        .collect()
}

/// `text` with `\uXXXX` escapes of ASCII characters decoded, and for each byte of the result
/// the byte offset in `text` it came from.
fn unescape_ascii(text: &str) -> (String, Vec<usize>) {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = Vec::with_capacity(bytes.len() + 1);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && bytes.get(i + 1) == Some(&b'u')
            && let Some(hex) = text.get(i + 2..i + 6)
            && let Ok(c) = u8::from_str_radix(hex, 16)
            && c.is_ascii()
            && !hex.starts_with('+')
        {
            out.push(c);
            at.push(i);
            i += 6;
            continue;
        }
        out.push(bytes[i]);
        at.push(i);
        i += 1;
    }
    at.push(bytes.len());
    // Only ASCII escapes were replaced by ASCII bytes: the result is still UTF-8.
    (String::from_utf8_lossy(&out).into_owned(), at)
}

/// Whether byte `at` of pretty JSON `text` sits directly inside an object under key `name`
/// (the nearest unclosed `{` is preceded by `"name": `).
fn inside_object_named(text: &str, at: usize, name: &str) -> bool {
    let bytes = text.as_bytes();
    let (mut depth, mut i, mut in_str) = (0i32, at, false);
    while i > 0 {
        i -= 1;
        let b = bytes[i];
        if b == b'"' && (i == 0 || bytes[i - 1] != b'\\') {
            in_str = !in_str;
        }
        if in_str {
            continue;
        }
        match b {
            b'}' | b']' => depth += 1,
            b'{' | b'[' if depth > 0 => depth -= 1,
            b'{' => return text[..i].trim_end().ends_with(&format!("\"{name}\":")),
            b'[' => return false,
            _ => {}
        }
    }
    false
}
