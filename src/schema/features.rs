//! The schema features a tool's parameters use, by which server mode breaks down its share of
//! schema-valid forced calls: `$ref`/`$defs`, `anyOf`/`oneOf`/`allOf`, type lists, `enum`/`const`,
//! `pattern`, `format`, objects without properties, nesting deeper than three objects.

use std::collections::BTreeSet;

use serde_json::Value;

/// The schema features a tool's parameters use (for the scores by feature): `$ref`/`$defs`,
/// `anyOf`/`oneOf`, type lists, `enum`, `pattern`, `format`, objects without properties, and
/// nesting deeper than three objects.
pub fn schema_features(schema: &Value) -> Vec<&'static str> {
    let mut seen = BTreeSet::new();
    walk(schema, 0, &mut seen);
    seen.into_iter().collect()
}

fn walk(v: &Value, depth: usize, seen: &mut BTreeSet<&'static str>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("$ref") || m.contains_key("$defs") || m.contains_key("definitions") {
                seen.insert("$ref");
            }
            if m.contains_key("anyOf") || m.contains_key("oneOf") || m.contains_key("allOf") {
                seen.insert("anyOf");
            }
            if m.get("type").is_some_and(Value::is_array) {
                seen.insert("type list");
            }
            if m.contains_key("enum") || m.contains_key("const") {
                seen.insert("enum");
            }
            if m.contains_key("pattern") {
                seen.insert("pattern");
            }
            if m.contains_key("format") {
                seen.insert("format");
            }
            let object = m.get("type").and_then(Value::as_str) == Some("object");
            if object && !m.contains_key("properties") {
                seen.insert("object without properties");
            }
            let depth = depth + usize::from(object);
            if depth > 3 {
                seen.insert("deep nesting");
            }
            for (k, x) in m {
                if k != "enum" && k != "const" && k != "default" && k != "examples" {
                    walk(x, depth, seen);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk(x, depth, seen)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
