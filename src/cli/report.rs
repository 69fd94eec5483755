//! The `tooltape report` command: replays every selected trial concurrently (as `tooltape
//! replay` does), builds the matrix and writes it in the chosen format.

use std::path::PathBuf;

use super::cases::Corpus;
use super::exit::{CliError, CommandResult};
use clap::{Args, ValueEnum};
use tooltape::{harness::replay_all, report::ReplayMatrix};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Terminal,
    Md,
    Html,
    Json,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Only trials whose name contains this (`CONFORMANCE.md` is always the whole suite).
    pub filter: Option<String>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: ReportFormat,
    /// Write the report here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Renders a matrix in a format.
pub fn render(m: &ReplayMatrix, format: ReportFormat) -> String {
    match format {
        ReportFormat::Terminal => tooltape::report::text::terminal(m),
        ReportFormat::Md => tooltape::report::text::markdown(m),
        ReportFormat::Html => tooltape::report::html::page(m),
        ReportFormat::Json => tooltape::report::text::json(m),
    }
}

/// Runs `tooltape report`: 0 when written (the matrix itself may hold failures: `make test`
/// judges those), 1 when written but the suite has broken files, 2 when nothing matches or the
/// output cannot be written.
pub fn run(corpus: Corpus<'_>, a: &ReportArgs) -> CommandResult {
    // Selected as `replay` does: broken case files are reported on stderr.
    let sel = super::select::select(corpus, a.filter.as_deref());
    let m = tooltape::report::build(&sel.trials, &replay_all(corpus.root, &sel.trials));
    sel.report_problems();
    if m.rows.is_empty() {
        return Err(format!(
            "no trials match{}",
            a.filter
                .as_deref()
                .map(|f| format!(" `{f}`"))
                .unwrap_or_default()
        )
        .into());
    }
    super::drift::write_out(a.out.as_deref(), &render(&m, a.format))?;
    if sel.broken_files > 0 {
        return Err(CliError::FailedWith(format!(
            "report written, but the suite is broken{}: it does not cover every case",
            sel.broken_suffix(0)
        )));
    }
    Ok(())
}
