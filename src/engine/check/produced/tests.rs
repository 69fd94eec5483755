//! The contract a model's own answer keeps, by finding kind.

use serde_json::json;

use super::{Asked, produced};
use crate::engine::check::FindingKind;
use crate::model::{AllowedMode, Outcome, Tool, ToolCall, ToolChoice};

fn tools() -> Vec<Tool> {
    let weather = json!({"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": false});
    let tool = |name: &str, parameters| -> Tool {
        serde_json::from_value(json!({"name": name, "parameters": parameters})).unwrap()
    };
    vec![
        tool("get_weather", weather),
        tool("get_time", json!({"type": "object", "properties": {}})),
    ]
}

fn answer(calls: &[(&str, serde_json::Value)]) -> Outcome {
    Outcome {
        tool_calls: calls
            .iter()
            .enumerate()
            .map(|(i, (n, a))| ToolCall::unsigned(format!("call_{i}"), *n, a.clone()))
            .collect(),
        ..Outcome::default()
    }
}

fn kinds(choice: Option<&ToolChoice>, parallel: Option<bool>, got: &Outcome) -> Vec<FindingKind> {
    let tools = tools();
    let asked = Asked {
        choice,
        parallel,
        tools: &tools,
    };
    produced(&asked, got).into_iter().map(|f| f.kind).collect()
}

#[test]
fn each_choice_is_honoured_or_found() {
    let none = answer(&[]);
    let weather = answer(&[("get_weather", json!({"city": "Oslo"}))]);
    let time = answer(&[("get_time", json!({}))]);
    let honoured = FindingKind::ChoiceHonoured;
    assert!(kinds(None, None, &none).is_empty());
    assert!(kinds(Some(&ToolChoice::Auto), None, &weather).is_empty());
    assert_eq!(kinds(Some(&ToolChoice::None), None, &weather), [honoured]);
    assert!(kinds(Some(&ToolChoice::None), None, &none).is_empty());
    assert_eq!(kinds(Some(&ToolChoice::Required), None, &none), [honoured]);
    assert!(kinds(Some(&ToolChoice::Required), None, &time).is_empty());
    let named = ToolChoice::Forced("get_weather".into());
    assert!(kinds(Some(&named), None, &weather).is_empty());
    assert_eq!(kinds(Some(&named), None, &time), [honoured], "widened");
    assert_eq!(kinds(Some(&named), None, &none), [honoured], "dropped");
    let allowed = ToolChoice::Allowed {
        mode: AllowedMode::Required,
        tools: vec!["get_time".into()],
    };
    assert!(kinds(Some(&allowed), None, &time).is_empty());
    assert_eq!(kinds(Some(&allowed), None, &weather), [honoured]);
    assert_eq!(kinds(Some(&allowed), None, &none), [honoured]);
    let two = answer(&[
        ("get_weather", json!({"city": "Oslo"})),
        ("get_time", json!({})),
    ]);
    assert_eq!(kinds(None, Some(false), &two), [honoured]);
    assert!(kinds(None, Some(true), &two).is_empty());
}

#[test]
fn each_call_names_a_tool_in_force_with_valid_arguments() {
    let valid = FindingKind::CallValid;
    assert_eq!(
        kinds(None, None, &answer(&[("get_news", json!({}))])),
        [valid]
    );
    assert_eq!(
        kinds(None, None, &answer(&[("get_weather", json!("Oslo"))])),
        [valid]
    );
    assert_eq!(
        kinds(None, None, &answer(&[("get_weather", json!({}))])),
        [valid],
        "required"
    );
    assert_eq!(
        kinds(None, None, &answer(&[("get_weather", json!({"city": 3}))])),
        [valid],
        "type"
    );
    assert_eq!(
        kinds(
            None,
            None,
            &answer(&[("get_weather", json!({"city": "Oslo", "x": 1}))])
        ),
        [valid],
        "additionalProperties"
    );
}
