//! The schema sweep (`tooltape server NAME --schemas`): every tool of the corpus forced in a
//! case of its own, written into a scratch folder laid over the corpus (as `--cases` is), so
//! the engine runs them like any case and the scores break the calls down by schema feature.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::case::Case;

/// Every generated case's name starts with this (a suite filter selects them).
pub const SWEEP_PREFIX: &str = "sweep__";

/// The generated cases' folder (removed when dropped) and how many tools it forces.
pub struct Sweep {
    dir: PathBuf,
    pub tools: usize,
}

impl Drop for Sweep {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Sweep {
    /// Writes one case per distinct tool of `cases`: that tool alone, forced, on the APIs a model
    /// server serves, buffered and streamed.
    pub fn write(cases: &[Arc<Case>]) -> Result<Sweep, String> {
        let mut tools = BTreeMap::new();
        for case in cases {
            // A schema the APIs reject (not an object: the invalid-schema cases' tools) is the
            // corpus's subject there, not the sweep's; so is a deferred, namespaced or
            // programmable tool (classes 28 to 30: alone, with no tool search or runner, no API
            // takes it).
            for t in case.tools.iter().filter(|t| swept(t)) {
                tools
                    .entry(t.name.clone())
                    .or_insert_with(|| case.name.clone());
            }
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("tooltape-sweep-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make the sweep's folder {}: {e}", dir.display()))?;
        let sweep = Sweep {
            tools: tools.len(),
            dir,
        };
        for name in tools.keys() {
            let file = sweep.dir.join(format!("{SWEEP_PREFIX}{}.toml", slug(name)));
            std::fs::write(&file, case_text(name))
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
        Ok(sweep)
    }

    /// The folder to lay over the corpus.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Whether the sweep forces `t`: an object schema, neither deferred nor namespaced, and one the
/// model may call itself.
pub(crate) fn swept(t: &crate::model::Tool) -> bool {
    t.parameters["type"] == "object"
        && !t.defer_loading
        && t.namespace.is_none()
        && !t.programmable()
}

/// A case-file name for a tool name (letters, digits and `_`).
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn case_text(tool: &str) -> String {
    // A JSON string is a TOML basic string (the same escapes).
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let quoted = q(tool);
    let forced = q(&format!("forced-{tool}"));
    format!(
        "description = {}\n\
         tools = [{quoted}]\n\
         providers = [\"openai-chat\", \"openai-responses\", \"anthropic\"]\n\
         choices = [{forced}]\n\
         [[messages]]\nrole = \"user\"\ncontent = {}\n",
        q(&format!(
            "Schema sweep: {tool} forced, its arguments judged against its schema"
        )),
        q(&format!("Call the tool {tool} with arguments that fit it."))
    )
}

#[cfg(test)]
mod tests;
