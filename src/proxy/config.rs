//! The proxy's configuration file (strict TOML): the loopback address, the limits a hostile
//! client meets (body size, JSON nesting, connections, header/body/idle timeouts), and one route
//! per model alias (upstream provider, base URL, key, upstream model, strict policy).

use std::net::SocketAddr;
use std::path::Path;

use serde::Deserialize;

use crate::located::Located;
use crate::model::{Provider, StrictPolicy};

/// `tooltape proxy --config FILE`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyConfig {
    /// Loopback address to listen on (`127.0.0.1:0`: any free port). Other addresses are refused.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Request bodies above this many bytes are answered 413 (a larger declared
    /// `Content-Length` at once, before any of the body is read).
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
    /// JSON nested deeper than this (arrays and objects) is answered 400; at most 128.
    #[serde(default = "default_max_depth")]
    pub max_json_depth: usize,
    /// Open client connections at most; one more is answered 503 and closed.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Milliseconds a connection has to send a request's whole head, counted from when it
    /// starts waiting for one (on connecting, and after each answer); then it is closed.
    #[serde(default = "default_header_timeout")]
    pub header_timeout_ms: u64,
    /// Milliseconds a client has to send a request's whole body; then it is answered 408.
    #[serde(default = "default_body_timeout")]
    pub body_timeout_ms: u64,
    /// Milliseconds a connection may go without reading or writing a byte while no request is
    /// in flight (a client that does not read its answer, or waits between requests); then
    /// it is closed.
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_ms: u64,
    /// Seconds an upstream request may take in all.
    #[serde(default = "default_timeout")]
    pub upstream_timeout_secs: u64,
    #[serde(default, rename = "route")]
    pub routes: Vec<ProxyRoute>,
}

/// One model alias and where it goes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyRoute {
    /// The `model` clients send (Gemini: the path's model).
    pub model: String,
    pub provider: Provider,
    /// Upstream origin, e.g. `http://127.0.0.1:8080` (paths are the provider's own).
    pub base_url: String,
    /// The model sent upstream; the alias when absent.
    #[serde(default)]
    pub upstream_model: Option<String>,
    /// API key, or the environment variable holding it.
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub key_env: Option<String>,
    /// The strict policy for this route's tools (`auto`: strict where lossless, else non-strict
    /// with the reason in `x-tooltape-notes`; `require`: fail closed; `off`).
    #[serde(default)]
    pub strict: StrictPolicy,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}
fn default_max_body() -> usize {
    8 * 1024 * 1024
}
fn default_timeout() -> u64 {
    300
}
fn default_max_depth() -> usize {
    64
}
fn default_max_connections() -> usize {
    4096
}
fn default_header_timeout() -> u64 {
    10_000
}
fn default_body_timeout() -> u64 {
    30_000
}
fn default_idle_timeout() -> u64 {
    30_000
}

/// serde_json refuses deeper input itself (its recursion limit).
const MAX_JSON_DEPTH: usize = 128;

impl ProxyConfig {
    /// Reads and checks a config file; errors point at `path:line:col`.
    pub fn load(path: &Path) -> Result<ProxyConfig, Located> {
        let source = std::fs::read_to_string(path)
            .map_err(|e| Located::at_start(path, format!("cannot read the proxy config: {e}")))?;
        ProxyConfig::parse(path, &source)
    }

    pub fn parse(path: &Path, source: &str) -> Result<ProxyConfig, Located> {
        let cfg: ProxyConfig = toml::from_str(source).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            Located::at_offset(path, source, at, e.message().to_string())
        })?;
        if let Err(e) = cfg.check_limits() {
            let key = e.split(' ').next().unwrap_or_default();
            let at = source.find(key).unwrap_or(0);
            return Err(Located::at_offset(path, source, at, e));
        }
        if !cfg.listen.ip().is_loopback() {
            return Err(Located::at_start(
                path,
                format!(
                    "listen = {}: the proxy only listens on loopback (127.0.0.1 or ::1)",
                    cfg.listen
                ),
            ));
        }
        for (i, r) in cfg.routes.iter().enumerate() {
            if cfg.routes[..i].iter().any(|o| o.model == r.model) {
                let at = source.find(&format!("\"{}\"", r.model)).unwrap_or(0);
                return Err(Located::at_offset(
                    path,
                    source,
                    at,
                    format!("model `{}` is routed twice", r.model),
                ));
            }
            if !r.base_url.starts_with("http://") && !r.base_url.starts_with("https://") {
                let at = source.find(&r.base_url).unwrap_or(0);
                return Err(Located::at_offset(
                    path,
                    source,
                    at,
                    format!(
                        "base_url `{}` must start with http:// or https://",
                        r.base_url
                    ),
                ));
            }
        }
        Ok(cfg)
    }

    /// Every limit in its range: the error names the key, its value and the range.
    pub fn check_limits(&self) -> Result<(), String> {
        let positive = [
            ("max_body_bytes", self.max_body_bytes as u64),
            ("max_connections", self.max_connections as u64),
            ("header_timeout_ms", self.header_timeout_ms),
            ("body_timeout_ms", self.body_timeout_ms),
            ("idle_timeout_ms", self.idle_timeout_ms),
            ("upstream_timeout_secs", self.upstream_timeout_secs),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{key} = 0: it must be at least 1"));
        }
        if !(1..=MAX_JSON_DEPTH).contains(&self.max_json_depth) {
            return Err(format!(
                "max_json_depth = {}: it must be between 1 and {MAX_JSON_DEPTH}",
                self.max_json_depth
            ));
        }
        Ok(())
    }

    pub(crate) fn route(&self, model: &str) -> Option<&ProxyRoute> {
        self.routes.iter().find(|r| r.model == model)
    }
}

impl ProxyRoute {
    pub(crate) fn key(&self) -> Option<String> {
        self.key
            .clone()
            .or_else(|| self.key_env.as_ref().and_then(|v| std::env::var(v).ok()))
    }
}
