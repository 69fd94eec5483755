//! `tooltape import-vcr`: converts a vcrpy / pytest-recording YAML cassette (bodies as strings or
//! `!!binary` base64 of gzip) into a redacted tooltape cassette with provenance `imported`.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use crate::cassette::{self, Cassette, Interaction, Provenance, ProvenanceKind, StoredResponse};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::Provider;

/// Request headers worth keeping from another recorder (they change what the provider does);
/// everything else (SDK noise, transport, credentials) is dropped.
const KEPT_REQUEST_HEADERS: &[&str] = &["content-type", "anthropic-version", "anthropic-beta"];

/// A file that cannot be imported, with where.
pub(crate) type ImportError = crate::located::Located;

/// Converts the YAML text of a vcrpy cassette (read from `path`) into a tooltape cassette
/// (not yet redacted: [`crate::record::write_cassette`] redacts and scans before writing).
pub fn convert(path: &Path, text: &str, provider: Provider) -> Result<Cassette, ImportError> {
    let err = |line: usize, column: usize, message: String| ImportError {
        path: path.into(),
        line,
        column,
        message,
    };
    // Aliases are expanded by the loader: a few hundred bytes of nested aliases would grow to
    // GiBs. Count the expanded size first, on the event stream, without building anything.
    expanded_size(text, MAX_YAML_NODES).map_err(|(line, col, m)| err(line, col, m))?;
    let docs = YamlLoader::load_from_str(text).map_err(|e| {
        err(
            e.marker().line(),
            e.marker().col() + 1,
            format!("not valid YAML: {}", e.info()),
        )
    })?;
    let Some(Yaml::Array(items)) = docs.first().map(|d| &d["interactions"]) else {
        return Err(err(
            1,
            1,
            "no `interactions:` list: not a vcrpy cassette".into(),
        ));
    };
    let mut interactions = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let line = interaction_line(text, i);
        let it =
            interaction(item).map_err(|m| err(line, 1, format!("interaction {}: {m}", i + 1)))?;
        interactions.push(it);
    }
    if interactions.is_empty() {
        return Err(err(1, 1, "the cassette holds no interactions".into()));
    }
    let first = &interactions[0];
    let model = first
        .request
        .body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            first
                .request
                .path
                .split("models/")
                .nth(1)
                .and_then(|m| m.split(':').next())
                .map(str::to_string)
        })
        .unwrap_or_default();
    let answered_model = first
        .response
        .body
        .as_ref()
        .and_then(|b| b.get("model").or_else(|| b.get("modelVersion")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("cassette");
    let stem = path
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or("cassette");
    Ok(Cassette {
        tooltape: cassette::FORMAT,
        trial: format!("imported::{provider}::{stem}"),
        provenance: Provenance {
            kind: ProvenanceKind::Imported,
            date: cassette::today(),
            model,
            answered_model,
            tooltape: env!("CARGO_PKG_VERSION").to_string(),
            case_hash: None,
            source: Some(format!("vcrpy cassette {name}")),
            server: None,
        },
        interactions,
    })
}

/// The most YAML nodes a cassette may expand to (aliases counted at their expanded size). A
/// vcrpy cassette of 1,000 interactions holds about 100,000.
pub(crate) const MAX_YAML_NODES: u64 = 2_000_000;

/// Counts the nodes `text` expands to, aliases included, refusing past `limit` with the
/// position of the alias that crossed it.
fn expanded_size(text: &str, limit: u64) -> Result<u64, (usize, usize, String)> {
    use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
    use yaml_rust2::scanner::Marker;
    struct Counter {
        total: u64,
        /// Per open node: its anchor id (0: none) and the count when it opened.
        open: Vec<(usize, u64)>,
        sizes: BTreeMap<usize, u64>,
        limit: u64,
        over: Option<(usize, usize)>,
    }
    impl Counter {
        fn closed(&mut self, anchor: usize, start: u64) {
            if anchor != 0 {
                self.sizes.insert(anchor, self.total.saturating_sub(start));
            }
        }
    }
    impl MarkedEventReceiver for Counter {
        fn on_event(&mut self, ev: Event, mark: Marker) {
            match ev {
                Event::Scalar(_, _, anchor, _) => {
                    self.total = self.total.saturating_add(1);
                    self.closed(anchor, self.total - 1);
                }
                Event::Alias(id) => {
                    let n = self.sizes.get(&id).copied().unwrap_or(1);
                    self.total = self.total.saturating_add(n);
                }
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    self.total = self.total.saturating_add(1);
                    self.open.push((anchor, self.total - 1));
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    if let Some((anchor, start)) = self.open.pop() {
                        self.closed(anchor, start);
                    }
                }
                _ => {}
            }
            if self.total > self.limit && self.over.is_none() {
                self.over = Some((mark.line(), mark.col() + 1));
            }
        }
    }
    let mut c = Counter {
        total: 0,
        open: Vec::new(),
        sizes: BTreeMap::new(),
        limit,
        over: None,
    };
    let mut parser = Parser::new_from_str(text);
    // A syntax error is reported (with its position) by the loader that runs next.
    let _ = parser.load(&mut c, true);
    match c.over {
        Some((line, col)) => Err((
            line,
            col,
            format!(
                "the YAML expands past {limit} nodes (aliases counted at their expanded size): refusing a YAML alias bomb"
            ),
        )),
        None => Ok(c.total),
    }
}

/// 1-based line of the `i`-th `- request:` entry.
fn interaction_line(text: &str, i: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- request:"))
        .nth(i)
        .map_or(1, |(n, _)| n + 1)
}

fn interaction(item: &Yaml) -> Result<Interaction, String> {
    let req = &item["request"];
    let resp = &item["response"];
    let method = req["method"]
        .as_str()
        .ok_or("request has no `method`")?
        .to_ascii_uppercase();
    let uri = req["uri"].as_str().ok_or("request has no `uri`")?;
    let (path, query) = split_uri(uri);
    let req_headers = headers(&req["headers"]);
    let body_bytes = body_of(&req["body"], &req_headers)?;
    let body: Value = if body_bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body_bytes)
            .map_err(|e| format!("the request body is not JSON: {e}"))?
    };
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false)
        || path.contains("streamGenerateContent");
    let mut kept = BTreeMap::new();
    for (k, v) in &req_headers {
        if KEPT_REQUEST_HEADERS.contains(&k.as_str()) {
            kept.insert(k.clone(), v.clone());
        }
    }
    let request = HttpRequest {
        method,
        path,
        query,
        headers: kept,
        body,
    };
    let status = match &resp["status"]["code"] {
        Yaml::Integer(n) => {
            u16::try_from(*n).map_err(|_| format!("status {n} is not an HTTP status"))?
        }
        _ => return Err("response has no `status: code:`".into()),
    };
    let resp_headers = headers(&resp["headers"]);
    let resp_body = body_of(&resp["body"]["string"], &resp_headers)?;
    let http = HttpResponse {
        status,
        headers: resp_headers,
        body: resp_body,
    };
    Ok(Interaction {
        request,
        response: StoredResponse::from_http(&http, stream),
    })
}

/// `https://host/p/a/t/h?x=1&y=2` → (`/p/a/t/h`, {x: 1, y: 2}); values kept as written.
fn split_uri(uri: &str) -> (String, BTreeMap<String, String>) {
    let after_scheme = uri.split_once("://").map_or(uri, |(_, r)| r);
    let path_q = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    let (path, q) = path_q.split_once('?').unwrap_or((path_q, ""));
    let query = q
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    (path.to_string(), query)
}

/// Header map (`name: [values]` or `name: value`) with lower-cased names, values joined by `, `.
fn headers(y: &Yaml) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Yaml::Hash(h) = y {
        for (k, v) in h {
            let Some(name) = k.as_str() else { continue };
            let value = match v {
                Yaml::Array(a) => a.iter().filter_map(scalar).collect::<Vec<_>>().join(", "),
                other => scalar(other).unwrap_or_default(),
            };
            out.insert(name.to_ascii_lowercase(), value);
        }
    }
    out
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A body's bytes: a string as written, or `!!binary` (base64, maybe of gzip) decoded. The YAML
/// loader drops tags, so binary is recognised by shape: base64 text that decodes to gzip, or
/// base64 text under `content-encoding: gzip`.
fn body_of(y: &Yaml, headers: &BTreeMap<String, String>) -> Result<Vec<u8>, String> {
    let s = match y {
        Yaml::Null | Yaml::BadValue => return Ok(Vec::new()),
        Yaml::Hash(h) if h.is_empty() => return Ok(Vec::new()),
        other => scalar(other).ok_or("a body is neither a string nor binary")?,
    };
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let b64_shaped = !compact.is_empty()
        && compact
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    let gzip_header = headers
        .get("content-encoding")
        .is_some_and(|e| e.contains("gzip"));
    if b64_shaped && let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(&compact) {
        if raw.starts_with(&[0x1f, 0x8b]) {
            let limit = crate::input::max_file_bytes()?;
            return crate::input::gunzip(&raw, limit);
        }
        if gzip_header {
            return Ok(raw);
        }
    }
    Ok(s.into_bytes())
}
