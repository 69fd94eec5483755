//! Installing what a profile pins: its `[install]` table, the pinned release and another one
//! (`--versions`, `--bisect`), the install into the cache outside the repository (a failed
//! install is never taken as installed), `{{key}}` placeholders, and a log's last lines.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use crate::engine::profile::Loaded;

/// Installing the pinned version into `dir` (outside the repository) when `check` is missing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Install {
    /// A path under the install folder that exists once installed (e.g. `bin/litellm`).
    pub check: String,
    /// Run with `sh -c` in the install folder; `{{dir}}` is that folder.
    pub command: String,
}

/// A profile that pins one release of what it installs.
pub trait Pinned {
    /// Its `version`, `[install]` and `description`, the fields a release changes.
    fn pin(&mut self) -> (&mut Option<String>, Option<&mut Install>, &mut String);
}

impl<P: Pinned> Loaded<P> {
    /// This profile at another release (see [`at_release`]).
    pub fn at_release(&mut self, release: &str) -> Result<(), String> {
        let (version, install, description) = self.profile.pin();
        at_release(version, install, description, release)
    }
}

/// A profile pinned at `pinned`, retargeted to another `release`: its version, its install
/// command (`{{version}}` there, else the pinned version where the command writes it out) and
/// its description name `release`. Errs when the profile pins nothing to replace.
pub fn at_release(
    version: &mut Option<String>,
    install: Option<&mut Install>,
    description: &mut String,
    release: &str,
) -> Result<(), String> {
    let Some(pinned) = version.clone() else {
        return Err("the profile pins no `version`: it has no other release to install".into());
    };
    let Some(install) = install else {
        return Err("the profile has no [install]: tooltape does not install it".into());
    };
    if install.command.contains("{{version}}") {
        install.command = fill(&install.command, &[("version", release)]);
    } else if install.command.contains(&pinned) {
        install.command = install.command.replace(&pinned, release);
    } else {
        return Err(format!(
            "the install command names neither `{{{{version}}}}` nor the pinned {pinned}: it cannot install another release"
        ));
    }
    install.check = install.check.replace(&pinned, release);
    *description = description.replace(&pinned, release);
    *version = Some(release.to_string());
    Ok(())
}

/// Fills `{{key}}` placeholders.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    out
}

/// Installs a profile's pinned release (`install`, when it names one) into `dir` unless it is
/// there: the folder, when it installed. A failed install is never taken as installed (the check
/// path decides, and the command runs again next time).
pub fn install_pinned(
    name: &str,
    dir: PathBuf,
    install: Option<&Install>,
) -> Result<Option<PathBuf>, String> {
    match install {
        Some(install) => Ok(install_into(name, &dir, install)?.then_some(dir)),
        None => Ok(None),
    }
}

/// Runs `install`'s command in `dir` unless its check path exists there; whether it ran.
pub fn install_into(name: &str, dir: &Path, install: &Install) -> Result<bool, String> {
    let dir = dir.to_path_buf();
    if dir.join(&install.check).exists() {
        return Ok(false);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let log = dir.join("install.log");
    let out = File::create(&log).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let dir_s = dir.to_string_lossy().into_owned();
    let status = Command::new("sh")
        .arg("-c")
        .arg(fill(&install.command, &[("dir", &dir_s)]))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("cannot run the install command: {e}"))?;
    if !status.success() || !dir.join(&install.check).exists() {
        return Err(format!(
            "installing {} into {} failed ({status}); {} not found. Last lines of {}:\n{}",
            name,
            dir.display(),
            install.check,
            log.display(),
            tail(&log, 30)
        ));
    }
    Ok(true)
}

/// The last `lines` lines of a file (reads at most the last 64 KiB).
pub(crate) fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = File::open(path) else {
        return format!("({} not readable)", path.display());
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
