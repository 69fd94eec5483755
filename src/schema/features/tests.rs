//! Schema features, as the server scores break them down.

use serde_json::json;

use super::schema_features;

#[test]
fn each_feature_is_named_where_it_appears() {
    let plain = json!({"type": "object", "properties": {"city": {"type": "string"}}});
    assert!(schema_features(&plain).is_empty());
    let all = json!({
        "type": "object",
        "$defs": {"unit": {"enum": ["c", "f"]}},
        "properties": {
            "unit": {"$ref": "#/$defs/unit"},
            "when": {"type": ["string", "null"], "format": "date-time"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "free": {"type": "object"},
            "a": {"type": "object", "properties": {"b": {"type": "object", "properties": {
                "c": {"type": "object", "properties": {"d": {"type": "string"}}}}}}}
        }
    });
    assert_eq!(
        schema_features(&all),
        [
            "$ref",
            "anyOf",
            "deep nesting",
            "enum",
            "format",
            "object without properties",
            "pattern",
            "type list"
        ]
    );
}

#[test]
fn a_property_named_like_a_keyword_is_not_the_keyword() {
    // `enum` values and defaults are data, not schemas.
    let s = json!({"type": "object", "properties": {"x": {"enum": [{"type": "object"}]}}});
    assert_eq!(schema_features(&s), ["enum"]);
}
