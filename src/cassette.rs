//! Cassettes: one JSON file per trial holding its ordered HTTP interactions and provenance;
//! loading with positions, byte-exact streams (one event per line), atomic writes.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::{HttpRequest, HttpResponse};

/// The cassette format version written in every file.
pub const FORMAT: u32 = 1;

/// `cassettes/servers/NAME/`: a model server's recorded run (`tooltape server NAME --record`),
/// replayed by `--replay`, which owns and checks it; the case trials' own cassettes are
/// `cassettes/PROVIDER/…` beside it.
pub const SERVER_TAPES: &str = "servers";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cassette {
    pub tooltape: u32,
    /// The trial that owns this cassette (`case::provider::choice::mode`), or a free label.
    pub trial: String,
    pub provenance: Provenance,
    pub interactions: Vec<Interaction>,
}

/// Where a cassette's responses came from. Anything not answered by the real provider is
/// `synthetic` (the project's simulator) or `imported` (converted from another recorder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub kind: ProvenanceKind,
    /// `YYYY-MM-DD` of the recording.
    pub date: String,
    /// Model asked for in the request.
    pub model: String,
    /// Model the response says answered, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_model: Option<String>,
    /// tooltape version that wrote the cassette.
    pub tooltape: String,
    /// Hash of the case (and its tool files) the cassette was recorded from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_hash: Option<String>,
    /// What answered: `simulator <version>`, a provider base URL, or the imported file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A model server's answers (`tooltape server NAME --record`): which server, which model
    /// file, which route's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerProvenance>,
}

/// Which model server answered, running which model file, on which route's settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerProvenance {
    /// The server profile (`servers/NAME.toml`).
    pub name: String,
    /// Its pinned version, when the profile pins one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The model file's name, its SHA-256 and the registry package that ships it (not known
    /// for a server at `--url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_package: Option<String>,
    /// The route (`chat`, `messages`, …) and the settings every body on it carried.
    pub route: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub settings: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProvenanceKind {
    Recorded,
    Synthetic,
    Imported,
}

impl ProvenanceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProvenanceKind::Recorded => "recorded",
            ProvenanceKind::Synthetic => "synthetic",
            ProvenanceKind::Imported => "imported",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    pub request: HttpRequest,
    pub response: StoredResponse,
}

/// A response as stored: exactly one of `body` (JSON), `stream` (byte-exact text, one SSE event
/// or JSON-array element per entry) or `text` (any other body).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredResponse {
    pub status: u16,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl StoredResponse {
    /// Stores a response: streams (2xx with `is_stream`) as events, JSON as a value, else text.
    pub fn from_http(resp: &HttpResponse, is_stream: bool) -> StoredResponse {
        let mut out = StoredResponse {
            status: resp.status,
            headers: resp.headers.clone(),
            body: None,
            stream: None,
            text: None,
        };
        let text = String::from_utf8_lossy(&resp.body).into_owned();
        if is_stream && resp.is_success() {
            out.stream = Some(split_stream(&text));
        } else if let Ok(v) = serde_json::from_slice::<Value>(&resp.body) {
            out.body = Some(v);
        } else {
            out.text = Some(text);
        }
        out
    }

    /// The body bytes as they are served on replay.
    pub fn body_bytes(&self) -> Vec<u8> {
        if let Some(s) = &self.stream {
            return s.concat().into_bytes();
        }
        if let Some(v) = &self.body {
            return serde_json::to_vec(v).unwrap_or_default();
        }
        self.text.clone().unwrap_or_default().into_bytes()
    }

    pub fn to_http(&self) -> HttpResponse {
        HttpResponse {
            status: self.status,
            headers: self.headers.clone(),
            body: self.body_bytes(),
        }
    }
}

/// Splits a stream body into entries whose concatenation is the body: SSE events (each with its
/// terminating blank line) or, for a streamed JSON array, one element per entry.
pub fn split_stream(text: &str) -> Vec<String> {
    if text.trim_start().starts_with('[') {
        return split_json_array(text);
    }
    crate::sse::split_events(text)
}

/// Splits after each top-level `,` or `]` of a JSON array text (strings and escapes respected).
fn split_json_array(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut in_str, mut esc, mut start) = (0i32, false, false, 0usize);
    for (i, b) in text.bytes().enumerate() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 1 && b == b'}' {
                    out.push(text[start..=i].to_string());
                    start = i + 1;
                }
            }
            _ => {}
        }
    }
    if start < text.len() {
        out.push(text[start..].to_string());
    }
    out
}

/// A cassette that cannot be read, with where.
pub(crate) type CassetteError = crate::located::Located;

/// Loads a cassette. A missing file is `Ok(None)`.
pub fn load(path: &Path) -> Result<Option<(Cassette, String)>, CassetteError> {
    let text = match crate::input::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.not_found => return Ok(None),
        Err(e) => return Err(CassetteError::at_start(path, e.message)),
    };
    let cassette: Cassette = serde_json::from_str(&text).map_err(|e| CassetteError {
        path: path.into(),
        line: e.line(),
        column: e.column(),
        message: format!("not a tooltape cassette: {e}"),
    })?;
    if cassette.tooltape != FORMAT {
        return Err(CassetteError {
            path: path.into(),
            line: 2,
            column: 1,
            message: format!(
                "cassette format {} is not supported (this tooltape writes {FORMAT})",
                cassette.tooltape
            ),
        });
    }
    for (i, it) in cassette.interactions.iter().enumerate() {
        let r = &it.response;
        if !(100..=599).contains(&r.status) {
            let (line, column) = response_field(&text, i, "\"status\"");
            return Err(CassetteError {
                path: path.into(),
                line,
                column,
                message: format!(
                    "interaction {}: status {} is not an HTTP status (100-599)",
                    i + 1,
                    r.status
                ),
            });
        }
        let bodies = [r.body.is_some(), r.stream.is_some(), r.text.is_some()]
            .iter()
            .filter(|b| **b)
            .count();
        if bodies > 1 {
            let line = request_line(&text, i);
            return Err(CassetteError {
                path: path.into(),
                line,
                column: 1,
                message: format!(
                    "interaction {i}: a response has at most one of body, stream and text"
                ),
            });
        }
    }
    Ok(Some((cassette, text)))
}

/// 1-based line and column of `key` (e.g. `"status"`) inside the `i`-th interaction's
/// `"response"` in a cassette's text (the response key itself when `key` is not found).
pub(crate) fn response_field(text: &str, i: usize, key: &str) -> (usize, usize) {
    let mut seen = 0;
    let mut in_response = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let col = line.len() - trimmed.len() + 1;
        if trimmed.starts_with("\"response\"") {
            if seen == i {
                in_response = Some((n + 1, col));
                if key == "\"response\"" {
                    return (n + 1, col);
                }
            }
            seen += 1;
        } else if in_response.is_some() && trimmed.starts_with(key) {
            return (n + 1, col);
        } else if in_response.is_some() && trimmed.starts_with("\"request\"") {
            break;
        }
    }
    in_response.unwrap_or((request_line(text, i), 1))
}

/// 1-based line of the `i`-th interaction's `"request"` key in a cassette's text.
pub(crate) fn request_line(text: &str, i: usize) -> usize {
    let mut seen = 0;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("\"request\"") {
            if seen == i {
                return n + 1;
            }
            seen += 1;
        }
    }
    1
}

/// Serializes a cassette the way it is stored: pretty JSON, one stream event per line, final newline.
pub fn to_text(c: &Cassette) -> String {
    let mut s = serde_json::to_string_pretty(c).unwrap_or_default();
    s.push('\n');
    s
}

/// Writes `text` to `path` atomically (temporary file in the same folder, then rename): a
/// failure leaves any existing file untouched.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("cassette");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The process id in a temporary file name written by [`write_atomic`] (`.NAME.tmp-PID`).
fn temp_pid(name: &str) -> Option<u32> {
    let (head, pid) = name.rsplit_once(".tmp-")?;
    (head.starts_with('.') && head.len() > 1)
        .then(|| pid.parse().ok())
        .flatten()
}

/// Removes the temporary files a killed [`write_atomic`] left in `dir` (and its subfolders when
/// `recursive`): only those whose writing process is no longer alive. Returns what it removed.
pub fn clean_stale_temps(dir: &Path, recursive: bool) -> Vec<std::path::PathBuf> {
    let mut removed = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return removed;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if recursive {
                removed.extend(clean_stale_temps(&p, true));
            }
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        let Some(pid) = p.file_name().and_then(|n| n.to_str()).and_then(temp_pid) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists();
        if !alive && std::fs::remove_file(&p).is_ok() {
            removed.push(p);
        }
    }
    removed
}

/// Today's date as `YYYY-MM-DD` (UTC), for provenance.
pub fn today() -> String {
    crate::clock::utc_day(std::time::SystemTime::now())
}

#[cfg(test)]
mod tests;
