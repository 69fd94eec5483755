//! The shipped targets: every gateway, client and server profile of the repository's `gateways/`,
//! `clients/` and `servers/` folders, with their drivers, driver helpers and launcher scripts, embedded at
//! build time (`build.rs`), so `tooltape gateway NAME` and `tooltape client NAME` run from any
//! folder. A profile of the same name in the project's own folder replaces the built-in one; the
//! built-in files are written out once into the install cache, where the programs a profile
//! starts find them (`{{root}}`, `{{gateways}}` and `{{shipped}}` name that folder). The
//! install cache itself, where pinned installs go, is named here too.

use std::hash::Hasher;
use std::path::{Path, PathBuf};

use crate::fnv::Fnv;

#[cfg(test)]
mod tests;

/// The shipped files: (path under the repository with `/` separators, `gateways/…` or
/// `clients/…`; text), in path order (folder by folder).
pub static SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// Where pinned installs of gateways and client libraries go, outside the repository:
/// `$TOOLTAPE_GATEWAY_CACHE`, else `$XDG_CACHE_HOME/tooltape/gateways`, else `~/.cache/…`.
pub fn install_cache() -> PathBuf {
    std::env::var_os("TOOLTAPE_GATEWAY_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("tooltape/gateways"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/tooltape/gateways"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("tooltape-gateways"))
}

/// The built-in profile `folder/NAME.toml` (`folder`: `gateways` or `clients`).
pub fn builtin(folder: &str, name: &str) -> Option<&'static str> {
    let path = format!("{folder}/{name}.toml");
    SHIPPED.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// The names of the built-in profiles of `folder`, sorted.
pub fn builtin_names(folder: &str) -> Vec<&'static str> {
    let prefix = format!("{folder}/");
    SHIPPED
        .iter()
        .filter_map(|(p, _)| p.strip_prefix(prefix.as_str())?.strip_suffix(".toml"))
        .filter(|n| !n.contains('/'))
        .collect()
}

/// The folder the shipped files are written out to: `shipped-HASH` in the install cache, the
/// hash over every path and text, so a binary with other files never reads a stale copy.
pub fn shipped_dir() -> PathBuf {
    let mut h = Fnv::default();
    for (path, text) in SHIPPED {
        h.write(path.as_bytes());
        h.write(&[0]);
        h.write(text.as_bytes());
        h.write(&[0]);
    }
    install_cache().join(format!("shipped-{:016x}", h.finish()))
}

/// Writes the shipped files out (once: a complete folder is kept and reused) and returns the
/// folder, which holds `gateways/`, `clients/` and `servers/` as the repository does.
pub fn write_out() -> Result<PathBuf, String> {
    let dir = shipped_dir();
    if dir.is_dir() {
        return Ok(dir);
    }
    // Written beside, then renamed: a folder under the final name is always complete, and
    // two runs writing at once both end with one.
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let written = write_files(&partial).and_then(|()| match std::fs::rename(&partial, &dir) {
        Ok(()) => Ok(()),
        Err(_) if dir.is_dir() => Ok(()),
        Err(e) => Err(format!("cannot rename to {}: {e}", dir.display())),
    });
    let _ = std::fs::remove_dir_all(&partial);
    written.map(|()| dir)
}

fn write_files(under: &Path) -> Result<(), String> {
    for (rel, text) in SHIPPED {
        let path = rel.split('/').fold(under.to_path_buf(), |p, c| p.join(c));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
