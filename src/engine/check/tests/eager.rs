//! Anthropic's fine-grained tool streaming: the switch kept upstream (`eager_kept`), and the
//! answer check on a call `max_tokens` cut midway through a parameter (`downstream`): the
//! client must get the format's length finish and no call, never the cut call as finished.

use rstest::rstest;
use serde_json::json;

use super::{one, silent};
use crate::engine::check::{Finding, FindingKind, RequestView, Side, downstream, eager_kept};
use crate::model::{
    Diagnostic, DiagnosticKind, Finish, Outcome, Provider, Severity, Tool, ToolCall,
};

fn view(eager: bool) -> RequestView {
    RequestView {
        tools: vec![Tool {
            allowed_callers: Vec::new(),
            output_schema: None,
            name: "write_note".into(),
            description: None,
            parameters: json!({"type": "object"}),
            strict: None,
            eager_input_streaming: eager,
            defer_loading: false,
            namespace: None,
        }],
        ..RequestView::default()
    }
}

/// The one finding is the eager switch changed on the way upstream (behaviour), saying `gist`.
#[track_caller]
fn switch_lost(found: &[Finding], gist: &str) {
    one(
        found,
        FindingKind::Request,
        Side::Upstream,
        Severity::Behaviour,
        gist,
    );
}

const DROPPED: Option<&str> = Some("eager_input_streaming dropped for write_note");
const ADDED: Option<&str> = Some("eager_input_streaming added to write_note");

/// The switch as the client set it (`asked`) against as it went to `target` (`sent`), `added`
/// judged (a gateway keeps its client's switch both ways) or not (a library sends the switch its
/// caller asked and may add its own): the finding saying `gist`, or none.
#[rstest]
#[case::gateway_kept_on(true, true, Provider::Anthropic, true, None)]
#[case::gateway_kept_off(false, false, Provider::Anthropic, true, None)]
#[case::gateway_dropped(true, false, Provider::Anthropic, true, DROPPED)]
#[case::gateway_added(false, true, Provider::Anthropic, true, ADDED)]
// Another upstream has no switch: the encoder drops it with a note.
#[case::gateway_to_another_upstream(true, false, Provider::OpenaiChat, true, None)]
#[case::library_kept(true, true, Provider::Anthropic, false, None)]
#[case::library_dropped(true, false, Provider::Anthropic, false, DROPPED)]
// A library's own choice to stream eagerly is not the caller's to judge.
#[case::library_added_its_own(false, true, Provider::Anthropic, false, None)]
#[case::library_to_another_upstream(true, false, Provider::OpenaiResponses, false, None)]
fn the_eager_switch_reaches_an_anthropic_upstream_as_asked(
    #[case] asked: bool,
    #[case] sent: bool,
    #[case] target: Provider,
    #[case] added: bool,
    #[case] gist: Option<&str>,
) {
    let found = eager_kept(&view(asked), &view(sent), target, added);
    match gist {
        Some(gist) => switch_lost(&found, gist),
        None => silent(&found),
    }
}

/// Upstream's answer: `max_tokens` reached inside the only call's arguments.
fn cut() -> Outcome {
    Outcome {
        finish: Finish::Length,
        raw_finish: Some("max_tokens".into()),
        diagnostics: vec![Diagnostic {
            kind: DiagnosticKind::TruncatedCall,
            message: "cut".into(),
            offset: None,
            call_index: Some(0),
            recovered: false,
        }],
        ..Outcome::default()
    }
}

#[test]
fn a_call_cut_midway_through_a_parameter_never_reaches_the_client_as_finished() {
    let exp = cut();
    for (p, raw) in [
        (Provider::OpenaiChat, "length"),
        (Provider::OpenaiResponses, "max_output_tokens"),
        (Provider::Anthropic, "max_tokens"),
    ] {
        let faithful = Outcome {
            raw_finish: Some(raw.into()),
            ..cut()
        };
        silent(&downstream(p, 200, Ok(&faithful), 200, Some(&exp)));
        // The cut call handed as a finished call, its arguments closed up.
        let finished = Outcome {
            finish: Finish::ToolCalls,
            raw_finish: Some("tool_calls".into()),
            tool_calls: vec![ToolCall::unsigned(
                "call_1",
                "write_note",
                json!({"title": "Quay rota", "lines": ["Monday: Ana and I"]}),
            )],
            ..Outcome::default()
        };
        let found = downstream(p, 200, Ok(&finished), 200, Some(&exp));
        let gists = [
            "calls [] answered as [write_note]",
            "for upstream's output-token limit",
        ];
        assert_eq!(found.len(), gists.len(), "{found:#?}");
        for (f, gist) in found.iter().zip(gists) {
            assert_eq!(
                (f.kind, f.side, f.severity),
                (FindingKind::Answer, Side::Downstream, Severity::Breaking)
            );
            assert!(f.message.contains(gist), "{:?} lacks {gist:?}", f.message);
        }
    }
}
