//! What gateway and client profiles share: the loaded file (name, path, source for
//! `path:line:col`), the strict TOML reader, known-failure entries with their audit. Installing
//! a profile's pinned release is `system::install`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::case::KnownFailure;
use crate::located::Located;
use crate::system::shipped;

/// A loaded profile: its name (file stem), path and source for locations, its content, and
/// whether it is the built-in one.
#[derive(Debug)]
pub struct Loaded<P> {
    pub name: String,
    pub path: PathBuf,
    pub source: String,
    pub profile: P,
    /// The written-out shipped targets (`system::shipped`) when this is a built-in profile (no
    /// project file of its name): the folder its `{{root}}` names.
    pub shipped: Option<PathBuf>,
}

impl<P> Loaded<P> {
    /// A profile read by [`read_profile`] as `name`: named by its file's stem.
    pub(crate) fn named(
        name: &str,
        (path, source, profile, shipped): (PathBuf, String, P, Option<PathBuf>),
    ) -> Loaded<P> {
        let stem = path
            .file_stem()
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
        Loaded {
            name: stem,
            path,
            source,
            profile,
            shipped,
        }
    }

    /// `path:line:col` of a span in the profile.
    pub fn locate(&self, span: std::ops::Range<usize>) -> String {
        let (l, c) = crate::located::line_col(&self.source, span.start);
        format!("{}:{l}:{c}", self.path.display())
    }
}

/// A known failure of a gateway or a library: the shared one (`trials`, `reason`, `flaky`),
/// optionally naming a root cause (`tooltape gateway|client NAME --findings`) and its audit. An
/// entry with a `cause` covers only the trials of its pattern that fail with that cause; it
/// fails the run when none does.
#[derive(Debug, Deserialize)]
pub struct ProfileKnownFailure {
    #[serde(flatten)]
    pub failure: KnownFailure,
    /// A root-cause id, e.g. `refused-1a2b3c4d`.
    #[serde(default)]
    pub cause: Option<String>,
    /// What the audit found the cause to be (`audit = "bug"` in a profile; `verdict`, its
    /// name before the one vocabulary, still reads).
    #[serde(default, alias = "verdict")]
    pub audit: Option<Audit>,
    /// Where the bug is tracked (an issue or pull-request URL).
    #[serde(default)]
    pub tracker: Option<String>,
}

/// The audit of a root cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Audit {
    /// The system does not do what the APIs it speaks document.
    Bug,
    /// The system documents that it does not do this.
    Limitation,
}

impl Audit {
    pub fn as_str(self) -> &'static str {
        match self {
            Audit::Bug => "bug",
            Audit::Limitation => "documented limitation",
        }
    }
}

/// A profile file read as strict TOML: `FOLDER/NAME.toml` under `root`, else the built-in profile
/// of that name (`system::shipped`, written out into the cache), or a path ending in `.toml`;
/// its source (for locations), the value, and the written-out folder when it is the built-in
/// one; `path:line:col` errors. `kind` names it in messages (`gateway`, `client`). Gateway and
/// client profiles both read so.
pub(crate) fn read_profile<T: serde::de::DeserializeOwned>(
    root: &Path,
    folder: &str,
    kind: &str,
    name: &str,
) -> Result<(PathBuf, String, T, Option<PathBuf>), Located> {
    let mut path = if name.ends_with(".toml") {
        PathBuf::from(name)
    } else {
        root.join(folder).join(format!("{name}.toml"))
    };
    let mut from = None;
    if !name.ends_with(".toml") && !path.exists() && shipped::builtin(folder, name).is_some() {
        let dir = shipped::write_out().map_err(|e| Located::at_start(&path, e))?;
        path = dir.join(folder).join(format!("{name}.toml"));
        from = Some(dir);
    }
    let source = std::fs::read_to_string(&path).map_err(|e| {
        Located::at_start(
            &path,
            format!(
                "cannot read the {kind} profile: {e}; profiles live in {folder}/NAME.toml (built in: {})",
                shipped::builtin_names(folder).join(", ")
            ),
        )
    })?;
    let value: T = toml::from_str(&source).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        Located::at_offset(&path, &source, offset, e.message().to_string())
    })?;
    Ok((path, source, value, from))
}
