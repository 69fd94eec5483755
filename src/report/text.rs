//! Text renderings of the conformance matrix: terminal grid, Markdown (`CONFORMANCE.md`) and
//! JSON. Deterministic: no dates, no timings, stable order. Pure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::matrix::{Parity, ReplayMatrix, Status, provenance_tag, summary};
use crate::model::Provider;
use crate::text::md_cell;

/// The command that regenerates `CONFORMANCE.md`.
pub const REGENERATE: &str = "cargo run -- report --format md --out CONFORMANCE.md";

/// Numbered notes shared by cells: identical texts share a number.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pub texts: Vec<String>,
    /// (row index, provider) → note of the cell's detail.
    pub detail: BTreeMap<(usize, Provider), usize>,
    /// (row index, provider) → note of a parity difference (stream rows).
    pub parity: BTreeMap<(usize, Provider), usize>,
}

impl Notes {
    fn add(&mut self, text: String) -> usize {
        match self.texts.iter().position(|t| *t == text) {
            Some(i) => i + 1,
            None => {
                self.texts.push(text);
                self.texts.len()
            }
        }
    }
}

fn human(s: Status) -> &'static str {
    match s {
        Status::KnownFailure => "known failure",
        Status::NotApplicable => "not applicable",
        s => s.as_str(),
    }
}

pub(crate) fn notes(m: &ReplayMatrix) -> Notes {
    let mut n = Notes::default();
    for (i, row) in m.rows.iter().enumerate() {
        for p in &m.providers {
            let Some(c) = row.cells.get(p) else { continue };
            if let Some(d) = &c.detail {
                let k = n.add(format!("{}: {d}", human(c.status)));
                n.detail.insert((i, *p), k);
            }
            if row.mode == "stream"
                && let Some(Parity::Differs(why)) = &c.parity
            {
                let k = n.add(format!("stream/buffered parity broken: {why}"));
                n.parity.insert((i, *p), k);
            }
        }
    }
    n
}

/// One cell's text: `pass·syn`, `known[2]·rec`, with `⇄` / `≠[3]` on stream rows.
fn cell_text(m: &ReplayMatrix, n: &Notes, i: usize, p: Provider) -> String {
    let Some(c) = m.rows[i].cells.get(&p) else {
        return "-".into();
    };
    let mut s = c.status.short().to_string();
    if let Some(k) = n.detail.get(&(i, p)) {
        s.push_str(&format!("[{k}]"));
    }
    let tag = provenance_tag(c.provenance);
    if !tag.is_empty() {
        s.push('·');
        s.push_str(tag);
    }
    if m.rows[i].mode == "stream" {
        match (&c.parity, n.parity.get(&(i, p))) {
            (Some(Parity::Same), _) => s.push_str(" ⇄"),
            (Some(Parity::Differs(_)), Some(k)) => s.push_str(&format!(" ≠[{k}]")),
            _ => {}
        }
    }
    s
}

const SUMMARY_COLUMNS: [Status; 7] = Status::ALL;

fn summary_rows(m: &ReplayMatrix) -> Vec<(Provider, Vec<String>)> {
    m.providers
        .iter()
        .map(|p| {
            let s = summary(m, *p);
            let mut v: Vec<String> = SUMMARY_COLUMNS
                .iter()
                .map(|st| s.count(*st).to_string())
                .collect();
            v.push(format!(
                "{}/{}",
                s.parity_same,
                s.parity_same + s.parity_differs
            ));
            v.push(format!("{}/{}/{}", s.recorded, s.synthetic, s.imported));
            (*p, v)
        })
        .collect()
}

fn summary_header() -> Vec<String> {
    let mut h: Vec<String> = SUMMARY_COLUMNS
        .iter()
        .map(|s| s.short().to_string())
        .collect();
    h.push("parity".into());
    h.push("rec/syn/imp".into());
    h
}

/// A plain-text grid for a terminal.
pub fn terminal(m: &ReplayMatrix) -> String {
    let n = notes(m);
    let label = |i: usize| {
        format!(
            "{}::{}::{}",
            m.rows[i].case, m.rows[i].choice, m.rows[i].mode
        )
    };
    let lw = (0..m.rows.len())
        .map(|i| label(i).chars().count())
        .max()
        .unwrap_or(5)
        .max(8);
    let cells: Vec<Vec<String>> = (0..m.rows.len())
        .map(|i| {
            m.providers
                .iter()
                .map(|p| cell_text(m, &n, i, *p))
                .collect()
        })
        .collect();
    let cw: Vec<usize> = m
        .providers
        .iter()
        .enumerate()
        .map(|(k, p)| {
            cells
                .iter()
                .map(|r| r[k].chars().count())
                .max()
                .unwrap_or(0)
                .max(p.slug().len())
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let mut out = pad("trial", lw);
    for (k, p) in m.providers.iter().enumerate() {
        out.push_str(&format!("  {}", pad(p.slug(), cw[k])));
    }
    out = out.trim_end().to_string() + "\n";
    for (i, row) in cells.iter().enumerate() {
        let mut line = pad(&label(i), lw);
        for (k, c) in row.iter().enumerate() {
            line.push_str(&format!("  {}", pad(c, cw[k])));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let header = summary_header();
    let rows = summary_rows(m);
    let pw = m
        .providers
        .iter()
        .map(|p| p.slug().len())
        .max()
        .unwrap_or(0)
        .max(7);
    let widths: Vec<usize> = (0..header.len())
        .map(|k| {
            rows.iter()
                .map(|(_, v)| v[k].len())
                .chain([header[k].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    out.push_str(&format!("\n{:<pw$}", "summary"));
    for (h, w) in header.iter().zip(&widths) {
        out.push_str(&format!("  {h:>w$}"));
    }
    out.push('\n');
    for (p, v) in rows {
        out.push_str(&format!("{:<pw$}", p.slug()));
        for (x, w) in v.iter().zip(&widths) {
            out.push_str(&format!("  {x:>w$}"));
        }
        out.push('\n');
    }
    if !n.texts.is_empty() {
        out.push_str("\nnotes\n");
        for (k, t) in n.texts.iter().enumerate() {
            out.push_str(&format!("  [{}] {t}\n", k + 1));
        }
    }
    out.push_str("\nlegend: syn synthetic (simulator), rec recorded, imp imported; ⇄ stream and buffered agree, ≠ they differ\n");
    out
}

/// `CONFORMANCE.md`.
pub fn markdown(m: &ReplayMatrix) -> String {
    let n = notes(m);
    let mut s = String::from("# Conformance matrix\n\n");
    s.push_str(&format!(
        "Generated from a replay of every trial against its committed cassette; do not edit by hand.\nRegenerate: `{REGENERATE}` (or `make conformance`).\n\n"
    ));
    s.push_str("**Legend.** ");
    let legend: Vec<String> = Status::ALL
        .iter()
        .map(|st| format!("`{}` {}", st.short(), st.meaning()))
        .collect();
    s.push_str(&legend.join("; "));
    s.push_str(".\nCassettes: `rec` recorded from the provider, `syn` synthetic (the project's simulator), `imp` imported.\n");
    s.push_str("Stream rows: `⇄` stream and buffered agree (called tools and verdict; for synthetic pairs identical outcomes, ids, usage and signatures aside), `≠[n]` they differ.\n");
    s.push_str("`[n]` refers to the notes below the matrix.\n\n## Summary\n\n| provider | ");
    s.push_str(&summary_header().join(" | "));
    s.push_str(" |\n|---|");
    s.push_str(&"---:|".repeat(summary_header().len()));
    s.push('\n');
    for (p, v) in summary_rows(m) {
        s.push_str(&format!("| {p} | {} |\n", v.join(" | ")));
    }
    s.push_str("\n## Matrix\n\n| case | choice | mode |");
    for p in &m.providers {
        s.push_str(&format!(" {p} |"));
    }
    s.push_str("\n|---|---|---|");
    s.push_str(&"---|".repeat(m.providers.len()));
    s.push('\n');
    for (i, row) in m.rows.iter().enumerate() {
        s.push_str(&format!("| {} | {} | {} |", row.case, row.choice, row.mode));
        for p in &m.providers {
            s.push_str(&format!(" {} |", md_cell(&cell_text(m, &n, i, *p))));
        }
        s.push('\n');
    }
    if !n.texts.is_empty() {
        s.push_str("\n## Notes\n\n");
        for (k, t) in n.texts.iter().enumerate() {
            s.push_str(&format!("{}. {}\n", k + 1, md_cell(t)));
        }
    }
    s.push_str("\n## Cases\n\n");
    for (name, d) in &m.cases {
        s.push_str(&format!("- `{name}`: {}\n", md_cell(d)));
    }
    s
}

/// JSON, stable field names: `tooltape_report` (1), `providers` [slug], `rows` [{`case`,
/// `choice`, `mode`, `cells` {provider: {`trial`, `status`, `detail`, `provenance`, `calls`,
/// `parity`}}}], `summary` {provider: {`statuses` {status: n}, `parity_same`, `parity_differs`,
/// `recorded`, `synthetic`, `imported`}}, `cases` {name: description}.
pub fn json(m: &ReplayMatrix) -> String {
    let summaries: serde_json::Map<String, Value> = m
        .providers
        .iter()
        .map(|p| (p.slug().to_string(), json!(summary(m, *p))))
        .collect();
    let cases: serde_json::Map<String, Value> =
        m.cases.iter().map(|(n, d)| (n.clone(), json!(d))).collect();
    let v = json!({
        "tooltape_report": 1,
        "providers": m.providers,
        "rows": m.rows,
        "summary": summaries,
        "cases": cases,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}
