//! Discovery: every case file of the corpus (`cases/` under the root, else the embedded one,
//! with a `--cases` folder laid over; sorted), loaded and expanded into trials; a broken file
//! becomes an error of its own instead of aborting the rest.

use std::path::Path;
use std::sync::Arc;

use super::corpus::Corpus;
use super::load::{load_case_from, providers_from};
use super::trial::{Trial, trials};

/// Everything found under a project root: trials of good cases, and the errors of broken files.
#[derive(Debug, Default)]
pub struct Discovery {
    pub trials: Vec<Trial>,
    /// (case name, error): a broken case still becomes a (failing) test.
    pub broken: Vec<(String, super::load::CaseError)>,
    /// Discovery could not tell which trials exist (the provider table or `cases/` is
    /// unreadable): no file may be called an orphan.
    pub incomplete: bool,
}

/// Finds every case under `root/cases` (the embedded corpus when there is no such folder),
/// sorted, and expands it.
pub fn discover(root: &Path) -> Discovery {
    discover_with(root, None)
}

/// [`discover`] with a team's own case folder laid over the corpus: its case and tool files
/// add to ours, or replace ours of the same file name; its `providers.toml` replaces ours.
pub fn discover_with(root: &Path, extra: Option<&Path>) -> Discovery {
    let mut d = Discovery::default();
    let corpus = match Corpus::of(root, extra) {
        Ok(c) => c,
        Err(e) => {
            d.broken.push(("cases".into(), e));
            d.incomplete = true;
            return d;
        }
    };
    let providers = match providers_from(&corpus.providers) {
        Ok(p) => p,
        Err(e) => {
            d.broken.push(("providers".into(), e));
            d.incomplete = true;
            return d;
        }
    };
    d.broken.extend(corpus.misnamed.iter().cloned());
    let find_tool = |name: &str| corpus.tool(name).cloned();
    for (file, entry) in &corpus.cases {
        match load_case_from(entry, &find_tool, &providers) {
            Ok(case) => d.trials.extend(trials(&Arc::new(case))),
            Err(e) => {
                let name = file.strip_suffix(".toml").unwrap_or(file).to_string();
                d.broken.push((name, e));
            }
        }
    }
    d
}
