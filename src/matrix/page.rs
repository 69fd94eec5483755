//! The field as one page, HTML or Markdown: rows the case classes of `cases/README.md` and the
//! cases within them, columns the systems by route; each cell pass, known failure or failure
//! (its root cause, linked to its reproducer below), refused or not expressible; a summary line
//! per system; the date and versions in the title. Pure.

use std::fmt::Write as _;

use serde_json::Value;

use super::document::{Document, SystemEntry};
use crate::engine::Cell;
use crate::text::{html_escape as esc, md_cell};

/// A case class of the corpus: its number, what it covers, its cases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Class {
    pub(super) name: String,
    pub(super) what: String,
    pub(super) cases: Vec<String>,
}

/// The classes of `cases/README.md`'s table (`| N | what | `case`, … | …`), then one
/// `other` class for the document's cases no class lists.
pub(super) fn classes(readme: &str, doc: &Document) -> Vec<Class> {
    let mut out: Vec<Class> = Vec::new();
    for line in readme.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        if cols.len() < 4 || cols[1].parse::<u32>().is_err() {
            continue;
        }
        let cases = cols[3]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        out.push(Class {
            name: format!("class {}", cols[1]),
            what: cols[2].to_string(),
            cases,
        });
    }
    let mut other: Vec<String> = Vec::new();
    for t in doc.systems.iter().flat_map(|s| &s.trials) {
        let listed = out.iter().any(|c| c.cases.contains(&t.case));
        if !listed && !other.contains(&t.case) {
            other.push(t.case.clone());
        }
    }
    if !other.is_empty() {
        other.sort();
        out.push(Class {
            name: "other".into(),
            what: "cases outside the class table (strict schemas, text protocol, hosted search, …)"
                .into(),
            cases: other,
        });
    }
    out
}

/// The classes of the built-in corpus's README.
fn corpus_classes(doc: &Document) -> Vec<Class> {
    let readme = (crate::case::EMBEDDED.iter())
        .find(|(p, _)| *p == "README.md")
        .map_or("", |(_, t)| *t);
    classes(readme, doc)
}

/// What a cell of the page shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Mark {
    /// No trial: the case does not run on this route.
    Empty,
    Pass,
    /// Every trial refused by design or not expressible in the caller's format.
    NotExpressible,
    /// A known failure, with its root cause.
    Known(Option<String>),
    /// An unexpected failure, with its root cause.
    Fail(Option<String>),
}

/// The mark of `system`'s trials of `cases` on `route`: a failure over a known failure over a
/// pass over not expressible.
pub(super) fn mark(system: &SystemEntry, cases: &[String], route: &str) -> Mark {
    let mut m = Mark::Empty;
    for t in (system.trials.iter()).filter(|t| t.route == route && cases.contains(&t.case)) {
        let this = match &t.cell {
            Cell::Pass => Mark::Pass,
            Cell::Declined(_) | Cell::NotApplicable(_) => Mark::NotExpressible,
            Cell::KnownFailure(_) => Mark::Known(t.cause.clone()),
            Cell::Fail(_) | Cell::Broken(_) => Mark::Fail(t.cause.clone()),
        };
        if rank(&this) > rank(&m) {
            m = this;
        }
    }
    m
}

fn rank(m: &Mark) -> u8 {
    match m {
        Mark::Empty => 0,
        Mark::NotExpressible => 1,
        Mark::Pass => 2,
        Mark::Known(_) => 3,
        Mark::Fail(_) => 4,
    }
}

/// The anchor of a system's root cause.
fn anchor(system: &str, cause: &str) -> String {
    format!("cause-{}-{cause}", system.replace(':', "-"))
}

fn title(doc: &Document) -> String {
    format!(
        "tooltape matrix {} (tooltape {})",
        doc.date.get(..10).unwrap_or(&doc.date),
        doc.tooltape
    )
}

fn version(s: &SystemEntry) -> String {
    s.version.clone().unwrap_or_else(|| "unpinned".into())
}

fn field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

const CSS: &str = "body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#1d2330}\
table{border-collapse:collapse}th,td{border:1px solid #d9dde4;padding:2px 4px;white-space:nowrap}\
td{font-size:11px;text-align:center}td:first-child{text-align:left;white-space:normal;min-width:260px}\
th{background:#f0f2f5;font-weight:600}th.route{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:500;font-size:11px}\
tr.class td{background:#e8ecf3;font-weight:600}\
td.pass{background:#d7f5dd}td.known{background:#fff1c2}td.fail{background:#ffd0d0}\
td.na{background:#eceef2;color:#6a7282}a{color:inherit}pre{white-space:pre-wrap;background:#f4f5f7;padding:6px}";

/// The page as HTML (well-formed: every element closed).
pub fn html(doc: &Document) -> String {
    let classes = corpus_classes(doc);
    let mut s = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>{t}</title><style>{CSS}</style></head><body><h1>{t}</h1>",
        t = esc(&title(doc))
    );
    let _ = write!(
        s,
        "<p>run {}{}</p><ul class=\"systems\">",
        esc(&doc.date),
        doc.filter
            .as_ref()
            .map(|f| format!(", trials matching <code>{}</code>", esc(f)))
            .unwrap_or_default()
    );
    for sys in &doc.systems {
        let _ = write!(
            s,
            "<li data-system=\"{n}\"><b>{n}</b> {v}: {sum}{err}</li>",
            n = esc(&sys.system),
            v = esc(&version(sys)),
            sum = esc(&sys.summary),
            err = sys
                .error
                .as_ref()
                .map(|e| format!(" (not run: {})", esc(e)))
                .unwrap_or_default()
        );
    }
    s.push_str("</ul>");
    scores_html(&mut s, doc);
    s.push_str("<table><tr><th rowspan=\"2\">class / case</th>");
    for sys in &doc.systems {
        let _ = write!(
            s,
            "<th colspan=\"{}\">{} {}</th>",
            sys.routes.len().max(1),
            esc(&sys.system),
            esc(&version(sys))
        );
    }
    s.push_str("</tr><tr>");
    for sys in &doc.systems {
        for r in &sys.routes {
            let _ = write!(s, "<th class=\"route\">{}</th>", esc(r));
        }
        if sys.routes.is_empty() {
            s.push_str("<th></th>");
        }
    }
    s.push_str("</tr>");
    for class in &classes {
        let _ = write!(
            s,
            "<tr class=\"class\" data-class=\"{}\"><td title=\"{}\">{} — {}</td>",
            esc(&class.name),
            esc(&class.what),
            esc(&class.name),
            esc(&class.what)
        );
        cells_html(&mut s, doc, &class.cases);
        s.push_str("</tr>");
        for case in &class.cases {
            let _ = write!(
                s,
                "<tr data-case=\"{c}\"><td><code>{c}</code></td>",
                c = esc(case)
            );
            cells_html(&mut s, doc, std::slice::from_ref(case));
            s.push_str("</tr>");
        }
    }
    s.push_str("</table><h2>Root causes and their reproducers</h2>");
    for c in cause_texts(doc) {
        let _ = write!(
            s,
            "<div class=\"cause\" id=\"{a}\"><h3>{sys} <code>{id}</code></h3><p>{title}</p><p>routes: {routes}</p><pre>{cmd}</pre><p>expected: {exp}</p></div>",
            a = esc(&c.anchor),
            sys = esc(c.system),
            id = esc(&c.id),
            title = esc(&c.title),
            routes = esc(&c.routes),
            cmd = esc(&c.command),
            exp = esc(&c.expected),
        );
    }
    s.push_str("</body></html>\n");
    s
}

/// The model servers' scores: one row per server and route.
fn scores_html(s: &mut String, doc: &Document) {
    let servers: Vec<_> = (doc.systems.iter())
        .filter_map(|sys| Some((sys, sys.scores.as_ref()?)))
        .collect();
    if servers.is_empty() {
        return;
    }
    s.push_str("<h2>Model servers: scores</h2><table class=\"scores\"><tr><th>server</th><th>route</th><th>tool_choice honoured</th><th>schema-valid calls</th><th>stream = buffered</th><th>next round accepted</th></tr>");
    for (sys, scores) in servers {
        for r in &scores.routes {
            let cells = [
                r.tool_choice_honoured,
                r.schema_valid_calls,
                r.stream_equals_buffered,
                r.next_round_accepted,
            ];
            let _ = write!(
                s,
                "<tr data-scores=\"{n}\"><td>{n} {v}</td><td>{route}</td>",
                n = esc(&sys.system),
                v = esc(&version(sys)),
                route = esc(&r.route),
            );
            for c in cells {
                let _ = write!(s, "<td>{}</td>", esc(&c.cell()));
            }
            s.push_str("</tr>");
        }
    }
    s.push_str("</table>");
}

/// One row's cells, every system's routes in order.
fn cells_html(s: &mut String, doc: &Document, cases: &[String]) {
    for sys in &doc.systems {
        let routes = if sys.routes.is_empty() {
            vec![String::new()]
        } else {
            sys.routes.clone()
        };
        for route in &routes {
            let (class, text) = match mark(sys, cases, route) {
                Mark::Empty => ("", String::new()),
                Mark::Pass => ("pass", "pass".into()),
                Mark::NotExpressible => ("na", "n/e".into()),
                Mark::Known(c) => ("known", link(sys, c.as_deref(), "known")),
                Mark::Fail(c) => ("fail", link(sys, c.as_deref(), "FAIL")),
            };
            let _ = write!(s, "<td class=\"{class}\">{text}</td>");
        }
    }
}

fn link(sys: &SystemEntry, cause: Option<&str>, word: &str) -> String {
    match cause {
        Some(c) => format!(
            "<a href=\"#{}\" title=\"{}\">{word}</a>",
            esc(&anchor(&sys.system, c)),
            esc(c)
        ),
        None => word.to_string(),
    }
}

/// The page as Markdown: the same rows and columns (`pass`, `known`/`FAIL` linked to the cause,
/// `n/e` not expressible, blank when the case does not run on the route).
pub fn markdown(doc: &Document) -> String {
    let classes = corpus_classes(doc);
    let mut s = format!("# {}\n\n", title(doc));
    for sys in &doc.systems {
        let _ = writeln!(s, "- **{}** {}: {}", sys.system, version(sys), sys.summary);
    }
    s.push_str("\n| class / case |");
    let mut cols = 0;
    for sys in &doc.systems {
        for r in &sys.routes {
            let _ = write!(s, " {} {} |", sys.system, r);
            cols += 1;
        }
    }
    s.push_str("\n| --- |");
    s.push_str(&" --- |".repeat(cols));
    s.push('\n');
    let cell = |sys: &SystemEntry, cases: &[String], route: &str| match mark(sys, cases, route) {
        Mark::Empty => String::new(),
        Mark::Pass => "pass".into(),
        Mark::NotExpressible => "n/e".into(),
        Mark::Known(Some(c)) => format!("[known](#{})", anchor(&sys.system, &c)),
        Mark::Fail(Some(c)) => format!("[FAIL](#{})", anchor(&sys.system, &c)),
        Mark::Known(None) => "known".into(),
        Mark::Fail(None) => "FAIL".into(),
    };
    for class in &classes {
        let rows = std::iter::once((
            format!("**{}** {}", class.name, md_cell(&class.what)),
            class.cases.clone(),
        ))
        .chain(
            class
                .cases
                .iter()
                .map(|c| (format!("`{c}`"), vec![c.clone()])),
        );
        for (label, cases) in rows {
            let _ = write!(s, "| {label} |");
            for sys in &doc.systems {
                for r in &sys.routes {
                    let _ = write!(s, " {} |", cell(sys, &cases, r));
                }
            }
            s.push('\n');
        }
    }
    s.push_str("\n## Root causes\n");
    for c in cause_texts(doc) {
        let _ = write!(
            s,
            "\n<a id=\"{}\"></a>\n### {} `{}`\n\n{}\n\nroutes: {}\n\n```\n{}\n```\n\nexpected: {}\n",
            c.anchor, c.system, c.id, c.title, c.routes, c.command, c.expected
        );
    }
    s
}

/// A root cause as both pages show it under their table: its anchor, system, id, title, routes
/// and its reproducer's command and expectation.
struct CauseText<'a> {
    anchor: String,
    system: &'a str,
    id: String,
    title: String,
    routes: String,
    command: String,
    expected: String,
}

/// Every system's root causes, in order, read once from the document's JSON.
fn cause_texts(doc: &Document) -> impl Iterator<Item = CauseText<'_>> {
    doc.systems.iter().flat_map(|sys| {
        sys.causes.iter().map(|c| {
            let r = c.get("reproducer").cloned().unwrap_or_default();
            let id = field(c, "id");
            CauseText {
                anchor: anchor(&sys.system, &id),
                system: &sys.system,
                title: field(c, "title"),
                routes: super::diff::routes(c).join(", "),
                command: field(&r, "command"),
                expected: field(&r, "expected"),
                id,
            }
        })
    })
}
