//! Anthropic's fine-grained tool streaming (`simulate/eager.rs`): fragments cut inside tokens,
//! no accumulated prefix valid JSON before the end, and a `max_tokens` cut midway through a
//! parameter's value; the Messages stream of an eager tool against a plain one.

use serde_json::{Value, json};

use super::super::answer;
use super::super::eager::{cut, fragments};
use super::support::{request, sse_data};
use crate::scenario::{Scenario, ScenarioCall};

const ARGS: &str =
    r#"{"title":"Ode to a long key","lines":["first \"line\"","second"],"count":1234}"#;

fn valid(s: &str) -> bool {
    serde_json::from_str::<Value>(s).is_ok()
}

#[test]
fn eager_fragments_cut_inside_tokens_and_no_prefix_is_valid_json() {
    for seed in 0..5 {
        let parts = fragments(ARGS, seed);
        assert_eq!(parts.concat(), ARGS, "seed {seed}");
        assert!(parts.len() > 3, "{parts:?}");
        let mut acc = String::new();
        for p in &parts[..parts.len() - 1] {
            acc.push_str(p);
            assert!(!valid(&acc), "prefix {acc:?} is valid JSON");
            let (before, after) = (acc.chars().last(), ARGS[acc.len()..].chars().next());
            let structural = |c: Option<char>| c.is_some_and(|c| "{}[],:".contains(c));
            assert!(
                !structural(before) && !structural(after),
                "cut between tokens at {acc:?}"
            );
            assert!(!acc.ends_with('\\'), "cut inside an escape at {acc:?}");
        }
        assert!(parts.iter().take(parts.len() - 1).all(|p| p.len() >= 11));
    }
}

#[test]
fn a_max_tokens_cut_ends_midway_through_the_last_string_value() {
    let c = cut(ARGS);
    assert!(ARGS.starts_with(c) && c.len() < ARGS.len());
    assert!(!valid(c), "{c:?}");
    assert!(c.ends_with(r#""lines":["first \"line\"","sec"#), "{c:?}");
    // No string value: cut through the middle.
    assert_eq!(cut(r#"{"n":12345678}"#), r#"{"n":12"#);
}

fn stream_of(eager: bool, scenario: &Scenario) -> (Vec<String>, Value) {
    let mut tool = json!({"name": "write_note", "input_schema": {"type": "object"}});
    if eager {
        tool["eager_input_streaming"] = json!(true);
    }
    let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": true,
        "messages": [{"role": "user", "content": "write"}], "tools": [tool]});
    let resp = answer(
        &request(super::support::P::Anthropic, &body, true),
        scenario,
    );
    assert_eq!(resp.status, 200);
    let events = sse_data(&resp.body.bytes());
    let parts = (events.iter())
        .filter(|e| e.pointer("/delta/type") == Some(&json!("input_json_delta")))
        .filter_map(|e| e.pointer("/delta/partial_json").and_then(Value::as_str))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let stop = (events.iter())
        .find_map(|e| e.pointer("/delta/stop_reason").cloned())
        .unwrap_or(Value::Null);
    (parts, stop)
}

#[test]
fn an_eager_tool_streams_its_arguments_the_eager_way_and_a_cut_stops_at_max_tokens() {
    let arguments = serde_json::from_str(ARGS).unwrap();
    let call = ScenarioCall {
        name: "write_note".into(),
        arguments,
        raw_arguments: None,
        id: None,
    };
    let mut scenario = Scenario {
        calls: vec![call],
        ..Scenario::default()
    };
    let (plain, _) = stream_of(false, &scenario);
    let (eager, stop) = stream_of(true, &scenario);
    assert_eq!(plain.concat(), eager.concat());
    assert_ne!(plain, eager, "the eager fragments are not the default ones");
    assert_eq!(stop, "tool_use");
    scenario.max_tokens_mid_call = true;
    let (cut_parts, stop) = stream_of(true, &scenario);
    assert_eq!(stop, "max_tokens");
    assert_eq!(cut_parts.concat(), cut(&eager.concat()));
}
