//! The case corpus on the command line: the global `--cases DIR` (a team's own cases laid over
//! the corpus) that every command's discovery goes through, and `tooltape cases export DIR`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// The `--cases` folder of this run, set once before dispatch.
static CASES_FOLDER: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Records the run's `--cases` folder for [`discover`].
pub fn set_cases_folder(args: &CorpusArgs) {
    let _ = CASES_FOLDER.set(args.cases.clone());
}

/// The cases of this run: the corpus of `root` with the `--cases` folder laid over it.
pub fn discover(root: &Path) -> Discovery {
    discover_with(root, CASES_FOLDER.get().and_then(Option::as_deref))
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
