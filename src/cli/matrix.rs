//! The `tooltape matrix` command: run a set of suites (`--systems`, default every shipped
//! profile) into one document, a shard of them (`--shard K/N`), join shards' parts (`merge`,
//! with the page as HTML and Markdown), and compare two runs (`diff`).

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use clap::{Args, Subcommand, ValueEnum};

use super::cases::Corpus;
use super::exit::{self, CliError, CommandResult};
use super::suite;
use tooltape::engine::RunOptions;
use tooltape::matrix::{self, Document, Request, Shard, Suite, SystemName};
use tooltape::runtime;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MatrixArgs {
    #[command(subcommand)]
    pub command: Option<MatrixCommand>,
    /// The systems, comma-separated: `gateway:NAME`, `client:NAME`, `server:NAME` (default: every profile in
    /// gateways/ and clients/).
    #[arg(long, value_delimiter = ',')]
    pub systems: Vec<String>,
    /// Only trials whose `case::route::choice::mode` contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Run only part K of N (`1/4`): the same split on every machine; join the parts with
    /// `tooltape matrix merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Trials in flight at once, for every system (default: each profile's).
    #[arg(long)]
    pub concurrency: Option<usize>,
    #[command(flatten)]
    pub outputs: Outputs,
}

/// Where the document and the page go.
#[derive(Args, Debug)]
pub struct Outputs {
    /// Write the JSON document here (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the page as HTML here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Also write the page as Markdown here.
    #[arg(long)]
    pub md: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum MatrixCommand {
    /// Join shards' parts into the document an unsharded run writes (one whole run's document
    /// passes through: its page rendered again).
    Merge {
        /// Every part (`--out` of each `--shard K/N` run).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        outputs: Outputs,
    },
    /// What changed between two runs: root causes that appeared, disappeared or changed routes,
    /// per system; exit 1 when one appeared.
    Diff {
        old: PathBuf,
        new: PathBuf,
        #[arg(long, value_enum, default_value = "md")]
        format: DiffFormat,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Md,
    Json,
}

/// Runs `tooltape matrix`: the worst of the systems' statuses (0, 1, 2); 2 on a usage error.
pub fn run(corpus: Corpus<'_>, a: &MatrixArgs) -> CommandResult {
    let root = corpus.root;
    match &a.command {
        Some(MatrixCommand::Merge { files, outputs }) => return merge(files, outputs),
        Some(MatrixCommand::Diff { old, new, format }) => return diff(old, new, *format),
        None => {}
    }
    let shard = a
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(usage)?;
    let names: Vec<SystemName> = if a.systems.is_empty() {
        matrix::shipped(root)
    } else {
        (a.systems
            .iter()
            .map(|s| SystemName::parse(s))
            .collect::<Result<_, _>>())
        .map_err(usage)?
    };
    if names.is_empty() {
        return Err(usage(
            "no systems: no profile in gateways/ or clients/; name them with --systems",
        ));
    }
    let mut suites = Vec::new();
    for n in names {
        if suites.iter().any(|(m, _): &(SystemName, Suite)| *m == n) {
            return Err(usage(format!("{} is named twice", n.label())));
        }
        let suite = Suite::load(root, &n).map_err(usage)?;
        suites.push((n, suite));
    }
    let (cases, unloadable) = suite::cases(corpus);
    if unloadable > 0 {
        return Err(usage(format!(
            "{unloadable} case file(s) could not be loaded; fix them first (a matrix needs the whole suite)"
        )));
    }
    let req = Request {
        suites: &suites,
        cases: &cases,
        filter: a.filter.as_deref(),
        shard,
        date: tooltape::clock::utc_iso(SystemTime::now()),
        options: RunOptions {
            concurrency: a.concurrency,
            ..RunOptions::default()
        },
    };
    let t0 = Instant::now();
    let note = |m: &str| eprintln!("{m}");
    let doc = runtime().block_on(matrix::run(&req, &note));
    for s in &doc.systems {
        eprintln!("{}: {}", s.system, s.summary);
        if let Some(e) = &s.error {
            eprintln!("{}: could not run: {e}", s.system);
        }
        for m in &s.stale {
            eprintln!("{m}");
        }
    }
    eprintln!("matrix in {:.1}s", t0.elapsed().as_secs_f64());
    write(&doc, &a.outputs).map_err(usage)?;
    exit::of_code(doc.exit_code())
}

/// A usage or set-up error of `matrix`: exit 2 with `matrix: MESSAGE`.
fn usage(message: impl std::fmt::Display) -> CliError {
    CliError::Error(format!("matrix: {message}"))
}

/// `matrix merge`: 0 when merged and written, 2 when the parts do not belong together.
fn merge(files: &[PathBuf], outputs: &Outputs) -> CommandResult {
    let t0 = Instant::now();
    let mut parts = Vec::new();
    for f in files {
        parts.push((f.display().to_string(), matrix::read(f).map_err(usage)?));
    }
    let doc = matrix::merge(&parts).map_err(usage)?;
    write(&doc, outputs).map_err(usage)?;
    let trials: usize = doc.systems.iter().map(|s| s.trials.len()).sum();
    eprintln!(
        "merged {} parts: {} systems, {trials} trials in {:.3}s",
        parts.len(),
        doc.systems.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `matrix diff`: 1 when a root cause appeared, 0 otherwise, 2 when a file cannot be read.
fn diff(old: &Path, new: &Path, format: DiffFormat) -> CommandResult {
    let (a, b) = match (matrix::read(old), matrix::read(new)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Err(usage(e)),
    };
    let d = matrix::diff(&a, &b);
    match format {
        DiffFormat::Md => out!("{}", d.markdown()),
        DiffFormat::Json => outln!("{}", serde_json::to_string_pretty(&d).unwrap_or_default()),
    }
    exit::of_code(d.exit_code())
}

/// The document (`--out` or stdout) and the pages asked for.
fn write(doc: &Document, o: &Outputs) -> Result<(), String> {
    let json = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())? + "\n";
    let put = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    match &o.out {
        Some(p) => put(p, &json)?,
        None => out!("{json}"),
    }
    if let Some(p) = &o.html {
        put(p, &matrix::html(doc))?;
    }
    if let Some(p) = &o.md {
        put(p, &matrix::markdown(doc))?;
    }
    Ok(())
}
