//! Tests of the drift report's outcome comparison.

use super::*;
use crate::model::ToolCall;

fn judged(
    verdict: ContractVerdict,
    calls: &[(&str, &str)],
    text: Option<&str>,
    raw: &str,
) -> Judged {
    let tool_calls = calls
        .iter()
        .map(|(id, name)| ToolCall::unsigned(*id, *name, serde_json::json!({"city": "Paris"})))
        .collect();
    let o = Outcome {
        tool_calls,
        text: text.map(str::to_string),
        raw_finish: Some(raw.into()),
        ..Outcome::default()
    };
    Judged {
        outcomes: vec![Ok(o)],
        verdict,
    }
}

/// A passing trial whose one call, `get_weather`, has id `id`.
fn passed_with_call(id: &str) -> Judged {
    judged(
        ContractVerdict::Pass,
        &[(id, "get_weather")],
        None,
        "tool_calls",
    )
}

#[test]
fn ids_alone_change_nothing() {
    let a = passed_with_call("call_1");
    let b = passed_with_call("call_2");
    assert_eq!(diff(&a, &b, None, None), (vec![], false));
}

#[test]
fn a_flipped_forced_choice_is_breaking_once() {
    let a = passed_with_call("call_1");
    let fail = ContractVerdict::Fail {
        problems: vec!["tool_choice forced get_weather: expected a call".into()],
    };
    let b = judged(fail, &[], Some("Sunny."), "stop");
    let (f, changed) = diff(&a, &b, Some("m-1"), Some("m-1"));
    let kinds: Vec<Kind> = f.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [Kind::Verdict, Kind::ToolCalls, Kind::Text, Kind::Finish]
    );
    assert_eq!(f[0].severity, Severity::Breaking);
    assert!(changed);
}

#[test]
fn a_new_decoder_error_is_breaking() {
    let a = judged(ContractVerdict::Pass, &[], Some("x"), "stop");
    let b = Judged {
        outcomes: vec![Err("bad chunk".into())],
        verdict: ContractVerdict::Pass,
    };
    let (f, _) = diff(&a, &b, None, None);
    assert_eq!(f[0].kind, Kind::Decode);
    assert_eq!(f[0].severity, Severity::Breaking);
    assert_eq!(f[0].after.as_deref(), Some("error: bad chunk"));
}
