//! Arguments the simulated model writes for a tool: generated from the tool's parameter schema
//! (JSON Schema, or Gemini's OpenAPI subset with upper-case types).

use serde_json::{Map, Value, json};

/// Deeper schemas are cut off so recursive `$ref`s cannot loop. Deep enough for every schema strict mode accepts (10 object levels, each possibly behind a
/// `$ref` or `anyOf`), shallow enough to stop recursive `$ref` cycles.
const MAX_DEPTH: usize = 32;

/// Arguments for `schema`: `default`, then `examples[0]` (or OpenAPI `example`), `const`, the
/// first `enum` value, then a value by type (string "example", integer 1, number 1.5, boolean
/// true, an array of one item, an object with its required properties). `$ref`s are resolved
/// against the schema itself; `anyOf`/`oneOf`/nullable take the first non-null branch.
pub(crate) fn generate(schema: &Value) -> Value {
    let v = value(schema, schema, 0);
    // A tool's arguments are always an object, even for a schema that says otherwise.
    if v.is_object() { v } else { json!({}) }
}

fn value(schema: &Value, root: &Value, depth: usize) -> Value {
    let Some(obj) = schema.as_object() else {
        // `true` / absent schemas accept anything: write a string like a model would.
        return json!("example");
    };
    if depth > MAX_DEPTH {
        return shallow(obj);
    }
    if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
        return match resolve(root, target) {
            Some(s) => value(s, root, depth + 1),
            None => json!({}),
        };
    }
    for key in ["default", "const"] {
        if let Some(v) = obj.get(key) {
            return v.clone();
        }
    }
    if let Some(v) = obj.get("examples").and_then(|e| e.as_array()?.first()) {
        return v.clone();
    }
    if let Some(v) = obj.get("example") {
        return v.clone();
    }
    if let Some(v) = obj.get("enum").and_then(|e| e.as_array()?.first()) {
        return v.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array)
            && let Some(b) = branches.iter().find(|b| !is_null_schema(b))
        {
            return value(b, root, depth + 1);
        }
    }
    match type_of(obj).as_str() {
        "string" => string(obj),
        "integer" => json!(clamp(obj, 1.0) as i64),
        "number" => json!(clamp(obj, 1.5)),
        "boolean" => json!(true),
        "null" => Value::Null,
        "array" => {
            let item = obj
                .get("items")
                .map_or_else(|| json!("example"), |s| value(s, root, depth + 1));
            let n = obj
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .clamp(1, 8);
            Value::Array(vec![item; n as usize])
        }
        _ => object(obj, root, depth),
    }
}

/// The first non-null `type` (also from a type array), lower-cased; inferred when absent.
fn type_of(obj: &Map<String, Value>) -> String {
    let t = match obj.get("type") {
        Some(Value::String(s)) => Some(s.to_ascii_lowercase()),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_ascii_lowercase)
            .find(|t| t != "null"),
        _ => None,
    };
    t.unwrap_or_else(|| {
        if obj.contains_key("properties") {
            "object".into()
        } else if obj.contains_key("items") {
            "array".into()
        } else {
            "string".into()
        }
    })
}

fn is_null_schema(s: &Value) -> bool {
    matches!(s.get("type").and_then(Value::as_str), Some(t) if t.eq_ignore_ascii_case("null"))
}

fn string(obj: &Map<String, Value>) -> Value {
    let base = match obj.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z",
        Some("date") => "2026-01-01",
        Some("time") => "12:00:00",
        Some("email") => "user@example.com",
        Some("uri" | "url") => "https://example.com",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some("ipv4") => "192.0.2.1",
        Some("hostname") => "example.com",
        _ => "example",
    };
    let mut s = base.to_string();
    let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    while s.len() < min.min(256) {
        s.push('x');
    }
    if let Some(max) = obj.get("maxLength").and_then(Value::as_u64) {
        s.truncate((max as usize).max(min.min(256)).min(s.len()));
    }
    if let Some(pattern) = obj.get("pattern").and_then(Value::as_str) {
        return json!(matching(pattern, s));
    }
    Value::String(s)
}

/// A string `pattern` accepts, as a model writing to it would: `preferred` when it matches, else
/// the first of a few common shapes that does (a pattern none fits keeps `preferred`).
fn matching(pattern: &str, preferred: String) -> String {
    let schema = json!({"type": "string", "pattern": pattern});
    let Ok(v) = crate::schema::validator(&schema) else {
        return preferred;
    };
    let shapes = [
        "Example",
        "EXAMPLE",
        "example1",
        "ABC",
        "abc",
        "A1",
        "1",
        "2026-01-01",
        "a-b",
    ];
    std::iter::once(preferred.as_str())
        .chain(shapes)
        .find(|c| v.is_valid(&json!(c)))
        .map_or(preferred.clone(), str::to_string)
}

/// `preferred`, moved into `[minimum, maximum]` when the schema bounds it.
fn clamp(obj: &Map<String, Value>, preferred: f64) -> f64 {
    let mut v = preferred;
    if let Some(min) = obj.get("minimum").and_then(Value::as_f64)
        && v < min
    {
        v = min;
    }
    if let Some(min) = obj.get("exclusiveMinimum").and_then(Value::as_f64)
        && v <= min
    {
        v = min + 1.0;
    }
    if let Some(max) = obj.get("maximum").and_then(Value::as_f64)
        && v > max
    {
        v = max;
    }
    if let Some(max) = obj.get("exclusiveMaximum").and_then(Value::as_f64)
        && v >= max
    {
        v = max - 1.0;
    }
    v
}

fn object(obj: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let props = obj.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    // Property order follows the schema (as strict-mode models do), then stray required names.
    if let Some(props) = props {
        for (name, s) in props {
            if required.contains(&name.as_str()) {
                out.insert(name.clone(), value(s, root, depth + 1));
            }
        }
    }
    for name in required {
        if !out.contains_key(name) {
            out.insert(name.to_string(), json!("example"));
        }
    }
    Value::Object(out)
}

/// A value that needs no further recursion (the depth guard's answer).
fn shallow(obj: &Map<String, Value>) -> Value {
    match type_of(obj).as_str() {
        "array" => json!([]),
        "integer" => json!(1),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "null" => Value::Null,
        "string" => json!("example"),
        _ => json!({}),
    }
}

/// A local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer into the root).
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    let pointer = target.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

#[cfg(test)]
mod tests;
