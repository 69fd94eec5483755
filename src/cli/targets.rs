//! `tooltape gateway --list` and `tooltape client --list`: every profile a run can name, the
//! project's own (`gateways/`, `clients/` under --root) and the built-in ones, with its version
//! and where it comes from (a project file of a built-in name replaces the built-in profile).

use std::collections::BTreeSet;
use std::path::Path;

use super::exit;
use tooltape::engine::{Loaded, builtin_names};

/// Prints one line per profile of `folder`: name, version, source; 2 when one cannot be read.
pub fn list<P, E: std::fmt::Display>(
    root: &Path,
    folder: &str,
    load: impl Fn(&Path, &str) -> Result<Loaded<P>, E>,
    version: impl Fn(&P) -> Option<String>,
) -> i32 {
    let mut names: BTreeSet<String> = builtin_names(folder)
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
                let v = version(&p.profile).unwrap_or_else(|| "-".into());
                outln!("{name:<20} {v:<12} {from}");
            }
            Err(e) => {
                eprintln!("{e}");
                broken = true;
            }
        }
    }
    if broken { exit::ERROR } else { exit::OK }
}
