//! Discovery: every case file under `cases/` (sorted), loaded and expanded into trials; a broken
//! file becomes an error of its own instead of aborting the rest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::load::{CaseError, PROVIDERS_FILE, load_case, load_providers};
use super::trial::{Trial, trials};

/// Everything found under a project root: trials of good cases, and the errors of broken files.
#[derive(Debug, Default)]
pub struct Discovery {
    pub trials: Vec<Trial>,
    /// (case name, error): a broken case still becomes a (failing) test.
    pub broken: Vec<(String, CaseError)>,
}

/// Finds every case under `root/cases` (sorted) and expands it.
pub fn discover(root: &Path) -> Discovery {
    let cases_dir = root.join("cases");
    let mut d = Discovery::default();
    let providers = match load_providers(&cases_dir) {
        Ok(p) => p,
        Err(e) => {
            d.broken.push(("providers".into(), e));
            return d;
        }
    };
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&cases_dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "toml")
                    && p.file_name().is_some_and(|n| n != PROVIDERS_FILE)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let tools_dir = cases_dir.join("tools");
    for f in files {
        let rel = f.strip_prefix(root).unwrap_or(&f).to_path_buf();
        match load_case(&root.join(&rel), &tools_dir, &providers) {
            Ok(mut case) => {
                case.path = rel;
                d.trials.extend(trials(&Arc::new(case)));
            }
            Err(mut e) => {
                if let Ok(p) = e.path.strip_prefix(root) {
                    e.path = p.to_path_buf();
                }
                let name = f
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("case")
                    .to_string();
                d.broken.push((name, e));
            }
        }
    }
    d
}
