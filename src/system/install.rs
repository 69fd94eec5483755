//! Installing what a profile pins: its `[install]` table, the pinned release and another one
//! (`--versions`, `--bisect`), the install into the cache outside the repository (locked, and
//! never taken as installed until it completed), `{{key}}` placeholders, and a log's last lines.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
    note: &dyn Fn(&str),
) -> Result<Option<PathBuf>, String> {
    match install {
        Some(install) => Ok(install_into(name, &dir, install, note)?.then_some(dir)),
        None => Ok(None),
    }
}

/// The file an install writes last, once its command succeeded and its check path exists: an
/// install folder without it is half-made (a run stopped mid-install, or one still installing)
/// and is never used.
pub const COMPLETE: &str = ".tooltape-installed";

/// Runs `install`'s command in `dir` unless a completed install is there; whether it ran.
///
/// Installs are locked and atomic: a run holds `DIR.lock` (an OS file lock, released when the
/// run ends, however it ends) while it installs, and a second run on the machine waits for it,
/// saying so, then finds the install done. A folder is installed only once [`COMPLETE`] is
/// written in it; a folder without it is removed and installed afresh. `note` hears what a
/// person waits for: another run's install, and this one's (where its log is).
pub fn install_into(
    name: &str,
    dir: &Path,
    install: &Install,
    note: &dyn Fn(&str),
) -> Result<bool, String> {
    let complete = |dir: &Path| dir.join(COMPLETE).is_file() && dir.join(&install.check).exists();
    if complete(dir) {
        return Ok(false);
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let mut lock_path = dir.as_os_str().to_owned();
    lock_path.push(".lock");
    let _lock = lock(name, Path::new(&lock_path), note)?;
    if complete(dir) {
        return Ok(false);
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .map_err(|e| format!("cannot remove the half-made install {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let log = dir.join("install.log");
    note(&format!(
        "installing {name} into {} (not in the cache yet; its log: {})",
        dir.display(),
        log.display()
    ));
    let out = File::create(&log).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let dir_s = dir.to_string_lossy().into_owned();
    let child = Command::new("sh")
        .arg("-c")
        .arg(fill(&install.command, &[("dir", &dir_s)]))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run the install command: {e}"))?;
    let status = wait_noting(child, (name, &log), PROGRESS_EVERY, note)
        .map_err(|e| format!("cannot wait for the install command: {e}"))?;
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
    std::fs::write(dir.join(COMPLETE), format!("{}\n", install.command))
        .map_err(|e| format!("cannot write {}: {e}", dir.join(COMPLETE).display()))?;
    Ok(true)
}

/// How often a long install says how far it got (a cold llama.cpp build takes 20 minutes).
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// Waits for the install command, telling `note` every `every` how long it has run and the
/// last line of its log, so that a cold machine's first run shows what it builds.
fn wait_noting(
    mut child: Child,
    (name, log): (&str, &Path),
    every: Duration,
    note: &dyn Fn(&str),
) -> std::io::Result<ExitStatus> {
    let t0 = Instant::now();
    let mut next = every;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if t0.elapsed() >= next {
            let last = tail(log, 1);
            note(&format!(
                "installing {name}: {}s so far; its log: {}",
                t0.elapsed().as_secs(),
                crate::text::clip(last.trim(), 160)
            ));
            next += every;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Takes the OS lock on `path` (created if missing), waiting for another run that holds it and
/// saying so to `note`. The lock is released when the returned file is dropped or the process
/// ends.
fn lock(name: &str, path: &Path, note: &dyn Fn(&str)) -> Result<File, String> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open the install lock {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            note(&format!(
                "another tooltape run is installing {name} ({} is locked): waiting for it",
                path.display()
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    file.lock()
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(file)
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

#[cfg(test)]
mod tests;
