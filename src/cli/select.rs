//! What the commands share: trial selection with the suite's problems, the input reader
//! (a file or stdin, bounded), and the `--provider` argument.

use std::path::Path;

use super::cases::Corpus;
use tooltape::{Provider, Trial};

pub(super) fn provider_arg(s: &str) -> Result<Provider, String> {
    Provider::from_slug(s).ok_or_else(|| {
        let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
        format!("unknown provider `{s}`; expected one of {}", all.join(", "))
    })
}

/// How an input is named in messages: its path, or `<stdin>`.
pub(super) fn input_name(file: Option<&Path>) -> String {
    file.map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string())
}

/// FILE or stdin, bounded.
pub(super) fn read_input(file: Option<&Path>) -> Result<Vec<u8>, String> {
    match file {
        Some(p) => tooltape::input::read(p).map_err(|e| format!("{}: {e}", p.display())),
        None => tooltape::input::read_all(std::io::stdin().lock(), Path::new("<stdin>"))
            .map_err(|e| format!("stdin: {e}")),
    }
}

/// FILE or stdin as UTF-8 text, and how it is named in messages ([`input_name`]).
pub(super) fn read_text(file: Option<&Path>) -> Result<(String, String), String> {
    let bytes = read_input(file)?;
    let name = input_name(file);
    let text = String::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8"))?;
    Ok((name, text))
}

/// The trials a command runs, and what is broken in the suite around them.
pub struct Selection {
    pub trials: Vec<Trial>,
    /// `path:line:col: what` per broken file (case, tool, provider table, orphan).
    pub problems: Vec<String>,
    /// How many files `problems` names.
    pub broken_files: usize,
}

impl Selection {
    /// Prints the suite's problems on stderr (after the command's own output).
    pub fn report_problems(&self) {
        if self.problems.is_empty() {
            return;
        }
        eprintln!("\nbroken in the suite:");
        for p in &self.problems {
            eprintln!("{p}");
        }
    }

    /// `; N broken files` for a summary line (empty when nothing is broken).
    pub fn broken_suffix(&self, extra: usize) -> String {
        match self.broken_files + extra {
            0 => String::new(),
            1 => "; 1 broken file".into(),
            n => format!("; {n} broken files"),
        }
    }
}

/// Selects trials by substring of their name; the suite's problems (broken case, tool and
/// provider files, orphans) come with them, for every command to report and fail on.
pub fn select(corpus: Corpus<'_>, filter: Option<&str>) -> Selection {
    let d = corpus.discover();
    let problems = tooltape::harness::suite_problems(corpus.root, &d);
    let broken_files = tooltape::harness::broken_file_count(&d, &problems);
    let trials = d
        .trials
        .into_iter()
        .filter(|t| filter.is_none_or(|f| t.name().contains(f)))
        .collect();
    Selection {
        trials,
        problems,
        broken_files,
    }
}
