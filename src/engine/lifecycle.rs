//! The one road from a profile to results, for gateways and libraries alike: install, start,
//! sample the started process's memory, run the trials, stop, group the failures into root
//! causes, and clean up the run's work folder.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::document::{RunStatus, status};
use super::known;
use super::reproduce::{RootCause, causes};
use super::result::TrialResult;
use super::run::run_all;
use super::system::System;
use super::trial::{RoutedTrial, SystemKind};
use super::upstream::Upstream;
use crate::system::memory::PeakSampler;

/// How a run is set up.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// A system that is already running (gateways): only the profile's routes and headers are used.
    pub url: Option<String>,
    /// Where the recording upstream listens (default: any free port on 127.0.0.1).
    pub upstream_listen: Option<SocketAddr>,
    /// Keep the run's work folder (logs, configs) even when the run passed.
    pub keep: bool,
    /// Where the run's work folder goes (default: the system's temp folder).
    pub work_in: Option<PathBuf>,
    /// Trials in flight at once, instead of the profile's (the same for every system of a
    /// side-by-side comparison).
    pub concurrency: Option<usize>,
    /// The keys of the suite's trials this run leaves out (a filtered run's): a known failure
    /// whose pattern covers one of them is not judged stale here, since the trial that fails
    /// with its cause may be among them.
    pub left_out: Vec<String>,
}

/// What a run produced.
pub struct Run {
    pub results: Vec<TrialResult>,
    pub causes: Vec<RootCause>,
    /// Known failures that name a cause no trial failed with (`path:line:col: …`).
    pub stale: Vec<String>,
    /// The last lines of the started process's log.
    pub tail: Option<String>,
    /// The started process's exit status when it died during the trials.
    pub exited: Option<String>,
    pub peak_memory_kib: Option<u64>,
    pub started_in: Option<Duration>,
    /// The trials' wall time.
    pub wall: Duration,
    /// The run's work folder (logs, configs): removed when the run passed, kept (and named
    /// here) when it did not or `--keep` asked for it.
    pub work: PathBuf,
}

/// Why a run could not be made: the message, and the work folder kept for its logs.
#[derive(Debug)]
pub struct SetUpError {
    pub message: String,
    pub work: Option<PathBuf>,
}

impl From<String> for SetUpError {
    fn from(message: String) -> SetUpError {
        SetUpError {
            message,
            work: None,
        }
    }
}

/// The run's work folder in `under` (default: the system's temp folder):
/// `tooltape-KIND-NAME-PID`.
fn work_folder(under: Option<&Path>, kind: SystemKind, name: &str) -> Result<PathBuf, String> {
    let under = under.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let work = under.join(format!(
        "tooltape-{}-{name}-{}",
        kind.slug(),
        std::process::id()
    ));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    Ok(work)
}

/// Installs, starts, runs `trials` while sampling the started process's memory, stops; then
/// root causes and stale known failures. `note` hears what a person wants to see on the way
/// (installed, ready at, listening on). The work folder is removed when every result is
/// expected, unless `options.keep`.
pub async fn run<S: System>(
    system: Arc<S>,
    trials: Vec<RoutedTrial>,
    options: &RunOptions,
    note: &(dyn Fn(&str) + Sync),
) -> Result<Run, SetUpError> {
    let upstream = Arc::new(upstream(options.upstream_listen).await?);
    if options.upstream_listen.is_some() {
        note(&format!(
            "recording upstream listening on {}",
            upstream.base_url()
        ));
    }
    run_on(system, trials, &upstream, options, note).await
}

/// [`run`] against a recording upstream the caller started (a system whose configuration
/// must name the upstream's address before it starts).
pub async fn run_on<S: System>(
    system: Arc<S>,
    trials: Vec<RoutedTrial>,
    upstream: &Arc<Upstream>,
    options: &RunOptions,
    note: &(dyn Fn(&str) + Sync),
) -> Result<Run, SetUpError> {
    if options.url.is_none()
        && let Some(dir) = system.install(&|n| note(n))?
    {
        note(&format!(
            "installed {} into {}",
            system.name(),
            dir.display()
        ));
    }
    let work = work_folder(options.work_in.as_deref(), system.kind(), system.name())?;
    let kept = |message: String| SetUpError {
        message,
        work: Some(work.clone()),
    };
    let started = Arc::clone(&system)
        .start(upstream, &work, options.url.as_deref())
        .await
        .map_err(kept)?;
    if let Some(n) = &started.note {
        note(n);
    }
    let mut process = started.process;
    let sampler =
        (process.as_ref()).map(|p| PeakSampler::start(p.pgid(), Duration::from_millis(200)));
    let t0 = Instant::now();
    let results = run_all(
        Arc::new(started.way),
        &*system,
        options.concurrency,
        upstream,
        trials,
    )
    .await;
    let wall = t0.elapsed();
    let peak_memory_kib = sampler.and_then(PeakSampler::finish);
    let tail = process.as_ref().map(|p| p.log_tail(20));
    let exited = process.as_mut().and_then(|p| p.exited());
    let started_in = process.as_ref().map(|p| p.started_in());
    if let Some(mut p) = process {
        p.stop();
    }
    let causes = causes(&*system, &results);
    let stale = known::stale_causes(&*system, &results, &options.left_out);
    let passed = status(&results, stale.len(), exited.is_some(), false) == RunStatus::Passed;
    if passed && !options.keep {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(Run {
        results,
        causes,
        stale,
        tail,
        exited,
        peak_memory_kib,
        started_in,
        wall,
        work,
    })
}

/// The recording upstream, on `listen` or any free loopback port.
async fn upstream(listen: Option<SocketAddr>) -> Result<Upstream, String> {
    match listen {
        None => Upstream::start()
            .await
            .map_err(|e| format!("cannot start the upstream: {e}")),
        Some(addr) => Upstream::start_on(addr).await.map_err(|e| {
            format!(
                "cannot listen on {addr} for the recording upstream: {e} (stop what holds the port, or give the gateway's config another address and pass it to --upstream-listen)"
            )
        }),
    }
}
