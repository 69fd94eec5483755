//! The error-flag check: a result flagged as an error reaching Anthropic or Gemini without its
//! flag is one behaviour finding; silence when it is kept, on plain results, and on the targets
//! without a flag (Chat, Responses).

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, error_flags};
use crate::model::{ChatRequest, Message, Provider, Severity};

fn round(is_error: bool) -> ChatRequest {
    ChatRequest::new("m")
        .with_user("weather?")
        .with_messages([Message::Tool {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: "city not found".into(),
            parts: Vec::new(),
            is_error,
        }])
}

#[test]
fn an_error_result_without_its_flag_is_a_finding_where_the_target_has_one() {
    for target in [Provider::Anthropic, Provider::Gemini] {
        let found = error_flags(&round(true), &round(false), target);
        one(
            &found,
            FindingKind::ErrorFlag,
            Side::Upstream,
            Severity::Behaviour,
            "without its error flag",
        );
    }
}

#[test]
fn a_kept_flag_a_plain_result_and_a_target_without_a_flag_are_silent() {
    silent(&error_flags(
        &round(true),
        &round(true),
        Provider::Anthropic,
    ));
    silent(&error_flags(&round(false), &round(false), Provider::Gemini));
    for target in [Provider::OpenaiChat, Provider::OpenaiResponses] {
        silent(&error_flags(&round(true), &round(false), target));
    }
}
