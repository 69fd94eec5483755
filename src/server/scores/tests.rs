//! Scores counted from results: each share over the trials (or calls) it applies to.

use std::sync::Arc;

use serde_json::json;

use super::{Share, scores};
use crate::case::{Case, Mode};
use crate::engine::{Cell, FindingKind, RoutedTrialId, TrialResult};
use crate::model::{Outcome, Severity, ToolCall};

fn case() -> Arc<Case> {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let cases = crate::engine::cases_of(&discovery);
    cases.into_iter().find(|c| c.name == "weather").unwrap()
}

fn result(
    choice: &str,
    mode: Mode,
    calls: &[serde_json::Value],
    kinds: &[FindingKind],
) -> TrialResult {
    let id = RoutedTrialId {
        case: "weather".into(),
        route: "chat".into(),
        choice: choice.into(),
        mode,
    };
    let mut r = TrialResult::unjudged(id.key(), id, Cell::Pass);
    r.downstream_outcome = Some(Outcome {
        tool_calls: (calls.iter().enumerate())
            .map(|(i, a)| ToolCall::unsigned(format!("c{i}"), "get_weather", a.clone()))
            .collect(),
        ..Outcome::default()
    });
    r.findings = (kinds.iter())
        .map(|k| {
            crate::engine::Finding::new(
                *k,
                Severity::Breaking,
                crate::engine::Side::Downstream,
                "x",
            )
        })
        .collect();
    r
}

#[test]
fn each_score_counts_what_it_applies_to() {
    let ok = json!({"city": "Oslo"});
    let results = [
        result("required", Mode::Buffered, std::slice::from_ref(&ok), &[]),
        result("required", Mode::Stream, &[json!({"city": "Bern"})], &[]),
        result(
            "auto",
            Mode::Buffered,
            &[json!({"town": 1})],
            &[FindingKind::CallValid],
        ),
        result(
            "auto",
            Mode::Stream,
            &[json!({"town": 1})],
            &[FindingKind::CallValid],
        ),
        result("none", Mode::Buffered, &[], &[]),
        result(
            "forced-get_weather",
            Mode::Buffered,
            &[],
            &[FindingKind::ChoiceHonoured],
        ),
    ];
    let s = scores(&results, &[case()]);
    let chat = &s.routes[0];
    assert_eq!(chat.route, "chat");
    assert_eq!(
        chat.tool_choice_honoured,
        Share { ok: 3, of: 4 },
        "auto does not constrain"
    );
    assert_eq!(chat.schema_valid_calls, Share { ok: 2, of: 4 });
    assert_eq!(
        chat.stream_equals_buffered,
        Share { ok: 1, of: 2 },
        "Bern is not Oslo"
    );
    assert_eq!(
        chat.next_round_accepted,
        Share::default(),
        "weather has no rounds"
    );
    assert!(
        s.markdown()
            .contains("| chat | 3/4 (75%) | 2/4 (50%) | 1/2 (50%) | - |"),
        "{}",
        s.markdown()
    );
}
