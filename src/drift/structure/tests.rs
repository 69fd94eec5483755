//! Tests of the drift report's structural comparison.

use super::*;

fn shape(body: &serde_json::Value) -> Shape {
    let c: crate::cassette::Cassette = serde_json::from_value(serde_json::json!({
        "tooltape": 1, "trial": "t",
        "provenance": {"kind": "synthetic", "date": "2026-01-01", "model": "m", "tooltape": "0"},
        "interactions": [{"request": {"method": "POST", "path": "/", "body": {}},
                          "response": {"status": 200, "body": body}}]
    }))
    .unwrap();
    super::super::shape::shape_of(&c)
}

#[test]
fn rename_is_one_finding() {
    let old = shape(
        &serde_json::json!({"choices": [{"finish_reason": "stop", "message": {"refusal": null, "content": "x"}}]}),
    );
    let new = shape(
        &serde_json::json!({"choices": [{"stop_reason": "stop", "message": {"refusal": null, "content": "x"}}]}),
    );
    let (f, _) = diff(&old, &new, false);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kind, Kind::FieldRenamed);
    assert_eq!(f[0].path.as_deref(), Some("$.choices[].finish_reason"));
}

#[test]
fn ids_are_noise() {
    let old = shape(
        &serde_json::json!({"id": "chatcmpl-1", "created": 1, "usage": {"total_tokens": 3}, "x": 1}),
    );
    let new = shape(
        &serde_json::json!({"id": "chatcmpl-2", "created": 2, "usage": {"total_tokens": 4, "extra": 1}, "x": 1}),
    );
    let (f, _) = diff(&old, &new, false);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Cosmetic);
    assert_eq!(f[0].after.as_deref(), Some("$.created, $.id, $.usage"));
}
