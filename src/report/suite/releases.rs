//! One suite across releases as text: the root causes × releases table (terminal, Markdown,
//! HTML, JSON, JUnit XML) and what a bisection found. The table and the bisection are
//! `system::releases`'.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use crate::junit::{JunitCase, JunitOutcome, junit};
use crate::system::{Bisection, Presence, ReleaseTable};
use crate::text::{html_escape as esc, md_cell};

impl ReleaseTable {
    fn heading(&self) -> String {
        format!(
            "{} {}: {} root cause(s) across {} release(s)",
            self.kind.slug(),
            self.target,
            self.causes.len(),
            self.releases.len()
        )
    }

    /// The table for a terminal: one line a cause, one column a release.
    pub fn terminal(&self) -> String {
        let mut out = format!("{}\n", self.heading());
        let width = |v: &str| v.len().max("not applicable".len());
        let _ = write!(out, "{:<20}", "cause");
        for r in &self.releases {
            let _ = write!(out, "  {:<w$}", r.version, w = width(&r.version));
        }
        out.push('\n');
        for c in &self.causes {
            let _ = write!(out, "{:<20}", c.id);
            for (r, p) in self.releases.iter().zip(&c.releases) {
                let _ = write!(out, "  {:<w$}", p.as_str(), w = width(&r.version));
            }
            let _ = writeln!(out, "  {}", c.title);
        }
        for r in &self.releases {
            let what = r.error.as_deref().or(r.summary.as_deref()).unwrap_or("");
            let _ = writeln!(out, "{}: {what}", r.version);
        }
        out
    }

    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = format!("## {}\n\n| cause | title |", self.heading());
        for r in &self.releases {
            let _ = write!(out, " {} |", r.version);
        }
        out.push_str("\n| --- | --- |");
        out.push_str(&" --- |".repeat(self.releases.len()));
        out.push('\n');
        for c in &self.causes {
            let _ = write!(out, "| `{}` | {} |", c.id, md_cell(&c.title));
            for p in &c.releases {
                let _ = write!(out, " {} |", p.as_str());
            }
            out.push('\n');
        }
        out.push('\n');
        for r in &self.releases {
            let what = r.error.as_deref().or(r.summary.as_deref()).unwrap_or("");
            let _ = writeln!(out, "- {}: {}", r.version, what.replace('\n', " "));
        }
        out
    }

    /// The table as one HTML page.
    pub fn html(&self) -> String {
        let mut out = format!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head><body>\n<h1>{}</h1>\n<table>\n<tr><th>cause</th><th>title</th>",
            esc(&self.heading()),
            esc(&self.heading())
        );
        for r in &self.releases {
            let _ = write!(out, "<th>{}</th>", esc(&r.version));
        }
        out.push_str("</tr>\n");
        for c in &self.causes {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td>",
                esc(&c.id),
                esc(&c.title)
            );
            for p in &c.releases {
                let _ = write!(out, "<td>{}</td>", p.as_str());
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n</body></html>");
        out
    }

    /// The table as one JSON document: `{kind, target, releases: [{version, summary, error?}],
    /// causes: [{id, title, severity, releases: {VERSION: presence}}]}`.
    pub fn json(&self) -> Value {
        let causes: Vec<Value> = self
            .causes
            .iter()
            .map(|c| {
                let by: serde_json::Map<String, Value> = self
                    .releases
                    .iter()
                    .zip(&c.releases)
                    .map(|(r, p)| (r.version.clone(), json!(p)))
                    .collect();
                json!({"id": c.id, "title": c.title, "severity": c.severity, "releases": by})
            })
            .collect();
        json!({
            "kind": self.kind,
            "target": self.target,
            "releases": self.releases,
            "causes": causes,
        })
    }

    /// The table as JUnit XML: one case a cause and release, failed where present, skipped
    /// where not applicable.
    pub fn junit(&self, timestamp: &str) -> String {
        let mut cases = Vec::new();
        for c in &self.causes {
            for (r, p) in self.releases.iter().zip(&c.releases) {
                let outcome = match p {
                    Presence::Present => JunitOutcome::Failed {
                        message: c.title.clone(),
                        detail: format!("{} in {} {}", c.id, self.target, r.version),
                    },
                    Presence::Absent => JunitOutcome::Passed,
                    Presence::NotApplicable => JunitOutcome::Skipped {
                        message: r
                            .error
                            .clone()
                            .unwrap_or_else(|| "none of its trials applies".into()),
                    },
                };
                cases.push(JunitCase {
                    classname: format!("{}.{}", self.target, r.version),
                    name: c.id.clone(),
                    time: Duration::ZERO,
                    outcome,
                });
            }
        }
        junit(&format!("{}-releases", self.target), timestamp, &cases)
    }
}

impl Bisection {
    /// One paragraph: the answer, then each release run.
    pub fn terminal(&self) -> String {
        let mut out = match (&self.last_before, &self.first_after) {
            (Some(a), Some(b)) => format!(
                "{} {} in {b} (last release without the change: {a})\n",
                self.cause,
                if self.appears {
                    "appears"
                } else {
                    "disappears"
                }
            ),
            _ => format!(
                "{} is {} at both ends ({} … {}): no release changes it\n",
                self.cause,
                if self.appears { "absent" } else { "present" },
                self.releases.first().map_or("", String::as_str),
                self.releases.last().map_or("", String::as_str)
            ),
        };
        let _ = writeln!(
            out,
            "{} release(s) listed, {} run:",
            self.releases.len(),
            self.tested.len()
        );
        for (v, p) in &self.tested {
            let _ = writeln!(out, "  {v}: {}", p.as_str());
        }
        out
    }
}
