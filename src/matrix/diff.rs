//! Between two matrix runs, per system: the root causes that appeared (a regression), that
//! disappeared, and that failed on other routes; as Markdown or JSON, the nightly job's report.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::document::{Document, SystemEntry};
use crate::text::md_cell;

/// What changed between two runs.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// `DATE (tooltape VERSION)` of each run.
    pub old: String,
    pub new: String,
    /// Systems with a change, in the new run's order (then those only the old run had).
    pub systems: Vec<SystemDiff>,
    /// Root causes that appeared, over every system.
    pub appeared: usize,
}

/// One system's changes.
#[derive(Clone, Debug, Serialize)]
pub struct SystemDiff {
    pub system: String,
    /// `OLD → NEW` when the pinned release changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Only in one of the runs: `added` or `removed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence: Option<String>,
    pub appeared: Vec<CauseLine>,
    pub disappeared: Vec<CauseLine>,
    pub changed_routes: Vec<RouteChange>,
}

/// A root cause as the report lists it.
#[derive(Clone, Debug, Serialize)]
pub struct CauseLine {
    pub id: String,
    pub title: String,
    pub routes: Vec<String>,
    pub trials: usize,
}

/// A root cause met in both runs on other routes.
#[derive(Clone, Debug, Serialize)]
pub struct RouteChange {
    pub id: String,
    pub title: String,
    pub old: Vec<String>,
    pub new: Vec<String>,
}

fn line(c: &Value) -> CauseLine {
    CauseLine {
        id: field(c, "id"),
        title: field(c, "title"),
        routes: routes(c),
        trials: c
            .get("trials")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
    }
}

fn field(c: &Value, key: &str) -> String {
    c.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

pub(super) fn routes(c: &Value) -> Vec<String> {
    (c.get("routes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|r| r.as_str().map(str::to_string))
    .collect()
}

/// The changes from `old` to `new`.
pub fn diff(old: &Document, new: &Document) -> Diff {
    let mut systems = Vec::new();
    let find = |d: &'_ Document, s: &str| d.systems.iter().find(|e| e.system == s).cloned();
    let mut names: Vec<String> = new.systems.iter().map(|e| e.system.clone()).collect();
    for e in &old.systems {
        if !names.contains(&e.system) {
            names.push(e.system.clone());
        }
    }
    for name in names {
        let d = system(&name, find(old, &name).as_ref(), find(new, &name).as_ref());
        let changed = d.version.is_some()
            || d.presence.is_some()
            || !d.appeared.is_empty()
            || !d.disappeared.is_empty()
            || !d.changed_routes.is_empty();
        if changed {
            systems.push(d);
        }
    }
    let appeared = systems.iter().map(|s| s.appeared.len()).sum();
    let run = |d: &Document| format!("{} (tooltape {})", d.date, d.tooltape);
    Diff {
        old: run(old),
        new: run(new),
        systems,
        appeared,
    }
}

/// One system's diff (either side may be absent).
fn system(name: &str, old: Option<&SystemEntry>, new: Option<&SystemEntry>) -> SystemDiff {
    let none: Vec<Value> = Vec::new();
    let causes = |e: Option<&SystemEntry>| e.map_or(none.clone(), |e| e.causes.clone());
    let (a, b) = (causes(old), causes(new));
    let has = |list: &[Value], id: &str| list.iter().find(|c| field(c, "id") == id).cloned();
    let mut out = SystemDiff {
        system: name.to_string(),
        version: None,
        presence: match (old, new) {
            (None, Some(_)) => Some("added".into()),
            (Some(_), None) => Some("removed".into()),
            _ => None,
        },
        appeared: Vec::new(),
        disappeared: Vec::new(),
        changed_routes: Vec::new(),
    };
    if let (Some(o), Some(n)) = (old, new)
        && o.version != n.version
    {
        let v = |e: &SystemEntry| e.version.clone().unwrap_or_else(|| "unpinned".into());
        out.version = Some(format!("{} → {}", v(o), v(n)));
    }
    for c in &b {
        match has(&a, &field(c, "id")) {
            None => out.appeared.push(line(c)),
            Some(before) => {
                let (mut r0, mut r1) = (routes(&before), routes(c));
                r0.sort();
                r1.sort();
                if r0 != r1 {
                    out.changed_routes.push(RouteChange {
                        id: field(c, "id"),
                        title: field(c, "title"),
                        old: r0,
                        new: r1,
                    });
                }
            }
        }
    }
    for c in &a {
        if has(&b, &field(c, "id")).is_none() {
            out.disappeared.push(line(c));
        }
    }
    out
}

impl Diff {
    /// The process's exit code: 1 when a root cause appeared (a regression), 0 otherwise.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.appeared > 0)
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# tooltape matrix: what changed\n\nfrom {} to {}\n\n",
            self.old, self.new
        );
        if self.systems.is_empty() {
            s.push_str("No root cause appeared, disappeared or changed routes.\n");
            return s;
        }
        for d in &self.systems {
            let _ = writeln!(s, "## {}\n", d.system);
            if let Some(p) = &d.presence {
                let _ = writeln!(s, "- the system was {p}");
            }
            if let Some(v) = &d.version {
                let _ = writeln!(s, "- version {v}");
            }
            for (what, list) in [("appeared", &d.appeared), ("disappeared", &d.disappeared)] {
                for c in list {
                    let _ = writeln!(
                        s,
                        "- {what}: `{}` {} ({} trials; {})",
                        c.id,
                        md_cell(&c.title),
                        c.trials,
                        c.routes.join(", ")
                    );
                }
            }
            for c in &d.changed_routes {
                let _ = writeln!(
                    s,
                    "- routes changed: `{}` {}: {} → {}",
                    c.id,
                    md_cell(&c.title),
                    c.old.join(", "),
                    c.new.join(", ")
                );
            }
            s.push('\n');
        }
        let _ = writeln!(s, "**{} root cause(s) appeared.**", self.appeared);
        s
    }
}
