//! The stream checks (`stream`), over stream shapes as `gateway::events` reads them: each
//! finding, and silence on the faithful stream.

use rstest::rstest;

use super::{one, silent};
use crate::engine::check::{Finding, FindingKind, Side, stream, usage_framing};
use crate::engine::events::{CallShape, StreamRead, UsageChunk};
use crate::model::{Provider, Severity};

/// A call at `slot` opened with its id and name, its arguments in `fragments` fragments, all
/// before the finish.
fn call(slot: u64, name: &str, fragments: usize) -> CallShape {
    CallShape {
        slot,
        id: Some(format!("call_{slot}")),
        name: Some(name.into()),
        opened_with_identity: true,
        fragments,
        fragments_before_finish: fragments,
        ..CallShape::default()
    }
}

/// A whole stream of `calls`: one finish signal, its terminal event.
fn whole(calls: Vec<CallShape>) -> StreamRead {
    StreamRead {
        events: 2 + calls.iter().map(|c| c.fragments).sum::<usize>(),
        calls,
        finishes: 1,
        failures: 0,
        terminal: true,
        problems: vec![],
        usage_chunks: vec![],
    }
}

fn two_calls() -> StreamRead {
    whole(vec![call(0, "get_weather", 3), call(1, "get_time", 2)])
}

/// `two_calls()` with its second call changed.
fn second(change: impl FnOnce(&mut CallShape)) -> StreamRead {
    let mut shape = two_calls();
    change(&mut shape.calls[1]);
    shape
}

/// `stream` for a Chat Completions client, upstream's stream `two_calls()`, whole.
fn check(got: &StreamRead) -> Vec<Finding> {
    stream(got, Some(&two_calls()), Provider::OpenaiChat, false)
}

#[track_caller]
fn stream_finding(found: &[Finding], severity: Severity, gist: &str) {
    one(found, FindingKind::Stream, Side::Downstream, severity, gist);
}

#[test]
fn a_faithful_stream_is_silent() {
    silent(&check(&two_calls()));
    // Without upstream's stream, only the gateway's own shape is checked.
    silent(&stream(&whole(vec![]), None, Provider::OpenaiChat, false));
    // A stream of text alone.
    let text = whole(vec![]);
    silent(&stream(&text, Some(&text), Provider::OpenaiChat, false));
}

#[test]
fn a_problem_in_the_stream_is_breaking_and_named_once() {
    let got = StreamRead {
        problems: vec![
            "event data is not JSON (expected value): {oops".into(),
            "error event: {}".into(),
        ],
        ..two_calls()
    };
    stream_finding(
        &check(&got),
        Severity::Breaking,
        "stream: event data is not JSON (expected value): {oops",
    );
}

#[test]
fn an_error_event_after_upstreams_stream_failed_is_silent() {
    // Upstream's stream failed: the gateway's ends in an error event, without a finish.
    let got = StreamRead {
        finishes: 0,
        terminal: false,
        problems: vec!["error event: {\"error\": {}}".into()],
        ..two_calls()
    };
    silent(&stream(
        &got,
        Some(&two_calls()),
        Provider::OpenaiChat,
        true,
    ));
    // A problem that is not the error event is still one.
    let garbled = StreamRead {
        problems: vec!["event data is not JSON (eof): {".into()],
        ..got
    };
    stream_finding(
        &stream(&garbled, Some(&two_calls()), Provider::OpenaiChat, true),
        Severity::Breaking,
        "stream: event data is not JSON",
    );
}

#[test]
fn a_call_sharing_a_slot_upstream_kept_apart_is_breaking() {
    // The second call opened at slot 0 under an id of its own.
    let got = second(|c| {
        c.slot = 0;
        c.shared = true;
    });
    stream_finding(
        &check(&got),
        Severity::Breaking,
        "call get_time at slot 0 reused by another call (call_1)",
    );
    // Upstream streamed them at one slot too (a same-format pass-through): faithful.
    silent(&stream(&got, Some(&got), Provider::OpenaiChat, false));
}

/// The second call streamed otherwise than upstream streamed it, one way: one finding of
/// `severity` saying `gist`.
#[rstest]
#[case::merged_into_a_slot(
    |c: &mut CallShape| c.reused_by = Some("? get_date".into()),
    Severity::Breaking,
    "call get_time at slot 1 reused by another call (? get_date)"
)]
#[case::opened_without_its_id_and_name(
    |c: &mut CallShape| c.opened_with_identity = false,
    Severity::Breaking,
    "first delta at slot 1 has no id and name"
)]
#[case::arguments_only_with_the_finish(
    |c: &mut CallShape| c.fragments_before_finish = 0,
    Severity::Behaviour,
    "arguments of get_time arrive only with the finish"
)]
fn a_second_call_streamed_otherwise_is_one_finding(
    #[case] change: fn(&mut CallShape),
    #[case] severity: Severity,
    #[case] gist: &str,
) {
    stream_finding(&check(&second(change)), severity, gist);
}

#[test]
fn arguments_held_back_into_one_fragment_are_behaviour() {
    let got = second(|c| {
        c.fragments = 1;
        c.fragments_before_finish = 1;
    });
    stream_finding(
        &check(&got),
        Severity::Behaviour,
        "arguments of get_time held back: upstream sent 2 fragments, the gateway 1",
    );
    // Gemini carries each call whole: nothing to compare.
    silent(&stream(&got, Some(&two_calls()), Provider::Gemini, false));
}

#[test]
fn a_stream_missing_upstreams_calls_is_breaking() {
    stream_finding(
        &check(&whole(vec![call(0, "get_weather", 3)])),
        Severity::Breaking,
        "stream carries 1 of upstream's 2 calls",
    );
}

#[test]
fn a_finish_after_upstreams_stream_failed_is_breaking() {
    stream_finding(
        &stream(&two_calls(), Some(&two_calls()), Provider::OpenaiChat, true),
        Severity::Breaking,
        "finish signal after upstream's stream failed or was cut",
    );
    // Responses ends a failed stream with `response.failed`: that is no finish.
    let failed = StreamRead {
        finishes: 0,
        failures: 1,
        ..two_calls()
    };
    let on = |got: &StreamRead| stream(got, Some(&two_calls()), Provider::OpenaiResponses, true);
    silent(&on(&failed));
    stream_finding(
        &on(&two_calls()),
        Severity::Breaking,
        "finish signal after upstream's stream failed or was cut",
    );
}

#[test]
fn other_than_one_finish_signal_is_behaviour() {
    for finishes in [0, 2] {
        let got = StreamRead {
            finishes,
            ..two_calls()
        };
        stream_finding(
            &check(&got),
            Severity::Behaviour,
            &format!("{finishes} finish signals (exactly one expected)"),
        );
    }
}

#[test]
fn a_stream_without_its_terminal_event_is_behaviour_named_in_the_clients_format() {
    let got = StreamRead {
        terminal: false,
        ..two_calls()
    };
    for (inbound, terminal) in [
        (Provider::OpenaiChat, "[DONE]"),
        (Provider::TextProtocol, "[DONE]"),
        (Provider::Anthropic, "message_stop"),
        (Provider::OpenaiResponses, "response.completed"),
        (Provider::Gemini, "end"),
    ] {
        stream_finding(
            &stream(&got, Some(&two_calls()), inbound, false),
            Severity::Behaviour,
            &format!("no terminal {terminal}"),
        );
    }
}

/// Chat's usage chunks, in stream order: (no choices, carries usage, after the finish).
fn usage(chunks: &[(bool, bool, bool)]) -> StreamRead {
    StreamRead {
        usage_chunks: chunks
            .iter()
            .map(|&(no_choices, usage, after_finish)| UsageChunk {
                no_choices,
                usage,
                after_finish,
            })
            .collect(),
        ..two_calls()
    }
}

#[test]
fn chat_usage_comes_in_its_own_final_chunk_and_only_when_asked() {
    let framing = |got: &StreamRead, asked: bool, gist: &str| {
        one(
            &usage_framing(got, asked),
            FindingKind::UsageFraming,
            Side::Downstream,
            Severity::Breaking,
            gist,
        );
    };
    silent(&usage_framing(&usage(&[(true, true, true)]), true));
    silent(&usage_framing(&usage(&[]), false));
    framing(
        &usage(&[(false, true, true)]),
        true,
        "usage on a chunk with choices",
    );
    framing(
        &usage(&[(true, true, false)]),
        true,
        "before the finish chunk",
    );
    framing(
        &usage(&[(true, false, true)]),
        true,
        "empty choices and no usage",
    );
    framing(&usage(&[(true, true, true)]), false, "did not ask for");
    let twice = usage_framing(&usage(&[(true, true, true), (true, true, true)]), true);
    assert!(
        twice
            .iter()
            .any(|f| f.message.contains("2 chunks carry usage")),
        "{twice:?}"
    );
}
