//! Renders a [`DriftReport`] for a terminal, as Markdown, or as JSON (format `tooltape_drift: 1`,
//! field names documented on [`json`]). Pure: strings in, strings out.

use serde_json::{Value, json};

use super::{DriftFinding, DriftReport, Kind, Severity};
use crate::text::md_cell;

const SEVERITIES: [Severity; 3] = [Severity::Breaking, Severity::Behaviour, Severity::Cosmetic];

/// One line saying what changed, without the severity or kind.
pub(crate) fn describe(f: &DriftFinding) -> String {
    let b = f.before.as_deref().unwrap_or("");
    let a = f.after.as_deref().unwrap_or("");
    let at = f.path.as_deref().unwrap_or("");
    match f.kind {
        Kind::FieldRenamed => format!("field `{b}` renamed (or replaced) to `{a}`"),
        Kind::FieldRemoved => format!("field `{at}` no longer sent (was {b})"),
        Kind::FieldAdded => format!("new field `{at}` ({a})"),
        Kind::TypeChanged => format!("field `{at}` changed type: {b} → {a}"),
        Kind::EventAdded => format!("new stream event kind `{a}`"),
        Kind::EventRemoved => format!("stream event kind `{b}` no longer sent"),
        Kind::Noise => format!("noise fields changed value: {a}"),
        _ if at.is_empty() => format!("{b} → {a}"),
        _ => format!("{at}: {b} → {a}"),
    }
}

fn summary_line(r: &DriftReport) -> String {
    let counts: Vec<String> = SEVERITIES
        .iter()
        .map(|s| format!("{} {}", r.count(*s), s.as_str()))
        .collect();
    format!(
        "{} pairs compared, {} with differences: {}",
        r.compared,
        r.trials.len(),
        counts.join(", ")
    )
}

/// Plain text for a terminal.
pub fn terminal(r: &DriftReport) -> String {
    let mut s = format!(
        "drift: {} against {}\n{}\n",
        r.committed,
        r.against,
        summary_line(r)
    );
    for t in &r.trials {
        s.push_str(&format!("\n{}  ({})\n", t.trial, t.cassette));
        for f in &t.findings {
            s.push_str(&format!(
                "  {:<9}  {:<13}  {}\n",
                f.severity.as_str(),
                f.kind.as_str(),
                describe(f)
            ));
        }
        if t.explained > 0 {
            s.push_str(&format!(
                "  {:<26}{} structural difference(s) follow from the behaviour change\n",
                "", t.explained
            ));
        }
    }
    for (side, list) in [
        (&r.committed, &r.only_committed),
        (&r.against, &r.only_against),
    ] {
        if !list.is_empty() {
            s.push_str(&format!("\nonly in {side} ({}):\n", list.len()));
            for c in list {
                s.push_str(&format!("  {c}\n"));
            }
        }
    }
    if r.count(Severity::Breaking) > 0 {
        s.push_str("\nbreaking drift: replaying the new cassettes would change verdicts or fail to decode\n");
    }
    s
}

/// GitHub-flavoured Markdown.
pub fn markdown(r: &DriftReport) -> String {
    let mut s = format!(
        "# Drift report\n\nCommitted `{}` against `{}`: {}.\n\n",
        r.committed,
        r.against,
        summary_line(r)
    );
    s.push_str("| severity | findings |\n|---|---|\n");
    for sev in SEVERITIES {
        s.push_str(&format!("| {} | {} |\n", sev.as_str(), r.count(sev)));
    }
    for t in &r.trials {
        s.push_str(&format!(
            "\n## `{}`\n\nCassette `{}`.\n\n",
            t.trial, t.cassette
        ));
        s.push_str("| severity | kind | what changed |\n|---|---|---|\n");
        for f in &t.findings {
            s.push_str(&format!(
                "| {} | `{}` | {} |\n",
                f.severity.as_str(),
                f.kind.as_str(),
                md_cell(&describe(f))
            ));
        }
        if t.explained > 0 {
            s.push_str(&format!(
                "\n{} further structural difference(s) follow from the behaviour change.\n",
                t.explained
            ));
        }
    }
    for (side, list) in [
        (&r.committed, &r.only_committed),
        (&r.against, &r.only_against),
    ] {
        if !list.is_empty() {
            s.push_str(&format!("\n## Only in `{side}`\n\n"));
            for c in list {
                s.push_str(&format!("- `{c}`\n"));
            }
        }
    }
    s
}

/// JSON, stable field names:
/// `tooltape_drift` (format version, 1), `committed`, `against`,
/// `summary` {`compared`, `changed`, `breaking`, `behaviour`, `cosmetic`},
/// `trials` [{`trial`, `cassette`, `worst`, `explained`, `findings` [{`severity`, `kind`, `path`,
/// `before`, `after`, `message`}]}], `only_committed` [path], `only_against` [path].
pub fn json(r: &DriftReport) -> String {
    let trials: Vec<Value> = r
        .trials
        .iter()
        .map(|t| {
            let findings: Vec<Value> = t
                .findings
                .iter()
                .map(|f| {
                    json!({
                        "severity": f.severity,
                        "kind": f.kind,
                        "path": f.path,
                        "before": f.before,
                        "after": f.after,
                        "message": describe(f),
                    })
                })
                .collect();
            json!({
                "trial": t.trial,
                "cassette": t.cassette,
                "worst": t.worst(),
                "explained": t.explained,
                "findings": findings,
            })
        })
        .collect();
    let v = json!({
        "tooltape_drift": 1,
        "committed": r.committed,
        "against": r.against,
        "summary": {
            "compared": r.compared,
            "changed": r.trials.len(),
            "breaking": r.count(Severity::Breaking),
            "behaviour": r.count(Severity::Behaviour),
            "cosmetic": r.count(Severity::Cosmetic),
        },
        "trials": trials,
        "only_committed": r.only_committed,
        "only_against": r.only_against,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}
