//! The suite documents' shape and the status words read back.

use crate::case::Mode;
use crate::engine::{Cell, RoutedTrialId, TrialResult};

fn result(case: &str, route: &str, cell: Cell) -> TrialResult {
    let id = RoutedTrialId {
        case: case.into(),
        route: route.into(),
        choice: "auto".into(),
        mode: Mode::Stream,
    };
    TrialResult::unjudged(format!("gateway::x::{}", id.key()), id, cell)
}

#[test]
fn the_gateway_document_puts_the_root_causes_between_the_summary_and_the_trial_table() {
    let results = [
        result("a", "chat→anthropic", Cell::Pass),
        result(
            "b",
            "chat→anthropic",
            Cell::KnownFailure("why | not".into()),
        ),
        result("b", "messages→gemini", Cell::Declined("400: no".into())),
    ];
    let doc = super::gateway_markdown("x", "A gateway.", &results, &[]);
    let summary = "**1 passed, 0 failed (1 known-failure, 1 declined, 0 not-applicable)**\n\n";
    let causes = "## Root causes\n\n";
    let table = "## Trial matrix\n\n| trial | chat→anthropic | messages→gemini |\n";
    let at = |s: &str| doc.find(s).unwrap_or_else(|| panic!("{s:?} not in\n{doc}"));
    assert!(at(summary) < at(causes) && at(causes) < at(table), "{doc}");
    assert!(
        doc.contains("| `b::auto::stream` | known | declined |\n"),
        "{doc}"
    );
    assert!(
        doc.contains("- `b::chat→anthropic::auto::stream`: known-failure: why \\| not\n"),
        "{doc}"
    );
    assert!(
        doc.contains("- `b::messages→gemini::auto::stream`: declined: 400: no\n"),
        "{doc}"
    );
}

#[test]
fn cells_read_back_in_the_words_before_the_one_vocabulary() {
    let read = |v: serde_json::Value| serde_json::from_value::<Cell>(v).unwrap();
    let known = read(serde_json::json!({"status": "known", "detail": "r"}));
    assert_eq!(known, Cell::KnownFailure("r".into()));
    let declined = read(serde_json::json!({"status": "unsupported", "detail": "r"}));
    assert_eq!(declined, Cell::Declined("r".into()));
    let written = serde_json::to_value(Cell::KnownFailure("r".into())).unwrap();
    assert_eq!(written["status"], "known-failure");
    assert_eq!(
        serde_json::to_value(Cell::Declined("r".into())).unwrap()["status"],
        "declined"
    );
}

#[test]
fn trials_that_ran_with_an_option_left_out_are_listed_with_their_note() {
    let note = "parallel left out: not expressible in x: parallel_tool_calls (it is not this case's subject; the trial ran without it)";
    let mut a = result("a", "chat→anthropic", Cell::Pass);
    a.left_out = vec![note.into()];
    let mut b = result("b", "chat→anthropic", Cell::Fail("downstream: lost".into()));
    b.left_out = vec![note.into()];
    let c = result("c", "chat→anthropic", Cell::NotApplicable("no knob".into()));
    let doc = super::gateway_markdown("x", "A gateway.", &[a.clone(), b, c], &[]);
    assert!(doc.contains("\n## Options left out\n"), "{doc}");
    assert!(doc.contains(&format!("- 2 trials: {note}\n")), "{doc}");
    assert!(doc.contains("1 not-applicable)"), "{doc}");
    let plain = super::gateway_markdown("x", "A gateway.", &[result("a", "r", Cell::Pass)], &[]);
    assert!(!plain.contains("Options left out"), "{plain}");
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["left_out"][0], note);
}
