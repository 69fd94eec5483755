//! The matrix document: `{tooltape, date, filter, plan, shard?, systems}`; per system its
//! version, summary, status, root causes (each with its reproducer, as the engine writes them)
//! and one cell per trial. A shard's part says which pieces of the plan it holds.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shard::ShardInfo;
use crate::engine::{Cell, RunStatus, TrialResult};

/// One run of `tooltape matrix` (whole, a shard's part, or parts merged).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// tooltape's version (parts of different versions are not merged).
    pub tooltape: String,
    /// When the run started (UTC, ISO 8601); a merge keeps the earliest part's.
    pub date: String,
    /// The trial filter every suite ran under.
    pub filter: Option<String>,
    /// Every system of the whole run, with its trial count, in run order.
    pub plan: Vec<Planned>,
    /// A shard's part: which shard, and the pieces of the plan it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    pub systems: Vec<SystemEntry>,
}

/// A system of the plan: `KIND:NAME` and how many trials its suite has under the filter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    pub system: String,
    pub trials: usize,
}

/// One system's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemEntry {
    /// `KIND:NAME` (`gateway:litellm`).
    pub system: String,
    /// `gateway` or `client`.
    pub kind: String,
    pub target: String,
    /// The pinned release the profile names.
    pub version: Option<String>,
    /// Its routes, in profile order (the page's columns).
    pub routes: Vec<String>,
    pub summary: String,
    /// `passed`, `failed`, `broken` (the engine's rule), or `error` (could not be set up).
    pub status: String,
    /// Why it could not be set up (no trials then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Known failures naming a cause no trial failed with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale: Vec<String>,
    /// The started process's exit status when it died during the trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited: Option<String>,
    /// The engine's root causes (`engine::RootCause` as JSON: id, title, routes, trials,
    /// known, reproducer), most trials first.
    pub causes: Vec<Value>,
    pub trials: Vec<TrialCell>,
    /// A model server's scores (`server::scores`), per route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<crate::server::Scores>,
}

/// One trial's cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialCell {
    /// `KIND::NAME::case::route::choice::mode`.
    pub name: String,
    pub case: String,
    pub route: String,
    pub choice: String,
    pub mode: String,
    pub cell: Cell,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl TrialCell {
    /// The cell of an engine result.
    pub(super) fn of(r: &TrialResult) -> TrialCell {
        TrialCell {
            name: r.name.clone(),
            case: r.id.case.clone(),
            route: r.id.route.clone(),
            choice: r.id.choice.clone(),
            mode: r.id.mode.slug().to_string(),
            cell: r.cell.clone(),
            cause: r.cause.clone(),
        }
    }
}

/// The word of a run status in the document.
pub(super) fn status_word(s: RunStatus) -> &'static str {
    match s {
        RunStatus::Passed => "passed",
        RunStatus::Failed => "failed",
        RunStatus::Broken => "broken",
    }
}

impl SystemEntry {
    /// Its status, summary and stale known failures again from its cells (after a merge).
    pub(super) fn settle(&mut self) {
        let cells: Vec<&Cell> = self.trials.iter().map(|t| &t.cell).collect();
        self.summary = crate::engine::summary_of(cells.iter().copied());
        self.status = if self.error.is_some() {
            "error".into()
        } else {
            let s =
                crate::engine::status_of(&cells, self.stale.len(), self.exited.is_some(), false);
            status_word(s).into()
        };
    }
}

impl Document {
    /// The worst status over the systems: 2 when one could not be set up or broke, 1 when one
    /// failed, 0 when every result is expected.
    pub fn exit_code(&self) -> i32 {
        let worst = |w: &str| self.systems.iter().any(|s| s.status == w);
        if worst("error") || worst("broken") {
            2
        } else if worst("failed") {
            1
        } else {
            0
        }
    }
}

/// Reads a matrix document (a part, a merge or a whole run).
pub fn read(path: &Path) -> Result<Document, String> {
    let text = crate::input::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a tooltape matrix document: {e}", path.display()))
}
