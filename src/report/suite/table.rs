//! A suite's trial table as text: rows case × choice × mode, columns routes; terminal, Markdown,
//! HTML; JUnit XML (one test case per trial). The closing `N passed, N failed` line is the
//! engine's (`engine::summary`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::engine::{Cell, TrialResult, summary};
use crate::junit::{JunitCase, JunitOutcome};
use crate::text::{html_escape as esc, md_cell};

fn short(cell: &Cell) -> String {
    match cell {
        Cell::Pass => "pass".into(),
        Cell::Fail(m) => format!("FAIL: {m}"),
        Cell::KnownFailure(_) => "known".into(),
        Cell::Declined(_) => "declined".into(),
        Cell::NotApplicable(_) => "n/a".into(),
        Cell::Broken(m) => format!("BROKEN: {m}"),
    }
}

/// The trials laid out: rows and columns in the order the trials first name them.
struct Grid<'a> {
    rows: Vec<String>,
    cols: Vec<String>,
    cells: BTreeMap<(String, String), &'a TrialResult>,
}

fn grid(results: &[TrialResult]) -> Grid<'_> {
    let mut g = Grid {
        rows: Vec::new(),
        cols: Vec::new(),
        cells: BTreeMap::new(),
    };
    for r in results {
        let (row, col) = (r.id.row(), &r.id.route);
        if !g.rows.contains(&row) {
            g.rows.push(row.clone());
        }
        if !g.cols.contains(col) {
            g.cols.push(col.clone());
        }
        g.cells.insert((row, col.clone()), r);
    }
    g
}

impl<'a> Grid<'a> {
    /// Row `row`'s cells, column by column: each column's name and its trial, if it has one.
    fn line<'g>(
        &'g self,
        row: &'g str,
    ) -> impl Iterator<Item = (&'g str, Option<&'a TrialResult>)> {
        self.cols.iter().map(move |c| {
            let cell = self.cells.get(&(row.to_string(), c.clone()));
            (c.as_str(), cell.copied())
        })
    }
}

/// The trial table in Markdown, then each trial's finding under `## Findings`.
pub(super) fn markdown(results: &[TrialResult]) -> String {
    let g = grid(results);
    let mut s = String::new();
    let _ = write!(s, "| trial |");
    for c in &g.cols {
        let _ = write!(s, " {c} |");
    }
    let _ = write!(s, "\n| --- |");
    for _ in &g.cols {
        let _ = write!(s, " --- |");
    }
    s.push('\n');
    for row in &g.rows {
        let _ = write!(s, "| `{row}` |");
        for (_, r) in g.line(row) {
            let cell = r.map_or_else(String::new, |r| match &r.cell {
                Cell::Fail(_) | Cell::Broken(_) => "**fail**".into(),
                other => short(other),
            });
            let _ = write!(s, " {} |", md_cell(&cell));
        }
        s.push('\n');
    }
    let _ = writeln!(s, "\n## Findings\n");
    for r in results {
        let detail = match &r.cell {
            Cell::Pass | Cell::NotApplicable(_) => continue,
            Cell::Fail(m) | Cell::Broken(m) => format!("fail: {m}"),
            Cell::KnownFailure(m) => format!("known-failure: {m}"),
            Cell::Declined(m) => format!("declined: {m}"),
        };
        let _ = writeln!(s, "- `{}`: {}", r.id.key(), md_cell(&detail));
    }
    s
}

/// The terminal table: one line per row, `route=cell` for each non-pass cell, then failures.
pub fn terminal(results: &[TrialResult]) -> String {
    let g = grid(results);
    let width = g.rows.iter().map(String::len).max().unwrap_or(5);
    let mut s = String::new();
    let _ = write!(s, "{:width$}", "");
    for c in &g.cols {
        let _ = write!(s, " {c:^w$}", w = c.chars().count().max(5));
    }
    s.push('\n');
    for row in &g.rows {
        let _ = write!(s, "{row:width$}");
        for (c, r) in g.line(row) {
            let mark = r.map_or("", |r| match r.cell {
                Cell::Pass => "ok",
                Cell::Fail(_) => "FAIL",
                Cell::Broken(_) => "BROKEN",
                Cell::KnownFailure(_) => "known",
                Cell::Declined(_) => "declined",
                Cell::NotApplicable(_) => "-",
            });
            let _ = write!(s, " {mark:^w$}", w = c.chars().count().max(5));
        }
        s.push('\n');
    }
    for r in results {
        if !r.cell.expected() {
            let _ = writeln!(s, "{}: {}", r.name, short(&r.cell));
        }
    }
    s
}

/// HTML table (same cells as Markdown) of the run of `name`.
pub fn html(name: &str, results: &[TrialResult]) -> String {
    let g = grid(results);
    let mut s = format!(
        "<!doctype html><meta charset=utf-8><title>{name}</title><h1>{}</h1><p>{}</p><table border=1><tr><th>trial</th>",
        esc(name),
        esc(&summary(results))
    );
    for c in &g.cols {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr>");
    for row in &g.rows {
        let _ = write!(s, "<tr><td><code>{}</code></td>", esc(row));
        for (_, r) in g.line(row) {
            let (t, title) = r.map_or((String::new(), String::new()), |r| {
                (short(&r.cell).chars().take(12).collect(), short(&r.cell))
            });
            let _ = write!(s, "<td title=\"{}\">{}</td>", esc(&title), esc(&t));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    s
}

/// The JUnit test case of one trial of profile `name`: classname `name.case`, name
/// `route::choice::mode`; a known failure, a clean refusal and a trial the client format cannot
/// express are skipped with their reason; a failure's text lists its findings.
fn junit_case(name: &str, r: &TrialResult) -> JunitCase {
    let id = &r.id;
    let time = r.own_time
        + r.requests
            .iter()
            .map(|t| t.client)
            .sum::<std::time::Duration>();
    let findings = || {
        (r.findings.iter())
            .map(|f| format!("{} {}: {}", f.severity.as_str(), f.side, f.message))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let outcome = match &r.cell {
        Cell::Pass => JunitOutcome::Passed,
        Cell::Fail(m) => JunitOutcome::Failed {
            message: m.clone(),
            detail: findings(),
        },
        Cell::Broken(m) => JunitOutcome::Broken {
            message: m.clone(),
            detail: findings(),
        },
        Cell::KnownFailure(m) => JunitOutcome::Skipped {
            message: format!("known failure: {m}"),
        },
        Cell::Declined(m) => JunitOutcome::Skipped {
            message: format!("declined: {m}"),
        },
        Cell::NotApplicable(m) => JunitOutcome::Skipped {
            message: format!("not applicable: {m}"),
        },
    };
    JunitCase {
        classname: format!("{name}.{}", id.case),
        name: format!("{}::{}::{}", id.route, id.choice, id.mode.slug()),
        time,
        outcome,
    }
}

/// The JUnit XML report of a `tooltape COMMAND NAME --format junit` run (`command`: `gateway`
/// or `client`; `name`: the profile).
pub fn junit(command: &str, name: &str, timestamp: &str, results: &[TrialResult]) -> String {
    let cases: Vec<JunitCase> = results.iter().map(|r| junit_case(name, r)).collect();
    crate::junit::junit(&format!("tooltape {command} {name}"), timestamp, &cases)
}
