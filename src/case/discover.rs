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
    /// Discovery could not tell which trials exist (the provider table or `cases/` is
    /// unreadable): no file may be called an orphan.
    pub incomplete: bool,
}

/// Finds every case under `root/cases` (sorted) and expands it.
pub fn discover(root: &Path) -> Discovery {
    let cases_dir = root.join("cases");
    let mut d = Discovery::default();
    let providers = match load_providers(&cases_dir) {
        Ok(p) => p,
        Err(mut e) => {
            if let Ok(p) = e.path.strip_prefix(root) {
                e.path = p.to_path_buf();
            }
            d.broken.push(("providers".into(), e));
            d.incomplete = true;
            return d;
        }
    };
    let entries: Vec<PathBuf> = match std::fs::read_dir(&cases_dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => {
            let rel = cases_dir.strip_prefix(root).unwrap_or(&cases_dir);
            d.broken.push((
                "cases".into(),
                CaseError::at_start(rel, format!("cannot list the case folder: {e}")),
            ));
            d.incomplete = true;
            return d;
        }
    };
    let mut files = Vec::new();
    for p in entries {
        let Some(ext) = p.extension().and_then(|x| x.to_str()) else {
            continue;
        };
        if ext == "toml" {
            if p.file_name().is_some_and(|n| n != PROVIDERS_FILE) {
                files.push(p);
            }
        } else if ext.eq_ignore_ascii_case("toml") {
            // `weather.TOML` is not discovered: say so rather than drop a case in silence.
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("case");
            d.broken.push((
                stem.to_string(),
                CaseError::at_start(
                    rel,
                    format!("case files end in `.toml` (lower case): rename it to {stem}.toml"),
                ),
            ));
        }
    }
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
