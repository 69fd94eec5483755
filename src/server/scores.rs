//! The scores a server's vendor reads, per route: `tool_choice` honoured, schema-valid calls
//! (overall and by the schema features their tools use), the stream assembling to the buffered
//! answer, and the next round accepted — each a share of the trials (or calls) it applies to,
//! counted from the run's results. JSON (in the suite's document) and a Markdown table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::case::{Case, ChoiceSpec, Mode};
use crate::engine::{Cell, FindingKind, TrialResult, call_problem};
use crate::model::{Outcome, ToolChoice};

/// `ok` of `of`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    pub ok: usize,
    pub of: usize,
}

impl Share {
    fn count(&mut self, ok: bool) {
        self.of += 1;
        self.ok += usize::from(ok);
    }

    /// `12/16 (75%)`, or `-` when nothing applied.
    pub fn cell(self) -> String {
        if self.of == 0 {
            "-".into()
        } else {
            format!(
                "{}/{} ({:.0}%)",
                self.ok,
                self.of,
                100.0 * self.ok as f64 / self.of as f64
            )
        }
    }
}

/// One route's scores.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteScores {
    pub route: String,
    /// Trials under none, required, a named tool or an allowed subset whose answer honoured it.
    pub tool_choice_honoured: Share,
    /// Calls that name a tool in force with arguments its schema accepts (every exchange's).
    pub schema_valid_calls: Share,
    /// The same, by the schema features of the called tool (`schema::schema_features`).
    pub schema_valid_by_feature: BTreeMap<String, Share>,
    /// Stream trials whose calls (names, arguments by meaning) are their buffered twin's.
    pub stream_equals_buffered: Share,
    /// Trials with rounds whose first answer called tools: every round was accepted.
    pub next_round_accepted: Share,
}

/// Every route's scores, in route order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    pub routes: Vec<RouteScores>,
}

/// The scores of a run's `results` (the cases give the tools' schemas).
pub fn scores(results: &[TrialResult], cases: &[Arc<Case>]) -> Scores {
    let cases: BTreeMap<&str, &Case> = cases.iter().map(|c| (c.name.as_str(), &**c)).collect();
    let mut routes: BTreeMap<String, RouteScores> = BTreeMap::new();
    let buffered: BTreeMap<_, &Outcome> = (results.iter())
        .filter(|r| r.id.mode == Mode::Buffered)
        .filter_map(|r| Some((r.id.clone(), answered(r)?)))
        .collect();
    for r in results {
        let s = routes
            .entry(r.id.route.clone())
            .or_insert_with(|| RouteScores {
                route: r.id.route.clone(),
                ..RouteScores::default()
            });
        let Some(case) = cases.get(r.id.case.as_str()) else {
            continue;
        };
        let Some(got) = answered(r) else {
            continue;
        };
        if forcing(case, &r.id.choice) {
            let kept = !r
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::ChoiceHonoured);
            s.tool_choice_honoured.count(kept);
        }
        for call in &got.tool_calls {
            let ok = call_problem(&case.tools, call).is_none();
            s.schema_valid_calls.count(ok);
            if let Some(tool) = case.tools.iter().find(|t| t.name == call.name) {
                for f in crate::schema::schema_features(&tool.parameters) {
                    s.schema_valid_by_feature
                        .entry(f.to_string())
                        .or_default()
                        .count(ok);
                }
            }
        }
        if r.id.mode == Mode::Stream
            && let Some(b) = buffered.get(&r.id.in_mode(Mode::Buffered))
        {
            s.stream_equals_buffered.count(same_calls(got, b));
        }
        if !case.file.rounds.is_empty() && !got.tool_calls.is_empty() {
            let accepted = !r.findings.iter().any(|f| f.kind == FindingKind::Round);
            s.next_round_accepted.count(accepted);
        }
    }
    Scores {
        routes: routes.into_values().collect(),
    }
}

/// The first answer, when the trial ran and the server answered without an error.
fn answered(r: &TrialResult) -> Option<&Outcome> {
    if matches!(r.cell, Cell::Broken(_) | Cell::NotApplicable(_)) {
        return None;
    }
    r.downstream_outcome.as_ref().filter(|o| o.error.is_none())
}

/// Whether the trial's choice (its slug in the trial's id) constrains the calls.
fn forcing(case: &Case, slug: &str) -> bool {
    case.choices.iter().any(|c| {
        c.slug() == slug
            && matches!(
                c,
                ChoiceSpec::Choice(
                    ToolChoice::None
                        | ToolChoice::Required
                        | ToolChoice::Forced(_)
                        | ToolChoice::Allowed { .. }
                )
            )
    })
}

/// Same calls: names in order, arguments by meaning.
fn same_calls(a: &Outcome, b: &Outcome) -> bool {
    a.tool_calls.len() == b.tool_calls.len()
        && a.tool_calls
            .iter()
            .zip(&b.tool_calls)
            .all(|(x, y)| x.name == y.name && x.arguments == y.arguments)
}

impl Share {
    fn add(&mut self, other: Share) {
        self.ok += other.ok;
        self.of += other.of;
    }
}

impl Scores {
    /// Adds the scores of another part of the same suite (a matrix shard's piece).
    pub fn add(&mut self, other: &Scores) {
        for o in &other.routes {
            let Some(r) = self.routes.iter_mut().find(|r| r.route == o.route) else {
                self.routes.push(o.clone());
                continue;
            };
            r.tool_choice_honoured.add(o.tool_choice_honoured);
            r.schema_valid_calls.add(o.schema_valid_calls);
            r.stream_equals_buffered.add(o.stream_equals_buffered);
            r.next_round_accepted.add(o.next_round_accepted);
            for (f, share) in &o.schema_valid_by_feature {
                r.schema_valid_by_feature
                    .entry(f.clone())
                    .or_default()
                    .add(*share);
            }
        }
    }

    /// The Markdown table: one row a route.
    pub fn markdown(&self) -> String {
        let mut s = String::from(
            "| route | tool_choice honoured | schema-valid calls | stream = buffered | next round accepted |\n|---|---|---|---|---|\n",
        );
        for r in &self.routes {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.route,
                r.tool_choice_honoured.cell(),
                r.schema_valid_calls.cell(),
                r.stream_equals_buffered.cell(),
                r.next_round_accepted.cell()
            );
        }
        let features: std::collections::BTreeSet<&String> = (self.routes.iter())
            .flat_map(|r| r.schema_valid_by_feature.keys())
            .collect();
        if !features.is_empty() {
            s.push_str(
                "\nSchema-valid calls by the schema features of the called tool:\n\n| route |",
            );
            for f in &features {
                let _ = write!(s, " `{f}` |");
            }
            s.push_str("\n|---|");
            s.push_str(&"---|".repeat(features.len()));
            s.push('\n');
            for r in &self.routes {
                let _ = write!(s, "| {} |", r.route);
                for f in &features {
                    let share = r
                        .schema_valid_by_feature
                        .get(*f)
                        .copied()
                        .unwrap_or_default();
                    let _ = write!(s, " {} |", share.cell());
                }
                s.push('\n');
            }
        }
        s
    }
}

#[cfg(test)]
mod tests;
