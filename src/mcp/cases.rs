//! `tooltape mcp --cases DIR`: a server's tools as case files, so `tooltape gateway … --cases
//! DIR` and `tooltape client … --cases DIR` run a team's own MCP tools through every route.
//! Each tool becomes `tools/NAME.json` and `mcp_NAME.toml`: every tool_choice, on the providers
//! whose encoder takes the tool, and a simulated call whose arguments the simulator's generator
//! builds from the schema, checked against it.

use serde_json::{Value, json};

use super::connect::Listing;
use super::verdict::{Target, ToolVerdict, judge};
use crate::model::Tool;
use crate::simulate::generate_arguments;

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
            text: case_toml(t, &listing.server.name, &providers),
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
    .filter(|target| !matches!(judge(t, *target), ToolVerdict::Refused { .. }))
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
    let args = generate_arguments(&t.parameters);
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
        "description = {}\ntools = [{}]\nmcp = true\nproviders = [{}]\nchoices = [{}]\n\n[[messages]]\nrole = \"user\"\ncontent = {}\n\n{note}[simulate]\ncalls = [{{ name = {}, {} }}]\n\n[[expect]]\ntrials = {}\ncalls = [{}]\n",
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
    crate::schema::validator(schema).is_ok_and(|v| v.is_valid(args))
}
