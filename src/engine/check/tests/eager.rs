//! Anthropic's fine-grained tool streaming: the switch kept upstream (`eager_kept`), and the
//! answer check on a call `max_tokens` cut midway through a parameter (`downstream`): the
//! client must get the format's length finish and no call, never the cut call as finished.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{
    Finding, FindingKind, RequestView, Side, downstream, eager_asked_kept, eager_kept,
};
use crate::model::{
    Diagnostic, DiagnosticKind, Finish, Outcome, Provider, Severity, Tool, ToolCall,
};

fn view(eager: bool) -> RequestView {
    RequestView {
        tools: vec![Tool {
            name: "write_note".into(),
            description: None,
            parameters: json!({"type": "object"}),
            strict: None,
            eager_input_streaming: eager,
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

#[test]
fn the_eager_switch_reaches_an_anthropic_upstream_as_the_client_set_it() {
    let anthropic = Provider::Anthropic;
    silent(&eager_kept(&view(true), &view(true), anthropic));
    silent(&eager_kept(&view(false), &view(false), anthropic));
    switch_lost(
        &eager_kept(&view(true), &view(false), anthropic),
        "eager_input_streaming dropped for write_note",
    );
    switch_lost(
        &eager_kept(&view(false), &view(true), anthropic),
        "eager_input_streaming added to write_note",
    );
    // Another upstream has no switch: the encoder drops it with a note.
    silent(&eager_kept(&view(true), &view(false), Provider::OpenaiChat));
}

#[test]
fn a_library_sends_the_eager_switch_its_caller_asked_and_may_add_its_own() {
    let anthropic = Provider::Anthropic;
    silent(&eager_asked_kept(&view(true), &view(true), anthropic));
    switch_lost(
        &eager_asked_kept(&view(true), &view(false), anthropic),
        "eager_input_streaming dropped for write_note",
    );
    // A library's own choice to stream eagerly is not the caller's to judge.
    silent(&eager_asked_kept(&view(false), &view(true), anthropic));
    silent(&eager_asked_kept(
        &view(true),
        &view(false),
        Provider::OpenaiResponses,
    ));
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
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "write_note".into(),
                arguments: json!({"title": "Quay rota", "lines": ["Monday: Ana and I"]}),
                thought_signature: None,
            }],
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
