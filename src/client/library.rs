//! A library as the engine's system under test: its client profile, the folder its driver's
//! command names as `{{root}}`, and the driver it is driven by (the profile's, or one the
//! caller gives, as the mutant tests do).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::driver::Spec;
use super::profile::{ClientProfile, LoadedClient};
use super::way::Driven;
use crate::engine::{Route, Started, System, SystemKind, TrialResult, Upstream};
use crate::system::{fill, shipped_dir};

/// A library under test.
pub struct Library {
    pub profile: Arc<LoadedClient>,
    root: PathBuf,
    driver: Option<Spec>,
    /// A development copy installed by the caller (`--install-dir`): `{{dir}}` names it, and
    /// nothing is installed.
    installed: Option<(PathBuf, String)>,
}

impl Library {
    /// The library of `profile`; `root` fills the driver command's `{{root}}` (where
    /// `clients/NAME/` holds the driver), unless the profile is the built-in one: then its
    /// written-out folder does.
    pub fn new(profile: LoadedClient, root: &Path) -> Library {
        let root = profile
            .shipped
            .clone()
            .unwrap_or_else(|| root.to_path_buf());
        let root = root.as_path();
        Library {
            profile: Arc::new(profile),
            root: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            driver: None,
            installed: None,
        }
    }

    /// Run against the library installed in `dir` (a venv with a checkout `pip install`ed into
    /// it, a folder whose `node_modules` holds a build) instead of the pinned release: `dir` fills
    /// the driver command's `{{dir}}`, the profile's install is skipped, and the run's version
    /// names the folder.
    pub fn with_installed(mut self, dir: &Path) -> Library {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let label = format!("installed in {}", dir.display());
        self.installed = Some((dir, label));
        self
    }

    /// `{{dir}}`: the caller's install, else the pinned release's folder in the cache.
    fn install_dir(&self) -> PathBuf {
        match &self.installed {
            Some((dir, _)) => dir.clone(),
            None => self.profile.install_dir(),
        }
    }

    /// Driven by `spec` instead of the profile's driver command.
    pub fn with_driver(mut self, spec: Spec) -> Library {
        self.driver = Some(spec);
        self
    }

    /// The profile's driver command and environment, placeholders filled, run in `work`.
    fn spec(&self, work: &Path) -> Spec {
        let me = std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "tooltape".into());
        let dir = self.install_dir().to_string_lossy().into_owned();
        let root = self.root.to_string_lossy().into_owned();
        let shipped = shipped_dir().to_string_lossy().into_owned();
        let values = [
            ("tooltape", me.as_str()),
            ("dir", dir.as_str()),
            ("root", root.as_str()),
            ("shipped", shipped.as_str()),
        ];
        let driver = &self.profile.profile.driver;
        Spec {
            argv: driver.command.iter().map(|s| fill(s, &values)).collect(),
            env: (driver.env.iter())
                .map(|(k, v)| (k.clone(), fill(v, &values)))
                .collect(),
            cwd: work.to_path_buf(),
            log: work.join("driver.log"),
        }
    }
}

impl System for Library {
    type Way = Driven;
    type Table = ClientProfile;

    fn kind(&self) -> SystemKind {
        SystemKind::Client
    }

    fn profile(&self) -> &LoadedClient {
        &self.profile
    }

    fn routes(&self) -> Vec<Route> {
        self.profile.routes()
    }

    /// The release under test: the development copy when the caller gave one.
    fn version(&self) -> Option<&str> {
        match &self.installed {
            Some((_, label)) => Some(label),
            None => self.profile.profile.version.as_deref(),
        }
    }

    fn installed_copy(&self) -> Option<&Path> {
        self.installed.as_ref().map(|(dir, _)| dir.as_path())
    }

    async fn start(
        self: Arc<Self>,
        _: &Upstream,
        work: &Path,
        _: Option<&str>,
    ) -> Result<Started<Driven>, String> {
        let mut spec = self.driver.clone().unwrap_or_else(|| self.spec(work));
        if self.driver.is_some() {
            spec.log = work.join("driver.log");
        }
        // The MCP routes' tools come from tooltape's MCP server, one for the run.
        let any_mcp = self.profile.profile.routes.iter().any(|r| r.get_ref().mcp);
        let mcp = match any_mcp {
            true => Some(Arc::new(crate::mcp::McpServer::start().await.map_err(
                |e| format!("the MCP server of the profile's MCP routes did not start: {e}"),
            )?)),
            false => None,
        };
        Ok(Started::way(Driven::new(
            Arc::clone(&self.profile),
            spec,
            mcp,
        )))
    }

    /// The trial's first line of the driver protocol, piped into the profile's driver (its
    /// `base_url` is the upstream that answered), or the trial run again by tooltape.
    fn replay_command(&self, t: &TrialResult) -> String {
        let line = serde_json::to_string(&t.client_request).unwrap_or_default();
        let argv = self.spec(Path::new(".")).argv;
        format!(
            "# the driver protocol's trial (docs/clients/README.md); base_url answers as shown below\nprintf '%s\\n' '{}' | {}\n# or, with tooltape:\ntooltape client {} '{}'",
            line.replace('\'', "'\\''"),
            argv.join(" "),
            self.profile.name,
            t.id.key()
        )
    }
}
