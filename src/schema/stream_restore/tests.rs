use serde_json::{Value, json};

use super::NullFilter;
use crate::schema::restore::restore_value;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["C", "F"]},
            "note": {"type": ["string", "null"]},
            "days": {"type": "integer"},
            "where": {"$ref": "#/$defs/place"},
            "stops": {"type": "array", "items": {"$ref": "#/$defs/place"}},
            "either": {"anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]},
                {"type": "object", "properties": {"c": {"type": "string"}, "d": {"type": "integer"}}}
            ]},
            "both": {"allOf": [
                {"type": "object", "properties": {"x": {"type": "integer"}}},
                {"type": "object", "properties": {"y": {"type": "integer"}}, "required": ["y"]}
            ]}
        },
        "required": ["city"],
        "$defs": {"place": {"type": "object", "properties": {
            "name": {"type": "string"}, "zip": {"type": "string"}
        }, "required": ["name"]}}
    })
}

fn run(filter: &mut NullFilter<'_>, pieces: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in pieces {
        out.extend(filter.push(p));
    }
    out.extend(filter.finish());
    out
}

const INPUTS: &[&str] = &[
    r#"{"city":"Paris","unit":null}"#,
    r#"{"unit":null,"city":"Paris"}"#,
    r#"{ "unit" : null , "days": null, "city" : "Pa\"ris,\"unit\":null" , "note": null }"#,
    r#"{"city":"Z\u00fcrich ❄️","un\u0069t":null,"days":-12.5e+3}"#,
    r#"{"city":null,"note":null,"unit":"C","days":7}"#,
    r#"{"city":"x","where":{"zip":null,"name":null},"stops":[{"name":"a","zip":null},{"zip":null,"name":"b"},[],null,1]}"#,
    r#"{"city":"x","either":{"c":"q","d":null},"unit":null}"#,
    r#"{"city":"x","either":{"a":"q","b":null}}"#,
    r#"{"city":"x","both":{"x":null,"y":null}}"#,
    "{\n  \"city\": \"Oslo\",\n  \"unit\": null\n}",
    r#"{"unit":null}"#,
    r#"{}"#,
    r#"{"city":"\\","unit":"F"}"#,
];

#[test]
fn any_chunking_gives_the_whole_input_result() {
    let schema = schema();
    for input in INPUTS {
        let bytes = input.as_bytes();
        let whole = run(&mut NullFilter::new(&schema), &[bytes]);
        for i in 0..=bytes.len() {
            let split = run(&mut NullFilter::new(&schema), &[&bytes[..i], &bytes[i..]]);
            assert_eq!(split, whole, "{input} split at {i}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(
            run(&mut NullFilter::new(&schema), &singles),
            whole,
            "{input} byte by byte"
        );
    }
}

#[test]
fn removes_exactly_what_the_buffered_restore_removes() {
    let schema = schema();
    for input in INPUTS {
        let out = run(&mut NullFilter::new(&schema), &[input.as_bytes()]);
        let got: Value = serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{input} → {}: {e}", String::from_utf8_lossy(&out)));
        let mut want: Value = serde_json::from_str(input).unwrap();
        restore_value(&schema, &mut want);
        assert_eq!(got, want, "{input}");
    }
}

#[test]
fn expected_outputs() {
    let schema = schema();
    let cases = [
        (r#"{"city":"Paris","unit":null}"#, r#"{"city":"Paris"}"#),
        (r#"{"unit":null,"city":"Paris"}"#, r#"{"city":"Paris"}"#),
        (r#"{"unit":null}"#, r#"{}"#),
        // `note` accepts null and `city` is required: both stay.
        (
            r#"{"city":null,"note":null,"days":null}"#,
            r#"{"city":null,"note":null}"#,
        ),
        (
            r#"{"city":"x","stops":[{"name":"a","zip":null}]}"#,
            r#"{"city":"x","stops":[{"name":"a"}]}"#,
        ),
        // A string that looks like a member is text.
        (
            r#"{"city":"\",\"unit\":null","unit":null}"#,
            r#"{"city":"\",\"unit\":null"}"#,
        ),
        // A bare anyOf object is held whole and written compactly.
        (
            r#"{"city":"x","either":{ "c": "q", "d": null }}"#,
            r#"{"city":"x","either":{"c":"q"}}"#,
        ),
    ];
    for (input, want) in cases {
        let out = run(&mut NullFilter::new(&schema), &[input.as_bytes()]);
        assert_eq!(String::from_utf8(out).unwrap(), want, "{input}");
    }
}

#[test]
fn holds_back_at_most_the_current_member() {
    let schema = schema();
    let mut f = NullFilter::new(&schema);
    // Inside a string value: everything is forwarded at once.
    assert_eq!(f.push(br#"{"city":"Par"#), br#"{"city":"Par"#);
    assert_eq!(f.push(br#"is""#), br#"is""#);
    // A member that may be removed is held until its value is known.
    assert_eq!(f.push(br#","unit":nu"#), b"");
    assert_eq!(f.push(b"ll"), b"");
    // A key that cannot be removed is forwarded as soon as it is read.
    assert_eq!(f.push(br#","note""#), br#","note""#);
    assert_eq!(f.push(b":1"), b":1");
    // A removable key whose value is not null: forwarded once the value starts.
    assert_eq!(f.push(br#","unit":"#), b"");
    assert_eq!(f.push(br#""C"}"#), br#","unit":"C"}"#);
    assert_eq!(f.finish(), b"");
}

#[test]
fn arguments_cut_short_are_released_on_finish() {
    let schema = schema();
    let mut f = NullFilter::new(&schema);
    let mut out = f.push(br#"{"city":"Rome","unit":n"#);
    assert_eq!(out, br#"{"city":"Rome""#);
    out.extend(f.finish());
    assert_eq!(out, br#"{"city":"Rome","unit":n"#);
}
