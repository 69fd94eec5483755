//! `--versions` and `--bisect` on `tooltape gateway NAME` and `tooltape client NAME`: the suite
//! run on several releases of the profile's pinned package (each installed into its own cache
//! folder) and printed as one table of root causes × releases, or the binary search over the
//! releases the registry lists between two for the first where a cause appears or disappears.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::SystemTime;

use super::cases::Corpus;
use super::exit::{CliError, CommandResult};
use super::suite::{Format, SuiteArgs, trials};
use tooltape::engine::{self, Run, RunOptions, System};
use tooltape::runtime;
use tooltape::system::{self, Install, Package, Presence};

/// What a kind of system gives the release commands: the system at a release, and the package
/// its profile pins (for the registry's list of releases).
pub(super) struct Releases<'a, S> {
    pub at: &'a dyn Fn(&str) -> Result<Arc<S>, String>,
    pub package: Result<Package, String>,
}

/// `--versions` of a profile that pins its own install (a gateway's, a server's): each release
/// loaded anew by `load` and retargeted; `url` (a running system) cannot be one.
pub(super) fn run_pinned<P>(
    corpus: Corpus<'_>,
    a: &SuiteArgs,
    (options, url): (RunOptions, bool),
    load: &dyn Fn() -> Result<tooltape::engine::Loaded<P>, String>,
) -> CommandResult
where
    P: tooltape::system::Pinned + tooltape::engine::ProfileTable,
    tooltape::engine::Loaded<P>: System,
{
    if url {
        return Err(CliError::Error(
            "--versions installs each release: it cannot use a running system (--url)".into(),
        ));
    }
    let profile = load()?;
    let at = |release: &str| -> Result<Arc<tooltape::engine::Loaded<P>>, String> {
        let mut p = load()?;
        p.at_release(release)?;
        Ok(Arc::new(p))
    };
    let q = &profile.profile;
    let releases = Releases {
        at: &at,
        package: package(q.version(), q.install()),
    };
    run(corpus, a, &a.options(options), &releases)
}

/// The package `install` pins at `version`, for `--bisect`'s list of releases.
pub(super) fn package(version: Option<&str>, install: Option<&Install>) -> Result<Package, String> {
    match (version, install) {
        (Some(v), Some(i)) => system::pinned_package(i, v),
        _ => {
            Err("the profile pins no version it installs: no registry to list releases from".into())
        }
    }
}

/// Runs `--versions` (and `--bisect`): 0 when every release ran, 2 when one could not be
/// installed or run (the table is still printed) or the arguments do not read.
pub(super) fn run<S: System>(
    corpus: Corpus<'_>,
    a: &SuiteArgs,
    options: &RunOptions,
    releases: &Releases<'_, S>,
) -> CommandResult {
    let Some(versions) = a.versions.as_deref() else {
        return Err(CliError::Reported); // only called with --versions
    };
    if let Some(cause) = &a.bisect {
        return bisect(corpus, a, options, releases, (cause, versions));
    }
    let list: Vec<String> = versions
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect();
    if list.is_empty() || versions.contains("..") {
        return Err(CliError::Error(
            "--versions: name releases as A,B,C (A..B is for --bisect)".into(),
        ));
    }
    let mut runs = Vec::new();
    let mut kind_name = None;
    for release in &list {
        let ran = one(corpus, a, options, releases, (release, None));
        if let Ok((kind, name, _)) = &ran {
            kind_name = Some((*kind, name.clone()));
        }
        runs.push((release.clone(), ran.map(|(_, _, run)| run)));
    }
    let Some((kind, name)) = kind_name else {
        for (v, r) in &runs {
            if let Err(e) = r {
                eprintln!("{v}: {e}");
            }
        }
        return Err(CliError::Error("no release could be run".into()));
    };
    let table = system::release_table(kind, &name, &runs);
    match a.format {
        Format::Terminal => out!("{}", table.terminal()),
        Format::Md => out!("{}", table.markdown()),
        Format::Html => outln!("{}", table.html()),
        Format::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&table.json()).unwrap_or_default()
        ),
        Format::Junit => out!(
            "{}",
            table.junit(&tooltape::clock::utc_iso(SystemTime::now()))
        ),
    }
    if runs.iter().any(|(_, r)| r.is_err()) {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

/// One release's run: the system's kind and name, and its run; restricted to `only` trial keys
/// when given.
fn one<S: System>(
    corpus: Corpus<'_>,
    a: &SuiteArgs,
    options: &RunOptions,
    releases: &Releases<'_, S>,
    (release, only): (&str, Option<&BTreeSet<String>>),
) -> Result<(engine::SystemKind, String, Run), String> {
    let system = (releases.at)(release)?;
    let (mut trials, unloadable) = trials(corpus, &*system, a.filter.as_deref())
        .ok_or_else(|| "no trial matches".to_string())?;
    if unloadable > 0 {
        return Err(format!("{unloadable} case file(s) could not be loaded"));
    }
    if let Some(keys) = only {
        trials.retain(|t| keys.contains(&t.key()));
    }
    eprintln!("{} {release}: {} trials", system.name(), trials.len());
    let note = |m: &str| eprintln!("{m}");
    let run = runtime()
        .block_on(engine::run(system.clone(), trials, options, &note))
        .map_err(|e| e.message)?;
    eprintln!(
        "{} {release}: {}",
        system.name(),
        engine::summary(&run.results)
    );
    Ok((system.kind(), system.name().to_string(), run))
}

/// `--bisect CAUSE --versions A..B`.
fn bisect<S: System>(
    corpus: Corpus<'_>,
    a: &SuiteArgs,
    options: &RunOptions,
    releases: &Releases<'_, S>,
    (cause, versions): (&str, &str),
) -> CommandResult {
    let Some((from, to)) = versions.split_once("..") else {
        return Err(CliError::Error(
            "--bisect: give --versions A..B (the first and last release to search)".into(),
        ));
    };
    let listed = match &releases.package {
        Ok(p) => system::registry_releases(p),
        Err(e) => Err(e.clone()),
    };
    let between = listed.and_then(|l| system::between(&l, from.trim(), to.trim()));
    let between = between.map_err(|e| format!("--bisect: {e}"))?;
    eprintln!(
        "--bisect {cause}: {} release(s) from {} to {}",
        between.len(),
        between.first().map_or("", String::as_str),
        between.last().map_or("", String::as_str)
    );
    // The cause's trials, once a run has it: later releases run only those.
    let mut keys: Option<BTreeSet<String>> = None;
    let mut probe = |release: &str| -> Presence {
        match one(corpus, a, options, releases, (release, keys.as_ref())) {
            Ok((_, _, run)) => {
                if keys.is_none()
                    && let Some(c) = run.causes.iter().find(|c| c.id == cause)
                {
                    keys = Some(c.trials.iter().cloned().collect());
                }
                let trials = keys
                    .clone()
                    .unwrap_or_else(|| run.results.iter().map(|r| r.id.key()).collect());
                system::presence(&run, cause, &trials)
            }
            Err(e) => {
                eprintln!("{release}: {e}");
                Presence::NotApplicable
            }
        }
    };
    let found =
        system::bisect(cause, &between, &mut probe).map_err(|e| format!("--bisect: {e}"))?;
    if a.format == Format::Json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&found).unwrap_or_default()
        );
    } else {
        out!("{}", found.terminal());
    }
    Ok(())
}
