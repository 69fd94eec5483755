//! Client profiles (`clients/NAME.toml`), in gateway profiles' shape: the pinned install, the
//! driver command, the routes (the wire formats the library speaks, with the model and the
//! library's own switches) and known failures; strict TOML with `path:line:col` errors.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use crate::engine::{Loaded, ProfileKnownFailure, Route, read_profile};
use crate::located::Located;
use crate::model::Provider;
use crate::system::Install;

/// How a client profile is written. Every table rejects unknown fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientProfile {
    /// One sentence: which library, which version, in which language.
    pub description: String,
    /// Exact pinned version (the install folder is `client-NAME-VERSION`).
    #[serde(default)]
    pub version: Option<String>,
    /// Where the library's bugs are filed (cited by the known failures' reasons).
    #[serde(default)]
    pub tracker: Option<String>,
    #[serde(default)]
    pub install: Option<Install>,
    pub driver: DriverTable,
    /// Driver processes at once (cases in parallel; one case's trials one after another).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    pub routes: Vec<Spanned<ClientRoute>>,
    #[serde(default)]
    pub known_failure: Vec<Spanned<ProfileKnownFailure>>,
}

crate::engine::profile_table!(ClientProfile, "client-");

fn default_concurrency() -> usize {
    4
}

/// Starting the driver: `{{dir}}` (the install folder), `{{root}}` (the project root, where
/// `clients/NAME/` holds the driver; for a built-in profile, its written-out folder),
/// `{{shipped}}` (the written-out built-in targets, whose `clients/python` and `clients/node`
/// hold the driver helpers) and `{{tooltape}}` (the running binary) are filled.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverTable {
    pub command: Vec<String>,
    /// Environment; keeps the library offline (no telemetry, no cost-map download).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds a driver may take over one result before its trial is broken.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_timeout() -> u64 {
    60
}

/// One wire format the library speaks.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientRoute {
    /// The wire format (a `Provider` slug): `openai-chat`, `openai-responses`, `anthropic`,
    /// `gemini`, `text-protocol`.
    pub api: Provider,
    /// The model the caller names (the driver may prefix it as its library wants).
    pub model: String,
    /// The route's name in trial names; default: the `api` slug (`mcp-` before it on an MCP
    /// route). Two routes to one API (a library's two ways to it) need names of their own.
    #[serde(default)]
    pub name: Option<String>,
    /// The tools come from an MCP server tooltape runs, through the library's own MCP client
    /// (issue 42 item 7): only cases whose tools are an MCP server's (`mcp = true` in the case)
    /// run on the route, and the driver gets the server's URL instead of tools to declare.
    #[serde(default)]
    pub mcp: bool,
    /// Library switches handed to the driver as the trial's `options`.
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
}

impl ClientRoute {
    pub fn name(&self) -> String {
        let prefix = if self.mcp { "mcp-" } else { "" };
        (self.name.clone()).unwrap_or_else(|| format!("{prefix}{}", self.api.slug()))
    }
}

/// A loaded client profile.
pub type LoadedClient = Loaded<ClientProfile>;

impl crate::system::Pinned for ClientProfile {
    fn pin(&mut self) -> (&mut Option<String>, Option<&mut Install>, &mut String) {
        (
            &mut self.version,
            self.install.as_mut(),
            &mut self.description,
        )
    }
}

impl Loaded<ClientProfile> {
    /// The routes as the engine's routes whose two ends are the library's wire format.
    pub fn routes(&self) -> Vec<Route> {
        self.profile
            .routes
            .iter()
            .map(|r| {
                let r = r.get_ref();
                Route {
                    inbound: r.api,
                    upstream: r.api,
                    model: r.model.clone(),
                    headers: BTreeMap::new(),
                    label: Some(r.name()),
                    mcp: r.mcp,
                }
            })
            .collect()
    }

    /// The route named `name`.
    pub fn route(&self, name: &str) -> Option<&ClientRoute> {
        self.profile
            .routes
            .iter()
            .map(Spanned::get_ref)
            .find(|r| r.name() == name)
    }
}

/// Reads `clients/NAME.toml` (or any path ending in `.toml`).
pub fn load_client(root: &Path, name: &str) -> Result<LoadedClient, Located> {
    let (path, source, profile, shipped): (_, _, ClientProfile, _) =
        read_profile(root, "clients", "client", name)?;
    if profile.routes.is_empty() {
        return Err(Located::at_start(
            &path,
            "no [[routes]]: add at least one route",
        ));
    }
    if profile.concurrency == 0 {
        return Err(Located::at_start(&path, "concurrency must be at least 1"));
    }
    if profile.driver.command.is_empty() {
        return Err(Located::at_start(
            &path,
            "[driver] command is empty: give the program and its arguments",
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for r in &profile.routes {
        if !seen.insert(r.get_ref().name()) {
            return Err(Located::at_offset(
                &path,
                &source,
                r.span().start,
                format!(
                    "a second route named `{}`: give it a `name` of its own",
                    r.get_ref().name()
                ),
            ));
        }
    }
    Ok(Loaded::named(name, (path, source, profile, shipped)))
}
