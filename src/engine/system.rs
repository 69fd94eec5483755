//! A system under test as the engine drives it — a gateway over HTTP or a library through its
//! driver: what its profile says (name, routes, known failures), how it is installed and
//! started, and the process a run started for it.

use std::future::Future;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

use super::profile::{Loaded, ProfileKnownFailure};
use super::result::TrialResult;
use super::trial::{Route, SystemKind};
use super::upstream::Upstream;
use super::way::Way;
use crate::system::install::{Install, install_pinned};
use crate::system::shipped::{install_cache, write_out as write_shipped};

/// What every profile table (a gateway's, a library's) says of its system: what `System`'s
/// default methods read.
pub trait ProfileTable {
    /// The install folder's prefix in the cache before `NAME-VERSION` (`client-` for libraries).
    const CACHE_PREFIX: &'static str;
    fn description(&self) -> &str;
    /// The pinned release, when the profile names one.
    fn version(&self) -> Option<&str>;
    /// Trials in flight at once.
    fn concurrency(&self) -> usize;
    /// The known failures, in file order.
    fn known_failures(&self) -> &[Spanned<ProfileKnownFailure>];
    fn install(&self) -> Option<&Install>;
}

/// `ProfileTable` for a profile table with the shared fields (`description`, `version`,
/// `concurrency`, `known_failure`, `install`), its install folders prefixed by `$prefix`.
macro_rules! profile_table {
    ($table:ty, $prefix:literal) => {
        impl $crate::engine::system::ProfileTable for $table {
            const CACHE_PREFIX: &'static str = $prefix;
            fn description(&self) -> &str {
                &self.description
            }
            fn version(&self) -> Option<&str> {
                self.version.as_deref()
            }
            fn concurrency(&self) -> usize {
                self.concurrency
            }
            fn known_failures(
                &self,
            ) -> &[toml::Spanned<$crate::engine::profile::ProfileKnownFailure>] {
                &self.known_failure
            }
            fn install(&self) -> Option<&$crate::system::install::Install> {
                self.install.as_ref()
            }
        }
    };
}
pub(crate) use profile_table;

impl<P: ProfileTable> Loaded<P> {
    /// The install folder: `PREFIX` `NAME-VERSION` in the install cache
    /// (`$XDG_CACHE_HOME/tooltape/gateways`, else `~/.cache`).
    pub fn install_dir(&self) -> PathBuf {
        let version = self.profile.version().unwrap_or("unversioned");
        install_cache().join(format!("{}{}-{version}", P::CACHE_PREFIX, self.name))
    }
}

/// A system under test, as its profile describes it. What the profile says is read from it by
/// default; a system overrides only what it knows better (a library run on a development copy
/// names that copy as its version and installs nothing).
pub trait System: Send + Sync + Sized + 'static {
    /// How a trial reaches it and how its answer comes back.
    type Way: Way;
    /// Its profile's table.
    type Table: ProfileTable;
    fn kind(&self) -> SystemKind;
    /// Its loaded profile.
    fn profile(&self) -> &Loaded<Self::Table>;
    fn routes(&self) -> Vec<Route>;
    /// Makes the system ready for a run against `upstream`, with `work` as its scratch folder;
    /// `url` names one that is already running (gateways only).
    fn start(
        self: Arc<Self>,
        upstream: &Upstream,
        work: &Path,
        url: Option<&str>,
    ) -> impl Future<Output = Result<Started<Self::Way>, String>> + Send;
    /// A command that sends a trial's first request again without tooltape, for reproducers.
    fn replay_command(&self, trial: &TrialResult) -> String;

    /// Whether the system runs `case` (a model server does not run a case whose scenario only
    /// the simulator's scripted model can play: `server::scripted`).
    fn takes(&self, _case: &crate::case::Case) -> bool {
        true
    }

    /// The profile's name (its file stem).
    fn name(&self) -> &str {
        &self.profile().name
    }
    fn description(&self) -> &str {
        self.profile().profile.description()
    }
    /// The release under test: the pinned one, when the profile names one.
    fn version(&self) -> Option<&str> {
        self.profile().profile.version()
    }
    /// Trials in flight at once.
    fn concurrency(&self) -> usize {
        self.profile().profile.concurrency()
    }
    /// The profile's known failures, in file order.
    fn known(&self) -> &[Spanned<ProfileKnownFailure>] {
        self.profile().profile.known_failures()
    }
    /// `path:line:col` of a span of the profile.
    fn locate(&self, span: Range<usize>) -> String {
        self.profile().locate(span)
    }
    /// A development copy installed by the caller instead of the pinned release.
    fn installed_copy(&self) -> Option<&Path> {
        None
    }
    /// Installs the pinned release unless it is installed (or a development copy is used):
    /// where it installed, if it did. A built-in profile's drivers are written out first.
    /// `note` hears what a person waits for (an install under way, another run's install).
    fn install(&self, note: &dyn Fn(&str)) -> Result<Option<PathBuf>, String> {
        install_release(self, note)
    }
}

/// [`System::install`]'s default: the pinned release into its cache folder, unless installed
/// there already or a development copy is used; a built-in profile's drivers written out first.
pub fn install_release<S: System>(
    system: &S,
    note: &dyn Fn(&str),
) -> Result<Option<PathBuf>, String> {
    let p = system.profile();
    if p.source.contains("{{shipped}}") {
        write_shipped()?;
    }
    match system.installed_copy() {
        Some(dir) if !dir.is_dir() => {
            Err(format!("--install-dir {}: no such folder", dir.display()))
        }
        Some(_) => Ok(None),
        None => install_pinned(&p.name, p.install_dir(), p.profile.install(), note),
    }
}

/// A process a run started (a gateway): sampled for memory, its log shown on failure, stopped
/// at the end of the run.
pub trait Process: Send {
    /// Its process group.
    fn pgid(&self) -> u32;
    /// The last `lines` lines of its log.
    fn log_tail(&self, lines: usize) -> String;
    /// Its exit status, when it exited on its own.
    fn exited(&mut self) -> Option<String>;
    /// How long it took to become ready.
    fn started_in(&self) -> Duration;
    /// Stops its process group.
    fn stop(&mut self);
}

/// A started system: the way trials reach it, and the process the run started for it.
pub struct Started<W> {
    pub way: W,
    pub process: Option<Box<dyn Process>>,
    /// What a person wants to see once it is ready (where, how fast, its log).
    pub note: Option<String>,
}

impl<W> Started<W> {
    /// A way with no process of the run's behind it (a system already running, a driver the
    /// way starts itself), and nothing to say.
    pub fn way(way: W) -> Started<W> {
        Started {
            way,
            process: None,
            note: None,
        }
    }
}
