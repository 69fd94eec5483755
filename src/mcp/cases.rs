//! `tooltape mcp --cases DIR`: a server's tools as case files, so `tooltape gateway … --cases
//! DIR` and `tooltape client … --cases DIR` run a team's own MCP tools through every route.
//! Each tool becomes `tools/NAME.json` and `mcp_NAME.toml`: every tool_choice, on the providers
//! whose encoder takes the tool, and a simulated call whose arguments are built from the schema
//! and checked against it.

use serde_json::{Map, Value, json};

use super::connect::Listing;
use super::verdict::{Target, Verdict, judge};
use crate::model::Tool;

/// One file to write, relative to the cases folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseFile {
    pub path: String,
    pub text: String,
}

/// The case files of every listed tool, and one line per tool left out (with why).
pub fn case_files(listing: &Listing) -> (Vec<CaseFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for listed in &listing.tools {
        let t = &listed.tool;
        if listed.oversized_schema.is_some() {
            skipped.push(format!("{}: its schema is over the size limit", t.name));
            continue;
        }
        if !case_name_ok(&t.name) {
            skipped.push(format!(
                "{}: a case's tool name is letters, digits, `_`, `-` and inner dots, at most 128 characters",
                t.name
            ));
            continue;
        }
        let stem = format!("mcp_{}", t.name.replace(['-', '.'], "_"));
        if !seen.insert(stem.clone()) {
            skipped.push(format!(
                "{}: its case name {stem} is taken by another tool",
                t.name
            ));
            continue;
        }
        let providers = providers_taking(t);
        if providers.is_empty() {
            skipped.push(format!("{}: every provider's encoder refuses it", t.name));
            continue;
        }
        files.push(CaseFile {
            path: format!("tools/{}.json", t.name),
            text: tool_json(t),
        });
        files.push(CaseFile {
            path: format!("{stem}.toml"),
            text: case_toml(t, &listing.server_name, &providers),
        });
    }
    (files, skipped)
}

fn case_name_ok(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && !name.starts_with('.')
        && !name.ends_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The providers whose non-strict target sends the tool (strict is the case's `auto`).
fn providers_taking(t: &Tool) -> Vec<&'static str> {
    [
        Target::OpenaiChat,
        Target::OpenaiResponses,
        Target::Anthropic,
        Target::Gemini,
        Target::TextProtocol,
    ]
    .into_iter()
    .filter(|target| !matches!(judge(t, *target), Verdict::Refused { .. }))
    .map(|target| target.provider().slug())
    .collect()
}

fn tool_json(t: &Tool) -> String {
    let mut v = json!({"name": t.name});
    if let Some(d) = &t.description {
        v["description"] = json!(d);
    }
    v["parameters"] = t.parameters.clone();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// A TOML basic string: JSON's string escapes are TOML's (serde_json never writes `\/`).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn case_toml(t: &Tool, server: &str, providers: &[&str]) -> String {
    let name = &t.name;
    let args = example_arguments(&t.parameters);
    let valid = valid_against(&t.parameters, &args);
    let list = |xs: &[String]| {
        xs.iter()
            .map(|x| toml_str(x))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let providers: Vec<String> = providers.iter().map(ToString::to_string).collect();
    let choices: Vec<String> = ["auto", "required", "none"]
        .iter()
        .map(ToString::to_string)
        .chain([format!("forced-{name}")])
        .collect();
    let note = if valid {
        String::new()
    } else {
        "# The simulated arguments below do not validate against the schema (a pattern or a\n# combination the generator cannot satisfy): edit them.\n".into()
    };
    format!(
        "description = {}\ntools = [{}]\nproviders = [{}]\nchoices = [{}]\n\n[[messages]]\nrole = \"user\"\ncontent = {}\n\n{note}[simulate]\ncalls = [{{ name = {}, {} }}]\n\n[[expect]]\ntrials = {}\ncalls = [{}]\n",
        toml_str(&format!(
            "MCP tool {name} of the server {server}, captured by `tooltape mcp --cases`: every tool_choice, a simulated call with arguments built from its schema"
        )),
        toml_str(name),
        list(&providers),
        list(&choices),
        toml_str(&format!("Use the {name} tool.")),
        toml_str(name),
        arguments_toml(&args),
        toml_str(&format!("*::forced-{name}")),
        toml_str(name),
    )
}

/// `arguments = {…}` as an inline TOML table; `raw_arguments = "…"` (the JSON text, which
/// Anthropic and Gemini cannot carry but Chat, Responses and the text protocol can) when the
/// arguments hold a `null`, which TOML cannot write.
fn arguments_toml(args: &Value) -> String {
    match toml_value(args) {
        Some(t) => format!("arguments = {t}"),
        None => format!(
            "raw_arguments = {}",
            toml_str(&serde_json::to_string(args).unwrap_or_default())
        ),
    }
}

/// A JSON value as TOML inline syntax; `None` for a `null` anywhere in it.
fn toml_value(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => toml_str(s),
        Value::Array(a) => {
            let items: Option<Vec<String>> = a.iter().map(toml_value).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Object(o) => {
            let items: Option<Vec<String>> = o
                .iter()
                .map(|(k, x)| toml_value(x).map(|x| format!("{} = {x}", toml_str(k))))
                .collect();
            let items = items?;
            if items.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", items.join(", "))
            }
        }
    })
}

/// Whether `args` validates against `schema` (an invalid schema: not).
pub fn valid_against(schema: &Value, args: &Value) -> bool {
    jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(args))
}

/// Arguments built from a schema: `const`, the first `enum` value, `default`, the first
/// example; else by type (every required property; bounds, `minItems` and a few formats
/// honoured). The first branch of `anyOf`/`oneOf`/`allOf`, local `$ref`s followed.
pub fn example_arguments(schema: &Value) -> Value {
    match example(schema, schema, 0) {
        Value::Object(m) => Value::Object(m),
        _ => Value::Object(Map::new()),
    }
}

/// Deeper than this the generator writes `null` (a recursive or hostile schema).
const MAX_DEPTH: usize = 32;

fn example(root: &Value, s: &Value, depth: usize) -> Value {
    let Some(o) = s.as_object() else {
        return Value::Null;
    };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(c) = o.get("const") {
        return c.clone();
    }
    if let Some(first) = o
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(d) = o.get("default") {
        return d.clone();
    }
    if let Some(e) = o
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    if let Some(target) = o
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        return example(root, target, depth + 1);
    }
    for k in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = o.get(k).and_then(Value::as_array).and_then(|b| b.first()) {
            return example(root, first, depth + 1);
        }
    }
    let ty = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if o.contains_key("properties") => "object",
        _ => "object",
    };
    by_type(root, o, ty, depth)
}

fn by_type(root: &Value, o: &Map<String, Value>, ty: &str, depth: usize) -> Value {
    let num = |k: &str| o.get(k).and_then(Value::as_f64);
    match ty {
        "object" => {
            let required: Vec<&str> = o
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut out = Map::new();
            if let Some(props) = o.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    if required.contains(&k.as_str()) {
                        out.insert(k.clone(), example(root, sub, depth + 1));
                    }
                }
            }
            Value::Object(out)
        }
        "array" => {
            let n = o
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(8);
            let item = o
                .get("items")
                .map_or(Value::Null, |i| example(root, i, depth + 1));
            Value::Array(vec![item; usize::try_from(n).unwrap_or(0)])
        }
        "integer" | "number" => {
            let mut x = num("minimum")
                .unwrap_or(1.0)
                .max(num("exclusiveMinimum").map_or(f64::MIN, |m| m + 1.0));
            if let Some(max) = num("maximum") {
                x = x.min(max);
            }
            if ty == "integer" {
                json!(x.ceil() as i64)
            } else {
                json!(x)
            }
        }
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => json!(string_example(o)),
    }
}

fn string_example(o: &Map<String, Value>) -> String {
    let base = match o.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z",
        Some("date") => "2026-01-01",
        Some("time") => "00:00:00Z",
        Some("email") => "ana@example.com",
        Some("uri" | "url" | "uri-reference") => "https://example.com/",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some("ipv4") => "192.0.2.1",
        Some("ipv6") => "2001:db8::1",
        Some("hostname") => "example.com",
        _ => "example",
    };
    let min = o
        .get("minLength")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(256);
    let max = o
        .get("maxLength")
        .and_then(Value::as_u64)
        .unwrap_or(u64::MAX);
    let mut s: String = base.to_string();
    while (s.chars().count() as u64) < min {
        s.push('x');
    }
    if (s.chars().count() as u64) > max {
        s = s.chars().take(usize::try_from(max).unwrap_or(0)).collect();
    }
    s
}
