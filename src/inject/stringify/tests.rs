//! Tests of the JSON.stringify-compatible rendering of injected tools.

use super::*;
use serde_json::json;

#[test]
fn numbers_print_like_javascript() {
    let cases = [
        (1.0, "1"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (100.0, "100"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (0.000001, "0.000001"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (123.456, "123.456"),
    ];
    for (f, want) in cases {
        assert_eq!(js_number(f), want, "{f}");
    }
}

#[test]
fn stringify_matches_json_stringify() {
    let v: Value = serde_json::from_str(
        r#"{"b":1.0,"a":"x/y é \u2028\u2029 \u0001\u001f\u007f \b\f\n\r\t \"\\","n":[null,true,9007199254740993,-3]}"#,
    )
    .unwrap_or_default();
    // Expected text as node's JSON.stringify prints it for the same input (checked with node).
    let want = "{\"b\":1,\"a\":\"x/y é \u{2028}\u{2029} \\u0001\\u001f\u{7f} \\b\\f\\n\\r\\t \\\"\\\\\",\"n\":[null,true,9007199254740992,-3]}";
    assert_eq!(js_stringify(&v), want);
    assert_eq!(js_string("a\"b"), "\"a\\\"b\"");
    assert_eq!(js_stringify(&json!({})), "{}");
}
