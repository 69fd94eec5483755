//! Gateway profiles (`gateways/NAME.toml`): install, start, offline environment, readiness,
//! auth, routes and known failures; strict TOML with `path:line:col` errors (the parts client
//! profiles share are the engine's: `engine::profile`, `engine::known`, `engine::Route`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::engine::{Loaded, ProfileKnownFailure, Route, read_profile};
use crate::located::Located;
use crate::system::Install;

/// How a profile is written. Every table rejects unknown fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayProfile {
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
    pub known_failure: Vec<Spanned<ProfileKnownFailure>>,
}

crate::engine::profile_table!(GatewayProfile, "");

fn default_concurrency() -> usize {
    4
}

/// Starting the gateway on loopback.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// Program and arguments; `{{dir}}`, `{{port}}`, `{{config}}`, `{{upstream}}`, `{{work}}`
    /// (the run's scratch folder) are filled, `{{gateways}}` with the profiles' folder (launcher
    /// scripts kept beside the profiles; for a built-in profile, its written-out folder),
    /// `{{shipped}}` with the written-out built-in targets (`system::shipped`), and `{{tooltape}}` with the running `tooltape` binary.
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

/// A loaded gateway profile.
pub type LoadedGateway = Loaded<GatewayProfile>;

impl crate::system::Pinned for GatewayProfile {
    fn pin(&mut self) -> (&mut Option<String>, Option<&mut Install>, &mut String) {
        (
            &mut self.version,
            self.install.as_mut(),
            &mut self.description,
        )
    }
}

impl Loaded<GatewayProfile> {
    /// The profile's routes, without their spans.
    pub fn routes(&self) -> Vec<Route> {
        self.profile
            .routes
            .iter()
            .map(|r| r.get_ref().clone())
            .collect()
    }
}

/// What a profile that starts a process must say: how it knows the process serves (`ready`, or
/// `url_line`), and at least one trial in flight.
pub(crate) fn check_start(
    path: &Path,
    start: Option<&Start>,
    concurrency: usize,
) -> Result<(), Located> {
    if let Some(start) = start
        && start.ready.is_none()
        && start.url_line.is_none()
    {
        return Err(Located::at_start(
            path,
            "[start] needs `ready` (a GET path that answers 2xx once it serves, e.g. /health) unless it reports its URL (`url_line`)",
        ));
    }
    if concurrency == 0 {
        return Err(Located::at_start(path, "concurrency must be at least 1"));
    }
    Ok(())
}

/// Reads `gateways/NAME.toml` (or any path ending in `.toml`).
pub fn load_gateway(root: &Path, name: &str) -> Result<LoadedGateway, Located> {
    let (path, source, profile, shipped): (_, _, GatewayProfile, _) =
        read_profile(root, "gateways", "gateway", name)?;
    if profile.routes.is_empty() {
        return Err(Located::at_start(
            &path,
            "no [[routes]]: add at least one route",
        ));
    }
    check_start(&path, profile.start.as_ref(), profile.concurrency)?;
    Ok(Loaded::named(name, (path, source, profile, shipped)))
}
