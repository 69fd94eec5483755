//! The case corpus on the command line: the global `--cases DIR` (a team's own cases laid over
//! the corpus), passed down as a [`Corpus`] to every command that discovers cases, and
//! `tooltape cases export DIR`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::exit::CommandResult;
use tooltape::case::{Discovery, discover_with};

/// The global corpus argument (flattened into `Cli`).
#[derive(Args, Debug)]
pub struct CorpusArgs {
    /// A folder of your own cases, laid out like cases/ (NAME.toml, tools/NAME.json): added to
    /// the corpus (cases/ under --root, else the built-in one); a file of the same name replaces
    /// the built-in one.
    #[arg(long = "cases", global = true, value_name = "DIR")]
    pub cases: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CasesArgs {
    #[command(subcommand)]
    pub action: CasesAction,
}

#[derive(Subcommand, Debug)]
pub enum CasesAction {
    /// Write the built-in corpus (case files, tools/, providers.toml, the schema) into DIR.
    Export {
        /// The folder to write (created when absent); `tooltape --root PARENT` then reads it
        /// when DIR is PARENT/cases.
        dir: PathBuf,
        /// Replace files that differ from the built-in ones (otherwise nothing is written).
        #[arg(long)]
        force: bool,
    },
}

/// Where a command's cases come from: the corpus of `--root` (its `cases/`, else the built-in
/// one) with the `--cases` folder laid over it. Passed down to every command that discovers.
#[derive(Clone, Copy, Debug)]
pub struct Corpus<'a> {
    pub root: &'a Path,
    pub cases: Option<&'a Path>,
}

impl Corpus<'_> {
    /// The cases of this run.
    pub fn discover(&self) -> Discovery {
        discover_with(self.root, self.cases)
    }
}

/// Runs `tooltape cases …`.
pub fn run(a: &CasesArgs) -> CommandResult {
    match &a.action {
        CasesAction::Export { dir, force } => {
            let done = tooltape::case::export(dir, *force)?;
            eprintln!(
                "{}: {} file(s) written, {} already up to date",
                dir.display(),
                done.written.len(),
                done.unchanged.len()
            );
            Ok(())
        }
    }
}
