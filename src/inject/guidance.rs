//! Per-tool guidance: the parameter list and a schema-conformant example call for each tool.
//!
//! Example arguments hold the tool's `required` properties (in `properties` order), each valued
//! from its schema: `default`, then `example`, then `examples[0]`, then `enum[0]`, then `const`,
//! then a fallback by type ([`fallback`]). Only required keys appear, so the example conforms
//! whatever `additionalProperties` says and does not suggest optional keys are needed.

use serde_json::{Map, Value, json};

use super::request::FunctionTool;
use super::stringify::{js_string, js_stringify};

/// Nested objects deeper than this get `{}` in examples (recursive schemas stay finite).
const MAX_EXAMPLE_DEPTH: usize = 8;

/// The guidance lines for one tool (no trailing newline).
pub(super) fn tool_guidance(tool: &FunctionTool<'_>, out: &mut Vec<String>) {
    out.push(format!("Tool: {}", tool.name));
    if let Some(d) = tool.description.filter(|d| !d.trim().is_empty()) {
        out.push(format!("Description: {d}"));
    }
    out.push("Parameters:".into());
    let params = parameter_lines(tool.parameters);
    if params.is_empty() {
        out.push("- (no parameters)".into());
    } else {
        out.extend(params);
    }
    out.push("Example tool_call:".into());
    out.push(example_call(tool.name, &example_arguments(tool.parameters)));
}

/// `<tool_call>{"name":…,"arguments":"…"}</tool_call>` with `arguments` as a JSON string.
pub(super) fn example_call(name: &str, arguments: &Value) -> String {
    format!(
        "<tool_call>{{\"name\":{},\"arguments\":{}}}</tool_call>",
        js_string(name),
        js_string(&js_stringify(arguments))
    )
}

/// `- name (required|optional, type): description`; without a description the line ends at `)`.
fn parameter_lines(schema: Option<&Value>) -> Vec<String> {
    let Some(props) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let required = required_names(schema);
    props
        .iter()
        .map(|(name, prop)| {
            let req = if required.contains(&name.as_str()) {
                "required"
            } else {
                "optional"
            };
            let mut line = format!("- {name} ({req}, {})", type_label(prop));
            if let Some(d) = prop
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.trim().is_empty())
            {
                line.push_str(": ");
                line.push_str(d);
            }
            line
        })
        .collect()
}

fn required_names(schema: Option<&Value>) -> Vec<&str> {
    schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `type` as written (`string`), a type list joined with `|` (`string|null`), else `any`.
fn type_label(prop: &Value) -> String {
    match prop.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            if names.is_empty() {
                "any".into()
            } else {
                names.join("|")
            }
        }
        _ => "any".into(),
    }
}

/// The example arguments object for a tool's parameter schema.
pub(super) fn example_arguments(schema: Option<&Value>) -> Value {
    schema.map_or_else(|| json!({}), |s| object_example(s, 0))
}

fn object_example(schema: &Value, depth: usize) -> Value {
    let mut out = Map::new();
    if depth >= MAX_EXAMPLE_DEPTH {
        return Value::Object(out);
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    let required = required_names(Some(schema));
    for (name, prop) in props {
        if required.contains(&name.as_str()) {
            out.insert(name.clone(), value_example(name, prop, depth + 1));
        }
    }
    Value::Object(out)
}

fn value_example(name: &str, schema: &Value, depth: usize) -> Value {
    for key in ["default", "example"] {
        if let Some(v) = schema.get(key) {
            return v.clone();
        }
    }
    match schema.get("examples") {
        Some(Value::Array(xs)) => {
            if let Some(first) = xs.first() {
                return first.clone();
            }
        }
        Some(other) => return other.clone(),
        None => {}
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    fallback(name, schema, depth)
}

/// By type (the first non-`null` one of a list; none given: `object` if it has `properties`,
/// `array` if it has `items`, else `string`):
/// - string: by `format` (`date-time` → `2024-01-01T00:00:00Z`, `date` → `2024-01-01`, `email` →
///   `user@example.com`, `uri`/`url` → `https://example.com`), else by property name (a name
///   that, lower-cased without `_`/`-`, is or ends in `path`, `file` or `filename` →
///   `example.md`; `url`/`uri` or ending in `url` → `https://example.com`), else `example`;
/// - integer and number → `1`; boolean → `true`; null → `null`;
/// - array → `[]`, or one example item when `minItems` ≥ 1;
/// - object → its required properties, recursively.
fn fallback(name: &str, schema: &Value, depth: usize) -> Value {
    let ty = match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => {
            let mut names = ts.iter().filter_map(Value::as_str);
            let all: Vec<&str> = names.by_ref().collect();
            all.iter()
                .copied()
                .find(|t| *t != "null")
                .or(all.first().copied())
        }
        _ => None,
    };
    let ty = ty.unwrap_or(if schema.get("properties").is_some() {
        "object"
    } else if schema.get("items").is_some() {
        "array"
    } else {
        "string"
    });
    match ty {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "null" => Value::Null,
        "object" => object_example(schema, depth),
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            match schema.get("items") {
                Some(items) if min > 0 && depth < MAX_EXAMPLE_DEPTH => {
                    json!([value_example(name, items, depth + 1)])
                }
                _ => json!([]),
            }
        }
        _ => json!(string_example(name, schema)),
    }
}

fn string_example(name: &str, schema: &Value) -> &'static str {
    match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => return "2024-01-01T00:00:00Z",
        Some("date") => return "2024-01-01",
        Some("email") => return "user@example.com",
        Some("uri" | "url") => return "https://example.com",
        _ => {}
    }
    let key: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    if ["path", "file", "filename"]
        .iter()
        .any(|s| key.ends_with(s))
    {
        "example.md"
    } else if key == "uri" || key.ends_with("url") {
        "https://example.com"
    } else {
        "example"
    }
}
