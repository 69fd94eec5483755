//! The `tooltape drift` command: arguments, where the second cassette set comes from (a folder,
//! or a fresh live recording into a temporary folder), and writing the rendered report.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::cases::Corpus;
use super::exit::{self, CliError, CommandResult};
use super::record;
use tooltape::{Provider, Trial, record::endpoints};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DriftFormat {
    Terminal,
    Md,
    Json,
}

#[derive(Args, Debug)]
pub struct DriftArgs {
    /// Only trials whose name contains this.
    pub filter: Option<String>,
    /// Compare with this cassette folder (laid out like `cassettes/`, or a project root holding
    /// one) instead of a fresh recording. Works offline.
    #[arg(long)]
    pub against: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: DriftFormat,
    /// Write the report here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Fresh recording: requests in flight at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
}

/// Runs `tooltape drift`. Exit 1 on breaking drift or a broken suite, 0 otherwise, 2 on usage errors.
pub fn run(corpus: Corpus<'_>, a: &DriftArgs) -> CommandResult {
    let root = corpus.root;
    let discovery = corpus.discover();
    let problems = tooltape::harness::suite_problems(root, &discovery);
    let broken = tooltape::harness::broken_file_count(&discovery, &problems);
    let committed = root.join("cassettes");
    let fetched = match &a.against {
        Some(dir) => cassette_dir(dir).map(|d| (d, Vec::new())),
        None => record_fresh(root, &discovery.trials, a),
    };
    let (against, skipped) = fetched?;
    let mut report =
        tooltape::drift::compare_dirs(&discovery.trials, &committed, &against, a.filter.as_deref());
    // Providers without a key were not recorded afresh: their cassettes are not "gone".
    report
        .only_committed
        .retain(|c| !skipped.iter().any(|p| c.starts_with(&format!("{p}/"))));
    let text = match a.format {
        DriftFormat::Terminal => tooltape::drift::render::terminal(&report),
        DriftFormat::Md => tooltape::drift::render::markdown(&report),
        DriftFormat::Json => tooltape::drift::render::json(&report),
    };
    write_out(a.out.as_deref(), &text)?;
    if !problems.is_empty() {
        eprintln!("\nbroken in the suite:");
        for p in &problems {
            eprintln!("{p}");
        }
        return Err(CliError::FailedWith(format!(
            "{broken} broken file{}: the drift report does not cover them",
            if broken == 1 { "" } else { "s" }
        )));
    }
    exit::failed_if(report.has_breaking())
}

/// Writes to `out`, or prints to standard output.
pub fn write_out(out: Option<&Path>, text: &str) -> Result<(), String> {
    match out {
        None => {
            out!("{text}");
            Ok(())
        }
        Some(p) => tooltape::cassette::write_atomic(p, text)
            .map_err(|e| format!("{}: cannot write: {e}", p.display())),
    }
}

/// The cassette folder of `dir`: `dir/cassettes` when it is a project root, else `dir` itself.
fn cassette_dir(dir: &Path) -> Result<PathBuf, String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: no such folder (--against takes a cassette folder or a project root)",
            dir.display()
        ));
    }
    let inner = dir.join("cassettes");
    Ok(if inner.is_dir() {
        inner
    } else {
        dir.to_path_buf()
    })
}

/// What to set to record afresh, per key variable: `OPENAI_API_KEY (openai-chat, ...)`.
pub fn missing_keys_help(providers: &[Provider]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for p in providers {
        let vars = p.key_vars().join(" or ");
        match lines.iter_mut().find(|l| l.starts_with(&vars)) {
            Some(l) => {
                l.pop();
                l.push_str(&format!(", {p})"));
            }
            None => lines.push(format!("{vars} ({p})")),
        }
    }
    format!(
        "drift without --against records every selected trial live, and no API key is set.\n  set one of:\n    {}\n  or compare offline: tooltape drift --against DIR",
        lines.join("\n    ")
    )
}

/// Records the selected trials live into a temporary folder; returns its cassette folder and
/// the providers skipped for want of a key.
fn record_fresh(
    root: &Path,
    trials: &[Trial],
    a: &DriftArgs,
) -> Result<(PathBuf, Vec<String>), String> {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        return Err("drift without --against records live, which is refused under CI (CI is set): pass --against DIR".into());
    }
    let chosen: Vec<Trial> = trials
        .iter()
        .filter(|t| a.filter.as_deref().is_none_or(|f| t.name().contains(f)))
        .cloned()
        .collect();
    if chosen.is_empty() {
        return Err(format!(
            "no trials match `{}`",
            a.filter.as_deref().unwrap_or("")
        ));
    }
    let endpoints = endpoints(root, None);
    let mut wanted: Vec<Provider> = chosen.iter().map(|t| t.provider).collect();
    wanted.sort();
    wanted.dedup();
    if !wanted
        .iter()
        .any(|p| endpoints.get(p).is_some_and(Result::is_ok))
    {
        return Err(missing_keys_help(&wanted));
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = std::env::temp_dir().join(format!("tooltape-drift-{}-{nanos}", std::process::id()));
    let chosen: Vec<(Trial, String)> = chosen
        .into_iter()
        .map(|t| (t, "drift".to_string()))
        .collect();
    let summary = tooltape::runtime().block_on(record::record_all(
        &tmp,
        chosen,
        &endpoints,
        a.concurrency.max(1),
    ));
    eprintln!(
        "{}\nfresh recording kept in {}",
        summary.render(),
        tmp.display()
    );
    let skipped = wanted
        .iter()
        .filter(|p| endpoints.get(p).is_none_or(Result::is_err))
        .map(|p| p.slug().to_string());
    Ok((tmp.join("cassettes"), skipped.collect()))
}
