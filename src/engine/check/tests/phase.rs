//! The phase check: the phase upstream answered its message with must come back with that
//! message to a Responses upstream; silence when it does, when the answer had none, and to
//! another API.

use super::{one, round_after, silent, weather_call};
use crate::engine::check::{FindingKind, Side, phase_kept};
use crate::model::{ChatRequest, Message, Outcome, Phase, Provider, Severity, ToolCall};

fn call() -> ToolCall {
    weather_call()
}

fn answered(phase: Option<Phase>) -> Outcome {
    Outcome {
        text: Some("Checking the weather.".into()),
        tool_calls: vec![call()],
        phase,
        ..Outcome::default()
    }
}

fn follow_up(phase: Option<Phase>) -> ChatRequest {
    round_after(Message::Assistant {
        phase,
        text: Some("Checking the weather.".into()),
        tool_calls: vec![call()],
        opaque: Vec::new(),
    })
}

const RESPONSES: Provider = Provider::OpenaiResponses;

#[test]
fn phase_carried_back_is_silent() {
    let c = Some(Phase::Commentary);
    silent(&phase_kept(&answered(c), &follow_up(c), RESPONSES));
}

#[test]
fn phase_dropped_is_a_behaviour_finding() {
    let found = phase_kept(
        &answered(Some(Phase::Commentary)),
        &follow_up(None),
        RESPONSES,
    );
    one(
        &found,
        FindingKind::Phase,
        Side::Upstream,
        Severity::Behaviour,
        "phase `commentary`, and the follow-up sends that message back without it",
    );
}

#[test]
fn phase_changed_is_a_finding() {
    let found = phase_kept(
        &answered(Some(Phase::Commentary)),
        &follow_up(Some(Phase::FinalAnswer)),
        RESPONSES,
    );
    one(
        &found,
        FindingKind::Phase,
        Side::Upstream,
        Severity::Behaviour,
        "with `final_answer` instead",
    );
}

#[test]
fn no_phase_answered_or_another_api_is_silent() {
    silent(&phase_kept(&answered(None), &follow_up(None), RESPONSES));
    let c = Some(Phase::Commentary);
    silent(&phase_kept(
        &answered(c),
        &follow_up(None),
        Provider::Anthropic,
    ));
}

#[test]
fn a_text_answer_is_found_by_its_text() {
    let text_only = Outcome {
        tool_calls: Vec::new(),
        ..answered(Some(Phase::Commentary))
    };
    let mut sent = follow_up(None);
    if let Some(Message::Assistant { tool_calls, .. }) = sent.messages.get_mut(1) {
        tool_calls.clear();
    }
    sent.messages.truncate(2);
    let found = phase_kept(&text_only, &sent, RESPONSES);
    one(
        &found,
        FindingKind::Phase,
        Side::Upstream,
        Severity::Behaviour,
        "without it",
    );
}
