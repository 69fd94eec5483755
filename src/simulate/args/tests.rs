//! Tests of argument generation from a schema.

use super::*;

#[test]
fn defaults_examples_enums_then_types() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "default": "d"},
        "b": {"type": "string", "examples": ["x", "y"]},
        "c": {"type": "string", "enum": ["C", "F"]},
        "d": {"type": "integer"}, "e": {"type": "number"}, "f": {"type": "boolean"},
        "g": {"type": "array", "items": {"type": "integer"}},
        "h": {"type": ["null", "string"]},
        "i": {"anyOf": [{"type": "null"}, {"type": "number", "minimum": 3}]},
        "opt": {"type": "string"}
    }, "required": ["a", "b", "c", "d", "e", "f", "g", "h", "i"]});
    assert_eq!(
        generate(&schema),
        json!({"a": "d", "b": "x", "c": "C", "d": 1, "e": 1.5, "f": true, "g": [1], "h": "example", "i": 3.0})
    );
}

#[test]
fn refs_resolve_and_recursion_stops() {
    let schema = json!({"type": "object", "properties": {
        "node": {"$ref": "#/$defs/node"}}, "required": ["node"],
        "$defs": {"node": {"type": "object", "properties": {
            "next": {"$ref": "#/$defs/node"}, "v": {"type": "STRING"}}, "required": ["next", "v"]}}});
    let v = generate(&schema);
    assert_eq!(v["node"]["v"], "example");
    assert!(v.to_string().len() < 400, "{v}");
    let root_ref =
        json!({"type": "object", "properties": {"child": {"$ref": "#"}}, "required": ["child"]});
    assert!(generate(&root_ref).is_object());
}

#[test]
fn non_object_schemas_give_empty_arguments() {
    assert_eq!(generate(&json!(true)), json!({}));
    assert_eq!(generate(&json!({"type": "string"})), json!({}));
    assert_eq!(generate(&json!({"$ref": "#/nowhere"})), json!({}));
}

#[test]
fn a_pattern_is_written_to() {
    let v = generate(
        &json!({"type": "object", "required": ["title", "code"], "properties": {
        "title": {"type": "string", "pattern": "^[A-Z].*"},
        "code": {"type": "string", "pattern": "^[0-9]$"}}}),
    );
    assert_eq!(v, json!({"title": "Example", "code": "1"}));
}
