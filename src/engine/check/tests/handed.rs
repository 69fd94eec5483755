//! What a library handed its caller (`handed`), against what upstream answered: the calls in
//! the accumulated result and the chunks, ids, errors, finish in the library's words, usage.

use serde_json::json;

use super::super::{Finding, FindingKind};
use super::super::{assemble, handed, usage_framed};
use crate::engine::handed::{Handed, HandedCall, HandedChunk, HandedError};
use crate::model::{Finish, Outcome, Provider, Severity, ToolCall, Usage};

/// The check on what a library handed over (`got`), upstream having answered `status` with
/// `expected`.
fn judged(got: Handed<'_>, api: Provider, status: u16, expected: Option<&Outcome>) -> Vec<Finding> {
    handed(api, &got, status, (expected, None), None)
}

fn chunk(calls: Vec<HandedCall>) -> HandedChunk {
    HandedChunk {
        calls,
        ..Default::default()
    }
}

fn delta(index: Option<u64>, id: Option<&str>, name: Option<&str>, args: &str) -> HandedCall {
    HandedCall {
        index,
        id: id.map(str::to_string),
        name: name.map(str::to_string),
        arguments: Some(json!(args)),
    }
}

#[test]
fn assemble_tells_calls_at_one_index_apart_by_id() {
    let chunks = vec![
        chunk(vec![delta(Some(0), Some("a"), Some("w"), "")]),
        chunk(vec![delta(Some(0), None, None, "{\"c\":")]),
        chunk(vec![delta(Some(0), None, None, "1}")]),
        chunk(vec![delta(Some(0), Some("b"), Some("w"), "{}")]),
    ];
    let calls = assemble(&chunks);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].parsed_arguments(), Ok(json!({"c": 1})));
    assert_eq!(calls[1].id.as_deref(), Some("b"));
}

#[test]
fn assemble_tells_calls_sharing_one_id_apart_by_index() {
    let chunks = vec![
        chunk(vec![delta(Some(0), Some("call_0"), Some("w"), "{\"c\":1}")]),
        chunk(vec![delta(Some(1), Some("call_0"), Some("w"), "")]),
        chunk(vec![delta(Some(1), None, None, "{\"c\":2}")]),
    ];
    let calls = assemble(&chunks);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].parsed_arguments(), Ok(json!({"c": 1})));
    assert_eq!(calls[1].parsed_arguments(), Ok(json!({"c": 2})));
}

fn expected() -> Outcome {
    Outcome {
        tool_calls: vec![ToolCall::unsigned("call_1", "w", json!({"c": 1}))],
        finish: Finish::ToolCalls,
        ..Default::default()
    }
}

#[test]
fn swallowed_stream_calls_are_breaking() {
    let got = Handed {
        chunks: Some(&[HandedChunk::default()]),
        calls: &[delta(None, Some("call_1"), Some("w"), "{\"c\":1}")],
        ..Default::default()
    };
    let findings = judged(got, Provider::OpenaiChat, 200, Some(&expected()));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(
        findings[0]
            .message
            .starts_with("streamed calls never yielded")
    );
}

#[test]
fn lost_ids_and_unparsable_arguments_are_breaking() {
    let got = Handed {
        calls: &[delta(None, None, Some("w"), "{\"c\":")],
        ..Default::default()
    };
    let findings = judged(got, Provider::OpenaiChat, 200, Some(&expected()));
    let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
    assert!(messages[0].contains("do not parse"), "{messages:?}");
    assert!(messages[1].contains("without its id"), "{messages:?}");
    // Gemini has no wire ids: only the arguments are wrong.
    let findings = judged(got, Provider::Gemini, 200, Some(&expected()));
    assert_eq!(findings.len(), 1);
}

#[test]
fn an_upstream_error_must_reach_the_caller() {
    let findings = judged(Handed::default(), Provider::Anthropic, 500, None);
    assert!(findings[0].message.contains("as a success"));
    let error = HandedError {
        kind: "APIError".into(),
        message: "boom".into(),
        status: Some(500),
    };
    let raised = Handed {
        error: Some(&error),
        ..Default::default()
    };
    assert!(judged(raised, Provider::Anthropic, 500, None).is_empty());
}

fn no_arguments() -> Outcome {
    Outcome {
        tool_calls: vec![ToolCall::unsigned("call_1", "now", json!({}))],
        finish: Finish::ToolCalls,
        ..Default::default()
    }
}

/// `now` streamed as `fragment` and handed over accumulated as `accumulated`, judged against
/// `expected`.
fn streamed(fragment: &str, accumulated: &str, expected: &Outcome) -> Vec<Finding> {
    let got = Handed {
        chunks: Some(&[chunk(vec![delta(
            Some(0),
            Some("call_1"),
            Some("now"),
            fragment,
        )])]),
        calls: &[delta(None, Some("call_1"), Some("now"), accumulated)],
        ..Default::default()
    };
    judged(got, Provider::OpenaiChat, 200, Some(expected))
}

#[test]
fn empty_streamed_arguments_beside_an_accumulated_empty_object_are_breaking() {
    let exp = no_arguments();
    let found = streamed("", "{}", &exp);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].severity, Severity::Breaking);
    assert!(
        found[0]
            .message
            .contains("in the chunks are \"\" (not JSON)")
    );
    // Chunks that say `{}`, or a result that says `""` too (one reading throughout), are silent.
    let same = |f: &str, a: &str| streamed(f, a, &exp);
    assert!(same("{}", "{}").is_empty());
    assert!(same("", "").is_empty());
}

/// A Chat stream: a finish chunk, then usage in a chunk of its own when `own_chunk`, else on
/// the finish chunk.
fn chat_stream(own_chunk: bool) -> Vec<u8> {
    let usage = json!({"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12});
    let mut finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    let mut lines = Vec::new();
    if own_chunk {
        lines.push(finish);
        lines.push(json!({"choices": [], "usage": usage}));
    } else {
        finish["usage"] = usage;
        lines.push(finish);
    }
    let mut body: String = lines.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

#[test]
fn usage_in_its_own_chunk_must_reach_the_caller_when_asked() {
    let lost = Handed::default();
    let usage = Usage {
        input_tokens: Some(5),
        output_tokens: Some(7),
    };
    let handed = Handed {
        usage: Some(&usage),
        ..Default::default()
    };
    let f = usage_framed(true, &chat_stream(true), &lost).expect("a finding");
    assert_eq!(f.kind, FindingKind::UsageFraming);
    assert_eq!(f.severity, Severity::Behaviour);
    assert!(usage_framed(true, &chat_stream(true), &handed).is_none());
    // Not asked (the library's choice), or not framed in its own chunk: nothing to judge.
    assert!(usage_framed(false, &chat_stream(true), &lost).is_none());
    assert!(usage_framed(true, &chat_stream(false), &lost).is_none());
    // An error handed over is judged elsewhere.
    let raised = Handed {
        error: Some(&HandedError::default()),
        ..Default::default()
    };
    assert!(usage_framed(true, &chat_stream(true), &raised).is_none());
}

#[test]
fn a_call_under_a_shared_upstream_id_may_get_an_id_of_its_own() {
    let call = |city: &str| ToolCall::unsigned("call_0", "w", json!({ "c": city }));
    let exp = Outcome {
        tool_calls: vec![call("a"), call("b")],
        finish: Finish::ToolCalls,
        ..Default::default()
    };
    let judged_with = |second: &str| {
        let calls = [
            delta(None, Some("call_0"), Some("w"), r#"{"c":"a"}"#),
            delta(None, Some(second), Some("w"), r#"{"c":"b"}"#),
        ];
        let got = Handed {
            calls: &calls,
            ..Default::default()
        };
        judged(got, Provider::OpenaiChat, 200, Some(&exp))
    };
    assert!(
        judged_with("x7Fq2").is_empty(),
        "{:?}",
        judged_with("x7Fq2")
    );
    assert!(
        judged_with("call_0").is_empty(),
        "{:?}",
        judged_with("call_0")
    );
    // A call whose id upstream gave it alone keeps it.
    let one = Outcome {
        tool_calls: vec![call("a")],
        finish: Finish::ToolCalls,
        ..Default::default()
    };
    let renamed = Handed {
        calls: &[delta(None, Some("x7Fq2"), Some("w"), r#"{"c":"a"}"#)],
        ..Default::default()
    };
    let findings = judged(renamed, Provider::OpenaiChat, 200, Some(&one));
    assert!(
        findings[0].message.contains("handed over as x7Fq2"),
        "{findings:?}"
    );
}

/// Upstream's only call cut by the output-token limit (Anthropic's eager streaming cut midway
/// through a parameter): no complete call, the cut one kept aside.
fn cut_only() -> Outcome {
    Outcome {
        finish: Finish::Length,
        raw_finish: Some("max_tokens".into()),
        truncated_call: Some(crate::model::TruncatedCall {
            id: "toolu_1".into(),
            name: "write_note".into(),
            arguments: "{\"title\":\"Quay ro".into(),
        }),
        ..Default::default()
    }
}

#[test]
fn a_cut_only_call_left_out_of_the_stream_is_faithful_and_handed_as_finished_is_breaking() {
    let left_out = Handed {
        chunks: Some(&[HandedChunk {
            finish: Some("max_tokens".into()),
            ..Default::default()
        }]),
        finish: Some("max_tokens"),
        ..Default::default()
    };
    let exp = cut_only();
    let silent = judged(left_out, Provider::Anthropic, 200, Some(&exp));
    assert!(silent.is_empty(), "{silent:?}");
    let finished = Handed {
        calls: &[delta(
            None,
            Some("toolu_1"),
            Some("write_note"),
            "{\"title\":\"Quay ro",
        )],
        finish: Some("tool_calls"),
        ..Default::default()
    };
    let findings = judged(finished, Provider::Anthropic, 200, Some(&exp));
    let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        ["finish tool_calls for upstream's output-token limit"],
        "{findings:?}"
    );
}

#[test]
fn a_library_is_judged_by_the_same_severity_table_as_a_gateway() {
    use super::super::downstream::Check;
    // Usage upstream counted and a library dropped: behaviour, as a gateway dropping it.
    let counted = Outcome {
        usage: Some(Usage {
            output_tokens: Some(7),
            ..Default::default()
        }),
        ..expected()
    };
    let got = Handed {
        calls: &[delta(None, Some("call_1"), Some("w"), "{\"c\":1}")],
        finish: Some("stop"),
        ..Default::default()
    };
    let found = judged(got, Provider::OpenaiChat, 200, Some(&counted));
    let severity = |gist: &str| {
        let f = found.iter().find(|f| f.message.contains(gist));
        f.unwrap_or_else(|| panic!("no {gist:?} in {found:#?}"))
            .severity
    };
    assert_eq!(severity("usage not handed"), Check::UsageLost.severity());
    assert_eq!(Check::UsageLost.severity(), Severity::Behaviour);
    // Calls handed over with a finish that says they are not: breaking, as over HTTP.
    assert_eq!(
        severity("with tool calls"),
        Check::FinishWithCalls.severity()
    );
    assert_eq!(Check::FinishWithCalls.severity(), Severity::Breaking);
}
