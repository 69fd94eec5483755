//! The fast reader against serde_json (seeded random texts): whatever it reads, it reads into
//! exactly what serde_json builds, and it ends where serde_json ends.

use serde_json::Deserializer;

use crate::providers::testkit::XorShift;
use crate::textcall::body::Calls;
use crate::textcall::{fast, json};

const SCALARS: &[&str] = &[
    "0",
    "-0",
    "7",
    "-7",
    "01",
    "1.5",
    "1e3",
    "-",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "true",
    "tru",
    "false",
    "null",
    "nul",
    "\"\"",
    "\"a\"",
    "\"é 日本\"",
    "\"a\\nb\\t\\\"c\\\\/\\/\\b\\f\\r\"",
    "\"\\u00e9\"",
    "\"\\x\"",
    "\"\u{1}\"",
    "\"open",
];

const KEYS: &[&str] = &[
    "\"name\"",
    "\"arguments\"",
    "\"parameters\"",
    "\"q\"",
    "\"a/b~c\"",
    "\"n\\u0061me\"",
    "\"na\\/me\"",
    "1",
];

const SPACE: &[&str] = &["", "", "", " ", "\n", "\t", "\r\n  ", "\u{a0}"];

/// A JSON-like text: mostly valid, with the odd flaw the reader must give up on.
fn value(rng: &mut XorShift, depth: usize, out: &mut String) {
    let kind = rng.below(if depth > 3 { 2 } else { 5 });
    value_of(kind, rng, depth, out);
}

fn value_of(kind: usize, rng: &mut XorShift, depth: usize, out: &mut String) {
    let space = |rng: &mut XorShift, out: &mut String| out.push_str(SPACE[rng.below(SPACE.len())]);
    match kind {
        0 | 1 => out.push_str(SCALARS[rng.below(SCALARS.len())]),
        2 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                space(rng, out);
                value(rng, depth + 1, out);
                space(rng, out);
            }
            out.push_str(["]", "]", "]", ",]", ""][rng.below(5)]);
        }
        3 => {
            // A JSON text inside a string, escaped as a model writes `arguments`.
            let mut inner = String::new();
            value(rng, depth + 1, &mut inner);
            out.push_str(&serde_json::to_string(&inner).unwrap_or_default());
        }
        _ => {
            out.push('{');
            // Now and then an object past the reader's small-object size, with repeated keys.
            let large = rng.below(6) == 0;
            let members = if large {
                12 + rng.below(12)
            } else {
                rng.below(4)
            };
            for i in 0..members {
                if i > 0 {
                    out.push(',');
                }
                space(rng, out);
                if large {
                    out.push_str(&format!("\"k{}\"", rng.below(24)));
                } else {
                    out.push_str(KEYS[rng.below(KEYS.len())]);
                }
                space(rng, out);
                out.push(':');
                space(rng, out);
                value(rng, depth + 1, out);
            }
            space(rng, out);
            out.push_str(["}", "}", "}", "}", "}", ",}", "", "} x"][rng.below(8)]);
        }
    }
}

#[test]
fn fast_reader_reads_as_serde_json() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let mut scratch = fast::Scratch::default();
    let mut members = Vec::new();
    let (mut documents, mut calls) = (0, 0);
    for i in 0..20_000 {
        let mut text = String::new();
        // Every other text is an object, as a call body is.
        value_of(
            if i % 2 == 0 { 4 } else { rng.below(5) },
            &mut rng,
            0,
            &mut text,
        );
        if let Some(t) = fast::read_document(&text, &mut members) {
            documents += 1;
            assert_eq!(json::parse(&text).ok(), Some(t), "{text:?}");
        }
        assert!(members.is_empty(), "members left behind by {text:?}");
        if let Some((c, end)) = fast::read_call(&text, &mut scratch) {
            calls += 1;
            let mut serde = Deserializer::from_str(&text).into_iter::<Calls>();
            let read = serde.next().and_then(Result::ok);
            assert_eq!(read, Some(Calls::One(c)), "{text:?}");
            assert_eq!(serde.byte_offset(), end, "{text:?}");
        }
    }
    // The generator must exercise the reader, not only its refusals.
    assert!(
        documents > 5_000 && calls > 2_000,
        "{documents} documents, {calls} calls"
    );
}

#[test]
fn repeated_keys_at_any_depth_have_pointers() {
    let text = r#"{"a": {"b/c": [{"d": 1, "d": 2}], "e~": 0, "e~": 1}, "a": 3}"#;
    let want = Some(["/a/b~1c/0/d", "/a/e~0", "/a"].map(String::from).to_vec());
    let read = fast::read_document(text, &mut Vec::new()).map(|t| t.duplicates);
    assert_eq!(read, want);
    assert_eq!(json::parse(text).map(|t| t.duplicates).ok(), want);
}

#[test]
fn large_objects_keep_order_and_last_values() {
    // 20 distinct keys (past the small-object size), repeated before and after the 16th.
    let mut members: Vec<String> = (0..20).map(|i| format!("\"k{i}\": {i}")).collect();
    members.insert(3, "\"k1\": 100".into());
    members.push("\"k2\": 200".into());
    members.push("\"k19\": 300".into());
    let text = format!("{{{}}}", members.join(", "));
    let fast = fast::read_document(&text, &mut Vec::new());
    let serde = json::parse(&text).ok();
    assert_eq!(fast, serde);
    let t = fast.unwrap_or_else(|| panic!("read {text}"));
    assert_eq!(t.duplicates, ["/k1", "/k2", "/k19"]);
    let keys: Vec<&String> = t
        .value
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .collect();
    assert_eq!(keys.len(), 20);
    assert_eq!(keys.first().map(|k| k.as_str()), Some("k0"));
    assert_eq!(t.value.get("k1"), Some(&100.into()));
    assert_eq!(t.value.get("k19"), Some(&300.into()));
}
