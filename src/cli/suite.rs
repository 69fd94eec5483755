//! What `tooltape gateway NAME` and `tooltape client NAME` share, on the engine's one road: the
//! arguments, the discovered trials, the run (`engine::run`), the five output formats with one
//! JSON document, `--findings` and `--report-bug`, the Markdown document, and the exit status;
//! and `--list`: every profile a run can name, the project's own (`gateways/`, `clients/` under
//! --root) and the built-in ones, with its version and where it comes from.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use clap::{Args, ValueEnum};

use super::cases::Corpus;
use super::exit::{CliError, CommandResult};
use tooltape::engine::{
    self, Loaded, ProfileTable, RoutedTrial, Run, RunOptions, RunStatus, System, TrialResult,
};
use tooltape::report::suite;
use tooltape::system::builtin_names;
use tooltape::{Case, runtime};

/// How a run's results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Terminal,
    Md,
    Html,
    /// One JSON document: `{kind, target, version, summary, causes, trials}`.
    Json,
    /// JUnit XML: one test case per trial; known failures skipped with their reason.
    Junit,
}

/// What `tooltape gateway` and `tooltape client` take alike: the profile, `--list`, and the
/// suite's arguments. Each names its folder in the profile's help ([`profile_help`]).
#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The profile (see [`profile_help`]).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// List the profiles a run can name (the project's and the built-in ones) with their versions.
    #[arg(long, conflicts_with = "name")]
    pub list: bool,
    #[command(flatten)]
    pub suite: SuiteArgs,
}

impl ProfileArgs {
    /// The profile named, or the error `missing` when there is none (`--list` asked instead).
    pub fn named(&self, missing: &str) -> Result<&str, CliError> {
        self.name
            .as_deref()
            .ok_or_else(|| CliError::Error(missing.into()))
    }
}

/// Gives [`ProfileArgs::name`] its help for the profiles of `folder` (`gateways`, `clients`), in
/// place: `Command::mut_arg` would move it after the filter, and so swap the two positionals.
pub fn profile_help(folder: &'static str) -> impl FnMut(clap::Arg) -> clap::Arg {
    move |arg| match arg.get_id().as_str() {
        "name" => arg.help(format!(
            "The profile: `{folder}/NAME.toml` under --root, else the built-in one of that name \
             (or a path to a `.toml` file)"
        )),
        _ => arg,
    }
}

/// The arguments every suite takes.
#[derive(Args, Clone, Debug)]
pub struct SuiteArgs {
    /// Only trials whose `case::route::choice::mode` contains this.
    pub filter: Option<String>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: Format,
    /// Also write the Markdown document here (`docs/gateways/NAME.md`, `docs/clients/NAME.md`).
    #[arg(long)]
    pub md_out: Option<PathBuf>,
    /// Print the root causes (failures grouped by side, kind and normalized finding, each with
    /// its routes, trials and severity) instead of the matrix.
    #[arg(long, conflicts_with = "report_bug")]
    pub findings: bool,
    /// Print root cause ID (from `--findings`) as a ready-to-file Markdown issue: its reproducer,
    /// what went upstream, what came back, the expected behaviour.
    #[arg(long, value_name = "ID")]
    pub report_bug: Option<String>,
    /// Keep the run's work folder (logs, configs) in the temp folder even when the run passed
    /// (a run that did not pass always keeps it, and names it).
    #[arg(long)]
    pub keep: bool,
    /// Trials in flight at once, instead of the profile's `concurrency`.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,
    /// Run the suite on each of these releases of the profile's pinned package (`A,B,C`), each
    /// installed into its own cache folder, and print one table of root causes × releases
    /// (present, absent, not applicable) in `--format`. With `--bisect`: `A..B`.
    #[arg(long, value_name = "A,B,C", conflicts_with_all = ["findings", "report_bug", "md_out"])]
    pub versions: Option<String>,
    /// With `--versions A..B`: the first release between A and B (as the registry lists them)
    /// where root cause CAUSE (an id of `--findings`) appears or disappears, by binary search.
    #[arg(long, value_name = "CAUSE", requires = "versions")]
    pub bisect: Option<String>,
}

impl SuiteArgs {
    /// `options` with this command's `--keep` and `--concurrency`.
    pub(super) fn options(&self, options: RunOptions) -> RunOptions {
        RunOptions {
            keep: self.keep,
            concurrency: self.concurrency.map(usize::from).or(options.concurrency),
            ..options
        }
    }
}

/// The discovered cases (each once), and how many case files could not be loaded (reported
/// here; a suite with any is not a complete run, so the command cannot succeed).
pub(super) fn cases(corpus: Corpus<'_>) -> (Vec<Arc<Case>>, usize) {
    let discovery = corpus.discover();
    for (name, e) in &discovery.broken {
        eprintln!("case {name}: {e}");
    }
    if discovery.incomplete {
        eprintln!("cases/ could not be read in full: the trials that exist are unknown");
    }
    let unloadable = discovery.broken.len() + usize::from(discovery.incomplete);
    (engine::cases_of(&discovery), unloadable)
}

/// The system's trials under `filter`, and the unloadable case files; `None` (said why) when
/// no trial matches.
pub(super) fn trials<S: System>(
    corpus: Corpus<'_>,
    system: &S,
    filter: Option<&str>,
) -> Option<(Vec<RoutedTrial>, usize)> {
    let (cases, unloadable) = cases(corpus);
    let cases: Vec<_> = cases.into_iter().filter(|c| system.takes(c)).collect();
    let trials = engine::trials(&cases, &system.routes(), filter);
    if trials.is_empty() {
        eprintln!(
            "no {} trial matches{}",
            system.kind().slug(),
            filter.map(|f| format!(" `{f}`")).unwrap_or_default()
        );
        return None;
    }
    Some((trials, unloadable))
}

/// The keys of the suite's trials a filtered run leaves out.
fn left_out<S: System>(corpus: Corpus<'_>, system: &S, ran: &[RoutedTrial]) -> Vec<String> {
    let mut cases = engine::cases_of(&corpus.discover());
    cases.retain(|c| system.takes(c));
    let ran: std::collections::HashSet<String> = ran.iter().map(RoutedTrial::key).collect();
    (engine::trials(&cases, &system.routes(), None).iter())
        .map(RoutedTrial::key)
        .filter(|k| !ran.contains(k))
        .collect()
}

/// What a kind of system adds to the shared run: its Markdown document, and what to do with
/// the results before the exit status (gateway snapshots).
pub(super) struct Extras<'a, S> {
    pub document: &'a dyn Fn(&S, &Run) -> String,
    pub after: &'a dyn Fn(&Run) -> Result<(), String>,
    /// Fields the JSON document carries beside the engine's (a server's `scores`).
    pub json: &'a dyn Fn(&Run) -> Vec<(&'static str, serde_json::Value)>,
}

/// Runs the suite of `system` and prints it as `a` asks: 0 when every result is expected, 1
/// otherwise (or when the suite did not fully run), 2 when it could not be set up or every
/// trial broke.
pub(super) fn run<S: System>(
    corpus: Corpus<'_>,
    system: &Arc<S>,
    a: &SuiteArgs,
    options: RunOptions,
    extras: &Extras<'_, S>,
) -> CommandResult {
    let Some((trials, unloadable)) = trials(corpus, &**system, a.filter.as_deref()) else {
        return Err(CliError::Failed);
    };
    let t0 = Instant::now();
    let mut options = a.options(options);
    if a.filter.is_some() {
        options.left_out = left_out(corpus, &**system, &trials);
    }
    let note = |m: &str| eprintln!("{m}");
    let ran = runtime().block_on(engine::run(system.clone(), trials, &options, &note));
    let ran = ran.map_err(|e| {
        let mut m = format!("{} {}: {}", system.kind().slug(), system.name(), e.message);
        if let Some(w) = e.work {
            m.push_str(&format!("\nits logs are in {}", w.display()));
        }
        CliError::Error(m)
    })?;
    if let Some(id) = &a.report_bug {
        return report_bug(&**system, &ran, id);
    }
    if a.findings {
        out!("{}", suite::causes_terminal(&ran.causes, ran.results.len()));
    } else {
        print(&**system, &ran, a.format, extras);
    }
    let status = engine::status(
        &ran.results,
        ran.stale.len(),
        ran.exited.is_some(),
        unloadable > 0,
    );
    finish((&**system, &ran), a, (status, unloadable), extras, t0)
}

/// After the output: the document and extras (unless the run broke), what went wrong, the
/// totals line, the exit code.
fn finish<S: System>(
    (system, ran): (&S, &Run),
    a: &SuiteArgs,
    (status, unloadable): (RunStatus, usize),
    extras: &Extras<'_, S>,
    t0: Instant,
) -> CommandResult {
    if let (Some(exited), Some(t)) = (&ran.exited, &ran.tail) {
        eprintln!(
            "{} exited during the run ({exited}): the trials after that could not run. Last lines of its log:\n{t}",
            system.name()
        );
    }
    let whole = status != RunStatus::Broken && ran.exited.is_none();
    if let Some(path) = &a.md_out {
        if whole {
            std::fs::write(path, (extras.document)(system, ran))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        } else {
            eprintln!(
                "{} not rewritten: the run did not go through",
                path.display()
            );
        }
    }
    if whole {
        (extras.after)(ran)?;
    }
    for m in &ran.stale {
        eprintln!("{m}");
    }
    eprintln!(
        "{} trials in {:.1}s{}",
        ran.results.len(),
        t0.elapsed().as_secs_f64(),
        ran.peak_memory_kib
            .map(|k| format!(", peak memory {:.0} MiB", k as f64 / 1024.0))
            .unwrap_or_default()
    );
    if status != RunStatus::Passed && ran.work.exists() {
        eprintln!(
            "the run's work folder (logs, config) is kept: {}",
            ran.work.display()
        );
    } else if a.keep {
        eprintln!(
            "the run's work folder is kept (--keep): {}",
            ran.work.display()
        );
    }
    if unloadable > 0 {
        eprintln!(
            "{unloadable} case file(s) could not be loaded (above): the suite did not fully run"
        );
    }
    match status {
        RunStatus::Passed => Ok(()),
        RunStatus::Failed => Err(CliError::Failed),
        RunStatus::Broken => {
            if let Some(t) = &ran.tail {
                eprintln!("every trial broke; last lines of its log:\n{t}");
            }
            Err(CliError::Error(format!(
                "every trial broke: the {} could not be used (is it running, at the URL, with the profile's headers? can its driver start?)",
                system.kind().slug()
            )))
        }
    }
}

/// `--report-bug ID`: the cause as a ready-to-file issue.
fn report_bug<S: System>(system: &S, ran: &Run, id: &str) -> CommandResult {
    let Some(c) = ran.causes.iter().find(|c| c.id == id) else {
        return Err(CliError::Error(format!(
            "{kind} {name}: no root cause `{id}` in this run; `tooltape {kind} {name} --findings` lists them",
            kind = system.kind().slug(),
            name = system.name()
        )));
    };
    out!("{}", suite::report_bug(system, c));
    Ok(())
}

/// The results in `format` on stdout; the summary line on stdout (terminal) or stderr.
fn print<S: System>(system: &S, ran: &Run, format: Format, extras: &Extras<'_, S>) {
    let results: &[TrialResult] = &ran.results;
    match format {
        Format::Terminal => out!("{}", suite::terminal(results)),
        Format::Md => out!("{}", (extras.document)(system, ran)),
        Format::Html => outln!("{}", suite::html(system.name(), results)),
        Format::Json => {
            let mut doc = engine::document(system, results, &ran.causes);
            if let Some(o) = doc.as_object_mut() {
                o.extend(
                    (extras.json)(ran)
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v)),
                );
            }
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Format::Junit => out!(
            "{}",
            suite::junit(
                system.kind().slug(),
                system.name(),
                &tooltape::clock::utc_iso(SystemTime::now()),
                results
            )
        ),
    }
    if format == Format::Terminal {
        outln!("{}", engine::summary(results));
    } else {
        eprintln!("{}", engine::summary(results));
    }
}

/// Prints one line per profile of `folder`: name, version, source; 2 when one cannot be read.
pub fn list<P: ProfileTable, E: std::fmt::Display>(
    root: &Path,
    folder: &str,
    load: impl Fn(&Path, &str) -> Result<Loaded<P>, E>,
) -> CommandResult {
    let mut names: std::collections::BTreeSet<String> = builtin_names(folder)
        .into_iter()
        .map(str::to_string)
        .collect();
    if let Ok(rd) = std::fs::read_dir(root.join(folder)) {
        for e in rd.filter_map(Result::ok) {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = file.strip_suffix(".toml") {
                names.insert(stem.to_string());
            }
        }
    }
    let mut broken = false;
    for name in &names {
        match load(root, name) {
            Ok(p) => {
                let from = match &p.shipped {
                    Some(_) => "built in".to_string(),
                    None if builtin_names(folder).contains(&name.as_str()) => {
                        format!("{} (replaces the built-in one)", p.path.display())
                    }
                    None => p.path.display().to_string(),
                };
                let v = p.profile.version().unwrap_or("-");
                outln!("{name:<20} {v:<12} {from}");
            }
            Err(e) => {
                eprintln!("{e}");
                broken = true;
            }
        }
    }
    if broken {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}
