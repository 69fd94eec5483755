//! Where the cases come from: `cases/` under the root when that folder exists, else the corpus
//! embedded in the binary at build time (`build.rs`); a team's own folder (`--cases DIR`) laid
//! over either (a file of the same name replaces ours, the rest add); and writing the embedded
//! corpus out (`tooltape cases export`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::located::Located;

#[cfg(test)]
mod tests;

/// The file in a case folder that configures providers rather than describing a case.
pub const PROVIDERS_FILE: &str = "providers.toml";

/// The shipped corpus: (path under `cases/` with `/` separators, text), sorted by path.
pub static EMBEDDED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/corpus.rs"));

/// How the embedded corpus's files are named in messages (`<built-in>/cases/weather.toml`):
/// no such folder exists; `tooltape cases export DIR` writes it out.
pub const BUILT_IN: &str = "<built-in>";

/// One file of the corpus: the path messages show, and where its text is.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) shown: PathBuf,
    text: Text,
}

#[derive(Clone, Debug)]
enum Text {
    /// Read when needed (a read error is the file's own error).
    Disk(PathBuf),
    Embedded(&'static str),
}

impl Entry {
    /// A file on disk, shown as `shown` and read from `path`.
    pub(crate) fn disk(shown: impl Into<PathBuf>, path: impl Into<PathBuf>) -> Entry {
        Entry {
            shown: shown.into(),
            text: Text::Disk(path.into()),
        }
    }

    /// The file's text; `what` says what it is for the error (`cannot read case file`).
    pub(crate) fn read(&self, what: &str) -> Result<String, Located> {
        match &self.text {
            Text::Embedded(t) => Ok((*t).to_string()),
            Text::Disk(p) => crate::input::read_to_string(p)
                .map_err(|e| Located::at_start(&self.shown, format!("{what}: {e}"))),
        }
    }
}

/// The case files, tool files and provider table of one run, after layering.
#[derive(Clone, Debug)]
pub(crate) struct Corpus {
    pub(crate) providers: Entry,
    /// By file name (`weather.toml`), sorted.
    pub(crate) cases: BTreeMap<String, Entry>,
    /// By file name (`get_weather.json`).
    tools: BTreeMap<String, Entry>,
    /// The tool folders looked in, for the message when a tool is missing.
    tool_dirs: Vec<PathBuf>,
    /// Files found but not discovered (`weather.TOML`): (stem, why).
    pub(crate) misnamed: Vec<(String, Located)>,
}

impl Corpus {
    /// The cases of `root`: its `cases/` folder when it has one, else the embedded corpus;
    /// then `extra` laid over. Paths under `root` are shown relative to it. An unreadable
    /// folder is an error: which cases exist is then unknown.
    pub(crate) fn of(root: &Path, extra: Option<&Path>) -> Result<Corpus, Located> {
        let dir = root.join("cases");
        let mut c = if dir.is_dir() {
            let mut c = Corpus::empty(Entry::disk(
                Path::new("cases").join(PROVIDERS_FILE),
                dir.join(PROVIDERS_FILE),
            ));
            c.add_dir(Path::new("cases"), &dir)?;
            c
        } else {
            Corpus::embedded()
        };
        if let Some(extra) = extra {
            if !extra.is_dir() {
                return Err(Located::at_start(
                    extra,
                    "--cases: no such folder: give a folder laid out like cases/ (case files, tools/NAME.json)",
                ));
            }
            if extra.join(PROVIDERS_FILE).exists() {
                c.providers = Entry::disk(extra.join(PROVIDERS_FILE), extra.join(PROVIDERS_FILE));
            }
            c.add_dir(extra, extra)?;
        }
        Ok(c)
    }

    fn empty(providers: Entry) -> Corpus {
        Corpus {
            providers,
            cases: BTreeMap::new(),
            tools: BTreeMap::new(),
            tool_dirs: Vec::new(),
            misnamed: Vec::new(),
        }
    }

    /// The embedded corpus alone.
    pub(crate) fn embedded() -> Corpus {
        let shown = |rel: &str| Path::new(BUILT_IN).join("cases").join(rel);
        let text = EMBEDDED
            .iter()
            .find(|(rel, _)| *rel == PROVIDERS_FILE)
            .map_or("", |(_, t)| t);
        let mut c = Corpus::empty(Entry {
            shown: shown(PROVIDERS_FILE),
            text: Text::Embedded(text),
        });
        c.tool_dirs.push(shown("tools"));
        for (rel, text) in EMBEDDED {
            let entry = Entry {
                shown: shown(rel),
                text: Text::Embedded(text),
            };
            if let Some(tool) = rel.strip_prefix("tools/") {
                if tool.ends_with(".json") && !tool.contains('/') {
                    c.tools.insert(tool.to_string(), entry);
                }
            } else if is_case_file(rel) {
                c.cases.insert((*rel).to_string(), entry);
            }
        }
        c
    }

    /// Adds (or replaces) the case files of `dir` and the tool files of `dir/tools`, shown
    /// under `shown`.
    fn add_dir(&mut self, shown: &Path, dir: &Path) -> Result<(), Located> {
        let names = list(dir)
            .map_err(|e| Located::at_start(shown, format!("cannot list the case folder: {e}")))?;
        for name in names {
            if is_case_file(&name) {
                let entry = Entry::disk(shown.join(&name), dir.join(&name));
                self.cases.insert(name, entry);
            } else if let Some(stem) = misnamed_case(&name) {
                // `weather.TOML` is not discovered: say so rather than drop a case in silence.
                let msg =
                    format!("case files end in `.toml` (lower case): rename it to {stem}.toml");
                self.misnamed
                    .push((stem.to_string(), Located::at_start(shown.join(&name), msg)));
            }
        }
        self.tool_dirs.push(shown.join("tools"));
        // A missing tools/ folder is no error: a case naming a tool then says which is missing.
        for name in list(&dir.join("tools")).unwrap_or_default() {
            if name.ends_with(".json") {
                let entry = Entry::disk(
                    shown.join("tools").join(&name),
                    dir.join("tools").join(&name),
                );
                self.tools.insert(name, entry);
            }
        }
        Ok(())
    }

    /// The tool file for tool `name`, or the message saying where it was looked for.
    pub(crate) fn tool(&self, name: &str) -> Result<&Entry, String> {
        let file = format!("{name}.json");
        self.tools.get(&file).ok_or_else(|| {
            let looked: Vec<String> = (self.tool_dirs.iter())
                .map(|d| d.join(&file).display().to_string())
                .collect();
            format!(
                "no tool file {} for tool `{name}`: add it, or fix the name",
                looked.join(" or ")
            )
        })
    }
}

/// A case file's name: `*.toml` other than the provider table.
fn is_case_file(name: &str) -> bool {
    name.ends_with(".toml") && name != PROVIDERS_FILE && !name.contains('/')
}

/// The stem of `name` when it ends in `.toml` in another case (`weather.TOML`).
fn misnamed_case(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (ext != "toml" && ext.eq_ignore_ascii_case("toml")).then_some(stem)
}

/// The names of the entries of `dir`, sorted. A folder named like a case or tool file is kept:
/// reading it is then that file's own error.
fn list(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if let Some(name) = e.file_name().to_str() {
            out.push(name.to_string());
        }
    }
    out.sort();
    Ok(out)
}

/// What `export` did: files written, files already equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    pub written: Vec<PathBuf>,
    pub unchanged: Vec<PathBuf>,
}

/// Writes the embedded corpus under `dir` (`dir/weather.toml`, `dir/tools/…`). A file that
/// exists with other content is left alone and named in the error, and nothing is written,
/// unless `force`; a file with the same content is left as it is.
pub fn export(dir: &Path, force: bool) -> Result<Exported, String> {
    let mut out = Exported::default();
    let mut conflicts = Vec::new();
    let mut todo = Vec::new();
    for (rel, text) in EMBEDDED {
        let path = rel.split('/').fold(dir.to_path_buf(), |p, c| p.join(c));
        match std::fs::read(&path) {
            Ok(have) if have == text.as_bytes() => out.unchanged.push(path),
            Ok(_) if !force => conflicts.push(path.display().to_string()),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{}: cannot read: {e}", path.display()));
            }
            _ => todo.push((path, text)),
        }
    }
    if !conflicts.is_empty() {
        return Err(format!(
            "{} existing file(s) differ from the built-in corpus and were not replaced (nothing was written):\n  {}\nrerun with --force to overwrite them",
            conflicts.len(),
            conflicts.join("\n  ")
        ));
    }
    for (path, text) in todo {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("{}: cannot create: {e}", parent.display()))?;
        }
        let tmp = path.with_extension("tooltape-tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        out.written.push(path);
    }
    Ok(out)
}
