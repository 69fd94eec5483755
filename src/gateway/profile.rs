//! Gateway profiles (`gateways/NAME.toml`): install, start, offline environment, readiness,
//! auth, routes and known failures; strict TOML with `path:line:col` errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::case::KnownFailure;
use crate::located::Located;
use crate::model::Provider;

/// How a profile is written. Every table rejects unknown fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// One sentence: what gateway, which version, published or locked dependencies.
    pub description: String,
    /// Exact pinned version (the install folder is `NAME-VERSION`).
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub install: Option<Install>,
    #[serde(default)]
    pub start: Option<Start>,
    /// Headers every client request to the gateway carries (its own key).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A path the gateway serves the APIs under (e.g. `/openai`): prefixed to every client
    /// request's path, not to the readiness check.
    #[serde(default)]
    pub base_path: String,
    /// Trials run at once (cases run in parallel; one case's trials one after another).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    pub routes: Vec<Spanned<Route>>,
    #[serde(default)]
    pub known_failure: Vec<Spanned<KnownEntry>>,
}

/// A gateway's known failure: the shared one (`trials`, `reason`, `flaky`), optionally naming a
/// root cause (`tooltape gateway NAME --findings`) and its audit. An entry with a `cause` covers
/// only the trials of its pattern that fail with that cause; it fails the run when none does.
#[derive(Debug, Deserialize)]
pub struct KnownEntry {
    #[serde(flatten)]
    pub failure: KnownFailure,
    /// A root-cause id, e.g. `refused-1a2b3c4d`.
    #[serde(default)]
    pub cause: Option<String>,
    /// What the audit found the cause to be (spelled `verdict = "bug"` in profiles).
    #[serde(default)]
    pub verdict: Option<Audit>,
    /// Where the bug is tracked (an issue or pull-request URL).
    #[serde(default)]
    pub tracker: Option<String>,
}

/// The audit of a root cause: a bug, or a limitation the gateway documents (a trial's own
/// verdict is `check::Verdict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Audit {
    /// The gateway does not do what the APIs it speaks document.
    Bug,
    /// The gateway documents that it does not do this.
    Limitation,
}

impl Audit {
    pub fn as_str(self) -> &'static str {
        match self {
            Audit::Bug => "bug",
            Audit::Limitation => "documented limitation",
        }
    }
}

fn default_concurrency() -> usize {
    4
}

/// Installing the pinned version into `dir` (outside the repository) when `check` is missing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Install {
    /// A path under the install folder that exists once installed (e.g. `bin/litellm`).
    pub check: String,
    /// Run with `sh -c` in the install folder; `{{dir}}` is that folder.
    pub command: String,
}

/// Starting the gateway on loopback.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// Program and arguments; `{{dir}}`, `{{port}}`, `{{config}}`, `{{upstream}}`, `{{work}}`
    /// (the run's scratch folder) are filled, `{{gateways}}` with the profiles' folder (launcher
    /// scripts kept beside the profiles), and `{{tooltape}}` with the running `tooltape` binary.
    pub command: Vec<String>,
    /// Config file written before start (`{{upstream}}`, `{{port}}`, `{{key}}` filled).
    #[serde(default)]
    pub config: Option<String>,
    /// Where the config is written: a file name, or a path under the run's scratch folder
    /// (`{{work}}`), its folders created (e.g. `home/.claude-code-router/config.json` for a
    /// gateway that reads its config from `$HOME`). The extension matters to some gateways.
    #[serde(default = "default_config_name")]
    pub config_name: String,
    /// A gateway that binds a port of its own choosing and reports it: the first line of its
    /// output (stdout or stderr) starting with this prefix gives its base URL (the rest of the
    /// line). Without it, the gateway is started on `{{port}}`.
    #[serde(default)]
    pub url_line: Option<String>,
    /// Environment; keeps the gateway offline (no cost maps, telemetry, update checks).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `GET` path that answers 2xx once the gateway is ready; may be left out only with
    /// `url_line` (a gateway that reports its URL once it serves).
    #[serde(default)]
    pub ready: Option<String>,
    #[serde(default = "default_ready_timeout")]
    pub ready_timeout_secs: u64,
}

fn default_config_name() -> String {
    "config.yaml".into()
}

fn default_ready_timeout() -> u64 {
    90
}

/// One inbound format and one upstream provider.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The client's wire format: `chat`, `responses`, `messages`, `generate-content`.
    #[serde(deserialize_with = "inbound_format")]
    pub inbound: Provider,
    /// The provider the gateway forwards to (a `Provider` slug).
    pub upstream: Provider,
    /// The model name the client sends; the gateway maps it to the upstream model.
    pub model: String,
    /// Extra headers for this route's requests (`{{upstream}}` filled).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A name of its own (client mode's routes are named by the wire format the library speaks,
    /// or by the profile); not written in gateway profiles.
    #[serde(skip)]
    pub label: Option<String>,
}

impl Route {
    /// `chat→anthropic` (or the route's own label).
    pub fn name(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => format!("{}→{}", inbound_slug(self.inbound), self.upstream.slug()),
        }
    }
}

/// The profile spellings of the inbound wire formats (serde names only: the type is `Provider`).
const INBOUND: [(&str, Provider); 4] = [
    ("chat", Provider::OpenaiChat),
    ("responses", Provider::OpenaiResponses),
    ("messages", Provider::Anthropic),
    ("generate-content", Provider::Gemini),
];

/// The profile spelling of an inbound format: `chat`, `responses`, `messages`, `generate-content`.
fn inbound_slug(p: Provider) -> &'static str {
    INBOUND
        .iter()
        .find(|(_, q)| *q == p)
        .map_or("?", |(s, _)| s)
}

/// Reads an inbound format from its profile spelling.
fn inbound_format<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Provider, D::Error> {
    let s = String::deserialize(d)?;
    INBOUND
        .iter()
        .find(|(slug, _)| *slug == s)
        .map(|(_, p)| *p)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown inbound format `{s}`; expected one of chat, responses, messages, generate-content"
            ))
        })
}

/// A loaded profile: its name (file stem), path and source for locations.
#[derive(Debug)]
pub struct LoadedProfile {
    pub name: String,
    pub path: PathBuf,
    pub source: String,
    pub profile: Profile,
}

impl LoadedProfile {
    /// The profile's routes, without their spans.
    pub fn routes(&self) -> Vec<Route> {
        self.profile
            .routes
            .iter()
            .map(|r| r.get_ref().clone())
            .collect()
    }

    /// `path:line:col` of a span in the profile.
    pub fn locate(&self, span: std::ops::Range<usize>) -> String {
        let (l, c) = crate::located::line_col(&self.source, span.start);
        format!("{}:{l}:{c}", self.path.display())
    }

    /// The known failure covering a trial key (`case::route::choice::mode`) that fails with
    /// root cause `cause`: an entry naming that cause whose pattern matches, else an entry naming
    /// no cause whose pattern matches (`None`: only those).
    pub fn known_failure(&self, key: &str, cause: Option<&str>) -> Option<&Spanned<KnownEntry>> {
        let matching = || {
            self.profile
                .known_failure
                .iter()
                .filter(|k| crate::case::pattern_matches(&k.get_ref().failure.trials, key))
        };
        cause
            .and_then(|c| matching().find(|k| k.get_ref().cause.as_deref() == Some(c)))
            .or_else(|| matching().find(|k| k.get_ref().cause.is_none()))
    }

    /// The install folder: `$XDG_CACHE_HOME/tooltape/gateways/NAME-VERSION` (else `~/.cache`).
    pub fn install_dir(&self) -> PathBuf {
        let version = self.profile.version.as_deref().unwrap_or("unversioned");
        install_cache().join(format!("{}-{version}", self.name))
    }
}

/// Where pinned installs of gateways and client libraries go, outside the repository:
/// `$TOOLTAPE_GATEWAY_CACHE`, else `$XDG_CACHE_HOME/tooltape/gateways`, else `~/.cache/…`.
pub fn install_cache() -> PathBuf {
    std::env::var_os("TOOLTAPE_GATEWAY_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("tooltape/gateways"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/tooltape/gateways"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("tooltape-gateways"))
}

/// A profile file read as strict TOML: `FOLDER/NAME.toml` under `root` (or a path ending in
/// `.toml`), its source (for locations) and the value, with `path:line:col` errors. `kind`
/// names it in messages (`gateway`, `client`). Gateway and client profiles both read so.
pub(crate) fn read_profile<T: serde::de::DeserializeOwned>(
    root: &Path,
    folder: &str,
    kind: &str,
    name: &str,
) -> Result<(PathBuf, String, T), Located> {
    let path = if name.ends_with(".toml") {
        PathBuf::from(name)
    } else {
        root.join(folder).join(format!("{name}.toml"))
    };
    let source = std::fs::read_to_string(&path).map_err(|e| {
        Located::at_start(
            &path,
            format!("cannot read the {kind} profile: {e}; profiles live in {folder}/NAME.toml"),
        )
    })?;
    let value: T = toml::from_str(&source).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        Located::at_offset(&path, &source, offset, e.message().to_string())
    })?;
    Ok((path, source, value))
}

/// Reads `gateways/NAME.toml` (or any path ending in `.toml`).
pub fn load_profile(root: &Path, name: &str) -> Result<LoadedProfile, Located> {
    let (path, source, profile): (_, _, Profile) = read_profile(root, "gateways", "gateway", name)?;
    if profile.routes.is_empty() {
        return Err(Located::at_start(
            &path,
            "no [[routes]]: add at least one route",
        ));
    }
    if let Some(start) = &profile.start
        && start.ready.is_none()
        && start.url_line.is_none()
    {
        return Err(Located::at_start(
            &path,
            "[start] needs `ready` (a GET path that answers 2xx once the gateway serves) unless the gateway reports its URL (`url_line`)",
        ));
    }
    if profile.concurrency == 0 {
        return Err(Located::at_start(&path, "concurrency must be at least 1"));
    }
    let stem = path
        .file_stem()
        .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
    Ok(LoadedProfile {
        name: stem,
        path,
        source,
        profile,
    })
}

/// Fills `{{key}}` placeholders.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    out
}
