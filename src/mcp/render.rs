//! The `tooltape mcp` report in its four forms: a terminal table with the reasons under it,
//! Markdown, one JSON document, JUnit XML (a test case per tool and target).

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use super::connect::{Listing, ServerInfo};
use super::verdict::{Target, ToolVerdict};
use crate::junit::{JunitCase, JunitOutcome, junit as junit_xml};
use crate::text::md_cell;

/// One tool's verdicts, in [`Target::ALL`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolReport {
    pub name: String,
    pub verdicts: Vec<(Target, ToolVerdict)>,
}

/// The whole report: the server's listing and every tool's verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub server: ServerInfo,
    /// Set when a limit cut the listing short (which one).
    pub truncated: Option<String>,
    pub tools: Vec<ToolReport>,
}

impl Report {
    /// Judges every listed tool for every target; an oversized schema is refused everywhere.
    pub fn of(listing: &Listing) -> Report {
        let tools = listing
            .tools
            .iter()
            .map(|t| ToolReport {
                name: t.tool.name.clone(),
                verdicts: match t.oversized_schema {
                    Some(size) => Target::ALL
                        .into_iter()
                        .map(|target| {
                            let reason = format!(
                                "the input schema is {size} bytes, over tooltape's limit; not judged"
                            );
                            (target, ToolVerdict::Refused { reason })
                        })
                        .collect(),
                    None => super::verdict::judge_all(&t.tool),
                },
            })
            .collect();
        Report {
            server: listing.server.clone(),
            truncated: listing.truncated.clone(),
            tools,
        }
    }

    /// The (tool, target, reason) of every refusal for one of `targets`.
    pub fn refusals_for(&self, targets: &[Target]) -> Vec<(&str, Target, &str)> {
        let mut out = Vec::new();
        for t in &self.tools {
            for (target, v) in &t.verdicts {
                if let ToolVerdict::Refused { reason } = v
                    && targets.contains(target)
                {
                    out.push((t.name.as_str(), *target, reason.as_str()));
                }
            }
        }
        out
    }

    /// Counts of each verdict per target: `{target: {as-written: n, …}}`.
    fn summary(&self) -> Value {
        let mut out = serde_json::Map::new();
        for target in Target::ALL {
            let mut counts = serde_json::Map::new();
            for word in ["as-written", "lossless", "lossy", "refused"] {
                let n = self
                    .tools
                    .iter()
                    .flat_map(|t| &t.verdicts)
                    .filter(|(t, v)| *t == target && v.word() == word)
                    .count();
                counts.insert(word.into(), json!(n));
            }
            out.insert(target.slug().into(), Value::Object(counts));
        }
        Value::Object(out)
    }
}

/// The report as one JSON document (pretty, newline-terminated).
pub fn json(report: &Report) -> String {
    let tools: Vec<Value> = report
        .tools
        .iter()
        .map(|t| {
            let verdicts: serde_json::Map<String, Value> = t
                .verdicts
                .iter()
                .map(|(target, v)| (target.slug().to_string(), json!(v)))
                .collect();
            json!({"name": t.name, "verdicts": verdicts})
        })
        .collect();
    let doc = json!({
        "server": {"name": report.server.name, "version": report.server.version},
        "targets": Target::ALL.map(Target::slug),
        "truncated": report.truncated,
        "tools": tools,
        "summary": report.summary(),
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// A short cell for tables: `ok`, `~`, `lossy`, `REFUSED`.
fn cell(v: &ToolVerdict) -> &'static str {
    match v {
        ToolVerdict::AsWritten => "ok",
        ToolVerdict::Lossless { .. } => "~",
        ToolVerdict::Lossy { .. } => "lossy",
        ToolVerdict::Refused { .. } => "REFUSED",
    }
}

/// The detail line of a verdict, or `None` for one sent as written.
fn detail(v: &ToolVerdict) -> Option<String> {
    match v {
        ToolVerdict::AsWritten => None,
        ToolVerdict::Lossless { changes } => Some(format!("lossless: {}", changes.join(", "))),
        ToolVerdict::Lossy { lost, .. } => Some(format!("lossy: loses {}", lost.join(", "))),
        ToolVerdict::Refused { reason } => Some(format!("refused: {reason}")),
    }
}

fn header(report: &Report) -> String {
    let mut s = format!(
        "MCP server {} {}: {} tools",
        printable(&report.server.name),
        printable(&report.server.version),
        report.tools.len()
    );
    if let Some(why) = &report.truncated {
        let _ = write!(s, " (listing cut short: {why})");
    }
    s
}

/// The terminal table (`ok` sent as written, `~` lossless, `lossy`, `REFUSED`), then one line
/// per verdict that is not `ok`.
pub fn terminal(report: &Report) -> String {
    let mut out = header(report);
    out.push_str("\n\n");
    let width = report
        .tools
        .iter()
        .map(|t| printable(&t.name).chars().count())
        .chain([4])
        .max()
        .unwrap_or(4)
        .min(48);
    let _ = write!(out, "{:width$}", "tool");
    for t in Target::ALL {
        let _ = write!(out, "  {}", t.slug());
    }
    out.push('\n');
    for tool in &report.tools {
        let name: String = printable(&tool.name).chars().take(width).collect();
        let _ = write!(out, "{name:width$}");
        for (t, v) in &tool.verdicts {
            let _ = write!(out, "  {:w$}", cell(v), w = t.slug().len());
        }
        out.push('\n');
    }
    out.push('\n');
    for (name, t, d) in details(report) {
        let _ = writeln!(out, "{} → {}: {}", printable(name), t.slug(), printable(&d));
    }
    out
}

/// (tool, target, detail line) of every verdict that is not as written, in report order.
fn details(report: &Report) -> impl Iterator<Item = (&str, Target, String)> {
    report.tools.iter().flat_map(|tool| {
        tool.verdicts
            .iter()
            .filter_map(|(t, v)| detail(v).map(|d| (tool.name.as_str(), *t, d)))
    })
}

/// The same as Markdown: a table and a list of the reasons.
pub fn markdown(report: &Report) -> String {
    let mut out = format!("## {}\n\n| tool |", header(report));
    for t in Target::ALL {
        let _ = write!(out, " {} |", t.slug());
    }
    out.push_str("\n| --- |");
    out.push_str(&" --- |".repeat(Target::ALL.len()));
    out.push('\n');
    for tool in &report.tools {
        let _ = write!(out, "| `{}` |", md_escape(&tool.name));
        for (_, v) in &tool.verdicts {
            let _ = write!(out, " {} |", cell(v));
        }
        out.push('\n');
    }
    out.push('\n');
    for (name, t, d) in details(report) {
        let _ = writeln!(
            out,
            "- `{}` → {}: {}",
            md_escape(name),
            t.slug(),
            md_escape(&d)
        );
    }
    out
}

fn md_escape(s: &str) -> String {
    md_cell(&printable(s))
}

/// `s` safe for a terminal or a Markdown line: what a server sends is untrusted, so control
/// characters (escape sequences, line breaks) are written as `\u{XX}`.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:02x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// JUnit XML: a case per tool and target (classname the target); refused fails, lossy is
/// skipped with what is lost, the rest pass.
pub fn junit(report: &Report, timestamp: &str) -> String {
    let mut cases = Vec::new();
    for tool in &report.tools {
        for (t, v) in &tool.verdicts {
            let outcome = match v {
                ToolVerdict::AsWritten | ToolVerdict::Lossless { .. } => JunitOutcome::Passed,
                ToolVerdict::Lossy { .. } => JunitOutcome::Skipped {
                    message: detail(v).unwrap_or_default(),
                },
                ToolVerdict::Refused { reason } => JunitOutcome::Failed {
                    message: "refused".into(),
                    detail: reason.clone(),
                },
            };
            cases.push(JunitCase {
                classname: format!("mcp.{}", t.slug()),
                name: tool.name.clone(),
                time: Duration::ZERO,
                outcome,
            });
        }
    }
    junit_xml(
        &format!("tooltape mcp {}", report.server.name),
        timestamp,
        &cases,
    )
}
