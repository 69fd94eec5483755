//! The downstream checks (`downstream`, `invalid_request`, `broken`): each finding, and silence
//! on the faithful answer.

use std::borrow::Cow;

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{
    Finding, FindingKind, Inbound, Side, broken, downstream, invalid_request,
};
use crate::model::{
    Diagnostic, DiagnosticKind, Finish, Outcome, Provider, ProviderError, Severity, ToolCall, Usage,
};

fn call(id: &str, name: &str, city: &str) -> ToolCall {
    ToolCall::unsigned(id, name, json!({"city": city}))
}

/// A Chat Completions answer calling `get_weather` for Paris after some text, 7 output tokens.
fn answer() -> Outcome {
    Outcome {
        tool_calls: vec![call("call_1", "get_weather", "Paris")],
        text: Some("checking".into()),
        finish: Finish::ToolCalls,
        raw_finish: Some("tool_calls".into()),
        usage: Some(Usage {
            input_tokens: Some(20),
            output_tokens: Some(7),
        }),
        ..Outcome::default()
    }
}

/// The calls' answer, ended with `finish` spelled `raw`.
fn calls_ending(finish: Finish, raw: &str) -> Outcome {
    Outcome {
        finish,
        raw_finish: Some(raw.into()),
        ..answer()
    }
}

/// A text answer that ended with `finish`.
fn text(finish: Finish, raw: &str) -> Outcome {
    Outcome {
        tool_calls: vec![],
        ..calls_ending(finish, raw)
    }
}

fn error(status: u16, message: &str) -> Option<ProviderError> {
    Some(ProviderError {
        status,
        message: message.into(),
        ..ProviderError::default()
    })
}

/// An answer whose stream ended before its terminal event.
fn cut(o: Outcome) -> Outcome {
    Outcome {
        diagnostics: vec![Diagnostic {
            kind: DiagnosticKind::StreamTruncated,
            message: Cow::Borrowed("cut"),
            offset: None,
            call_index: None,
            recovered: false,
        }],
        ..o
    }
}

/// `downstream` for a Chat Completions client, both ends answering 200.
fn check(got: &Outcome, expected: &Outcome) -> Vec<Finding> {
    downstream(Provider::OpenaiChat, 200, Ok(got), 200, Some(expected))
}

#[track_caller]
fn answer_finding(found: &[Finding], severity: Severity, gist: &str) {
    one(found, FindingKind::Answer, Side::Downstream, severity, gist);
}

#[test]
fn a_faithful_answer_is_silent() {
    silent(&check(&answer(), &answer()));
    silent(&check(
        &text(Finish::Stop, "stop"),
        &text(Finish::Stop, "stop"),
    ));
    // Text differing only in surrounding space is the same text.
    let spaced = Outcome {
        text: Some(" checking\n".into()),
        ..answer()
    };
    silent(&check(&spaced, &answer()));
    // Without upstream's answer there is nothing to compare.
    silent(&downstream(
        Provider::OpenaiChat,
        200,
        Ok(&answer()),
        200,
        None,
    ));
    // Responses has no tool-call finish value of its own: none is expected.
    let responses = calls_ending(Finish::ToolCalls, "completed");
    silent(&downstream(
        Provider::OpenaiResponses,
        200,
        Ok(&responses),
        200,
        Some(&answer()),
    ));
}

#[test]
fn an_upstream_error_answered_as_a_success_is_breaking() {
    let plain = answer();
    answer_finding(
        &downstream(Provider::OpenaiChat, 200, Ok(&plain), 429, None),
        Severity::Breaking,
        "upstream 429 answered as 200 without an error",
    );
    // A success status is wrong even when its body does not decode.
    answer_finding(
        &downstream(Provider::OpenaiChat, 200, Err("not json".into()), 429, None),
        Severity::Breaking,
        "upstream 429 answered as 200 without an error",
    );
    // Passed on as an error status, or as an error inside the success: right.
    let failed = Outcome {
        error: error(429, "slow down"),
        ..Outcome::default()
    };
    silent(&downstream(
        Provider::OpenaiChat,
        429,
        Ok(&failed),
        429,
        None,
    ));
    silent(&downstream(
        Provider::OpenaiChat,
        200,
        Ok(&failed),
        429,
        None,
    ));
}

#[test]
fn an_answer_that_does_not_decode_is_breaking() {
    answer_finding(
        &downstream(
            Provider::OpenaiChat,
            200,
            Err("expected value at line 1".into()),
            200,
            Some(&answer()),
        ),
        Severity::Breaking,
        "answer does not decode: expected value at line 1",
    );
}

#[test]
fn a_broken_upstream_stream_answered_as_a_clean_finish_is_breaking() {
    let failed = Outcome {
        error: error(500, "overloaded"),
        ..answer()
    };
    answer_finding(
        &check(&answer(), &failed),
        Severity::Breaking,
        "upstream stream error answered as a clean finish (ToolCalls)",
    );
    answer_finding(
        &check(&answer(), &cut(answer())),
        Severity::Breaking,
        "upstream stream cut answered as a clean finish",
    );
    // The client sees the failure: its format's error event, or a stream cut in turn.
    silent(&check(&failed, &failed));
    silent(&check(&cut(answer()), &failed));
}

#[test]
fn an_error_answered_to_an_upstream_success_is_breaking() {
    let failed = Outcome {
        error: error(502, "bad gateway"),
        ..Outcome::default()
    };
    answer_finding(
        &check(&failed, &answer()),
        Severity::Breaking,
        "gateway answered 502 (bad gateway) to an upstream success",
    );
}

#[test]
fn calls_other_than_upstreams_are_breaking() {
    let weather = |id: &str, city: &str| call(id, "get_weather", city);
    for (calls, gist) in [
        (
            vec![call("call_1", "get_time", "Paris")],
            "calls [get_weather] answered as [get_time]",
        ),
        (
            vec![weather("call_1", "Rome")],
            r#"arguments of get_weather changed: {"city":"Paris"} → {"city":"Rome"}"#,
        ),
        (vec![weather("", "Paris")], "call get_weather has no id"),
    ] {
        answer_finding(
            &check(
                &Outcome {
                    tool_calls: calls,
                    ..answer()
                },
                &answer(),
            ),
            Severity::Breaking,
            gist,
        );
    }
}

#[test]
fn a_repeated_call_id_is_the_call_id_checks_and_the_gateways_own_ids_are_fine() {
    let two = |second: &str| Outcome {
        tool_calls: vec![
            call("call_1", "get_weather", "Paris"),
            call(second, "get_weather", "Paris"),
        ],
        ..answer()
    };
    // A repeated id is judged by `ids::downstream_ids` (tests/ids.rs).
    silent(&check(&two("call_1"), &two("call_2")));
    // Ids of the gateway's own are fine: only their presence and uniqueness count.
    silent(&check(&two("call_9"), &two("call_2")));
}

#[test]
fn calls_without_the_formats_tool_call_finish_are_breaking() {
    let stopped = calls_ending(Finish::Stop, "stop");
    answer_finding(
        &check(&stopped, &answer()),
        Severity::Breaking,
        "finish stop with tool calls (expected the format's tool-call value)",
    );
    // The neutral finish right, the raw value not the format's own.
    answer_finding(
        &check(&calls_ending(Finish::ToolCalls, "stop"), &answer()),
        Severity::Breaking,
        "finish stop with tool calls",
    );
}

/// OpenAI's Chat ends a named tool_choice's call with `stop`: its documented value there, and
/// only there (auto and required calls end in `tool_calls`; Anthropic's call is `tool_use`).
#[test]
fn a_named_choices_call_may_end_in_stop_on_chat_only() {
    let stopped = calls_ending(Finish::Stop, "stop");
    let named = |format| Inbound {
        format,
        named: true,
    };
    silent(&downstream(
        named(Provider::OpenaiChat),
        200,
        Ok(&stopped),
        200,
        Some(&answer()),
    ));
    let on_anthropic = calls_ending(Finish::Stop, "end_turn");
    answer_finding(
        &downstream(
            named(Provider::Anthropic),
            200,
            Ok(&on_anthropic),
            200,
            Some(&answer()),
        ),
        Severity::Breaking,
        "finish end_turn with tool calls",
    );
    // Not named: `stop` with calls stays wrong on Chat (the test above).
    answer_finding(
        &check(&stopped, &answer()),
        Severity::Breaking,
        "finish stop with tool calls",
    );
}

#[test]
fn the_output_token_limit_answered_otherwise_is_breaking() {
    let limited = calls_ending(Finish::Length, "length");
    answer_finding(
        &check(&answer(), &limited),
        Severity::Breaking,
        "finish tool_calls for upstream's output-token limit",
    );
    // The length finish wins over the calls.
    silent(&check(&limited, &limited));
}

#[test]
fn another_finish_without_calls_is_behaviour() {
    answer_finding(
        &check(
            &text(Finish::ContentFilter, "content_filter"),
            &text(Finish::Stop, "stop"),
        ),
        Severity::Behaviour,
        "finish Stop answered as ContentFilter",
    );
}

#[test]
fn changed_text_is_behaviour() {
    for (text, gist) in [
        ("done", r#"text changed: Some("checking") → Some("done")"#),
        ("  ", r#"text changed: Some("checking") → None"#),
    ] {
        answer_finding(
            &check(
                &Outcome {
                    text: Some(text.into()),
                    ..answer()
                },
                &answer(),
            ),
            Severity::Behaviour,
            gist,
        );
    }
}

#[test]
fn usage_dropped_or_recounted_is_behaviour() {
    let usage = |output_tokens| Outcome {
        usage: Some(Usage {
            input_tokens: Some(20),
            output_tokens,
        }),
        ..answer()
    };
    answer_finding(
        &check(&usage(None), &answer()),
        Severity::Behaviour,
        "usage not passed through",
    );
    answer_finding(
        &check(&usage(Some(9)), &answer()),
        Severity::Behaviour,
        "usage changed: 7 output tokens answered as 9",
    );
    // Usage upstream did not count is not asked of the gateway.
    silent(&check(&usage(Some(9)), &usage(None)));
}

// ---------------------------------------------------------------- a request the client's API rejects

fn rejected(status: u16) -> Outcome {
    Outcome {
        error: error(status, "bad request"),
        ..Outcome::default()
    }
}

#[track_caller]
fn client_fault(found: &[Finding], severity: Severity, gist: &str) {
    one(
        found,
        FindingKind::ClientFault,
        Side::Downstream,
        severity,
        gist,
    );
}

#[test]
fn an_invalid_request_answered_with_a_4xx_error_is_silent() {
    silent(&invalid_request(400, Ok(&rejected(400))));
    silent(&invalid_request(422, Ok(&rejected(422))));
}

#[test]
fn an_invalid_request_answered_as_a_success_is_breaking() {
    client_fault(
        &invalid_request(200, Ok(&Outcome::default())),
        Severity::Breaking,
        "an invalid request answered as a success (200)",
    );
}

#[test]
fn an_invalid_request_answered_200_with_an_error_inside_is_behaviour() {
    client_fault(
        &invalid_request(200, Ok(&rejected(400))),
        Severity::Behaviour,
        "an invalid request answered 200 with an error inside (bad request); its API answers 4xx",
    );
}

#[test]
fn an_invalid_request_answered_4xx_without_the_clients_error_is_breaking() {
    client_fault(
        &invalid_request(400, Err("expected value".into())),
        Severity::Breaking,
        "an invalid request answered 400 without an error in the client's format: expected value",
    );
    client_fault(
        &invalid_request(400, Ok(&Outcome::default())),
        Severity::Breaking,
        "an invalid request answered 400 without an error in the client's format",
    );
}

#[test]
fn an_invalid_request_answered_with_another_status_is_breaking() {
    client_fault(
        &invalid_request(502, Ok(&rejected(502))),
        Severity::Breaking,
        "an invalid request answered 502 (its API answers 4xx)",
    );
}

#[test]
fn broken_names_an_error_inside_or_a_cut_stream() {
    let failed = Outcome {
        error: error(500, "x"),
        ..answer()
    };
    assert_eq!(broken(&failed), Some("error"));
    assert_eq!(broken(&cut(answer())), Some("cut"));
    assert_eq!(broken(&answer()), None);
}
