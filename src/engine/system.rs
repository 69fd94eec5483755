//! A system under test as the engine drives it — a gateway over HTTP or a library through its
//! driver: what its profile says (name, routes, known failures), how it is installed and
//! started, and the process a run started for it.

use std::future::Future;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

use super::profile::ProfileKnownFailure;
use super::result::TrialResult;
use super::trial::{Route, SystemKind};
use super::upstream::Upstream;
use super::way::Way;

/// A system under test, as its profile describes it.
pub trait System: Send + Sync + Sized + 'static {
    /// How a trial reaches it and how its answer comes back.
    type Way: Way;
    fn kind(&self) -> SystemKind;
    /// The profile's name (its file stem).
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// The pinned release, when the profile names one.
    fn version(&self) -> Option<&str>;
    fn routes(&self) -> Vec<Route>;
    /// Trials in flight at once.
    fn concurrency(&self) -> usize;
    /// The profile's known failures, in file order.
    fn known(&self) -> &[Spanned<ProfileKnownFailure>];
    /// `path:line:col` of a span of the profile.
    fn locate(&self, span: Range<usize>) -> String;
    /// Installs the pinned release unless it is installed: where it installed, if it did.
    fn install(&self) -> Result<Option<PathBuf>, String>;
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
