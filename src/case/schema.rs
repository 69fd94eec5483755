//! Keeps `cases/case.schema.json` (for editors) true to the Rust case types, and checks every
//! shipped case file against it.
//!
//! The Rust side of each table's field list is read from serde itself: deserializing a probe
//! with an unknown field makes `deny_unknown_fields` list every accepted field.

use std::path::Path;

use serde_json::Value;

use super::corpus::PROVIDERS_FILE;
use super::file::CaseFile;

/// (JSON pointer of the table in the schema, TOML that puts an unknown field in that table,
/// fields serde does not list because they are enum tags).
const PROBES: &[(&str, &str, &[&str])] = &[
    ("", "__probe__ = 1", &[]),
    (
        "/properties/hosted/items",
        "hosted = [{ type = \"web_search\", __probe__ = 1 }]",
        &["type"],
    ),
    (
        "/properties/messages/items",
        "[[messages]]\n__probe__ = 1",
        &[],
    ),
    ("/properties/rounds/items", "[[rounds]]\n__probe__ = 1", &[]),
    (
        "/properties/rounds/items/properties/results/items",
        "[[rounds]]\nresults = [{ __probe__ = 1 }]",
        &[],
    ),
    ("/properties/simulate", "[simulate]\n__probe__ = 1", &[]),
    (
        "/properties/simulate/properties/calls/items",
        "[simulate]\ncalls = [{ __probe__ = 1 }]",
        &[],
    ),
    (
        "/properties/simulate/properties/error",
        "[simulate]\nerror = { __probe__ = 1 }",
        &[],
    ),
    ("/properties/expect/items", "[[expect]]\n__probe__ = 1", &[]),
    (
        "/properties/known_failure/items",
        "[[known_failure]]\n__probe__ = 1",
        &[],
    ),
];

/// Fields serde accepts for the table the probe reaches, from its unknown-field error.
pub(super) fn rust_fields(probe: &str) -> Result<Vec<String>, String> {
    let err = match toml::from_str::<CaseFile>(probe) {
        Ok(_) => {
            return Err(format!(
                "probe {probe:?} was accepted: the table does not deny unknown fields"
            ));
        }
        Err(e) => e.message().to_string(),
    };
    let Some(expected) = err.split("expected").nth(1) else {
        return Err(format!("probe {probe:?}: unexpected error {err:?}"));
    };
    let mut fields: Vec<String> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    fields.sort();
    Ok(fields)
}

/// Differences between the schema and the Rust types, and shipped cases the schema rejects.
pub fn problems(root: &Path) -> Vec<String> {
    let path = root.join("cases/case.schema.json");
    let rel = "cases/case.schema.json";
    let schema: Value = match crate::input::read_to_string(&path).map(|t| serde_json::from_str(&t))
    {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return vec![format!("{rel}:{}:{}: not JSON: {e}", e.line(), e.column())],
        Err(e) => return vec![format!("{rel}:1: cannot read: {e}")],
    };
    let mut out = Vec::new();
    for (pointer, probe, tags) in PROBES {
        let rust = match rust_fields(probe) {
            Ok(f) => f,
            Err(e) => {
                out.push(format!("src/case/file.rs: {e}"));
                continue;
            }
        };
        let mut declared: Vec<String> = schema
            .pointer(&format!("{pointer}/properties"))
            .and_then(Value::as_object)
            .map(|m| {
                m.keys()
                    .filter(|k| !tags.contains(&k.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        declared.sort();
        if declared != rust {
            out.push(format!(
                "{rel}:1: schema at `{}` lists fields {declared:?} but the Rust type accepts {rust:?}: update the schema",
                if pointer.is_empty() { "/" } else { pointer }
            ));
        }
    }
    let validator = match jsonschema::validator_for(&schema) {
        Ok(v) => v,
        Err(e) => {
            out.push(format!("{rel}:1: the schema does not compile: {e}"));
            return out;
        }
    };
    let mut files: Vec<_> = std::fs::read_dir(root.join("cases"))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for f in files {
        if f.extension().is_none_or(|x| x != "toml")
            || f.file_name().is_some_and(|n| n == PROVIDERS_FILE)
        {
            continue;
        }
        let rel = f.strip_prefix(root).unwrap_or(&f).display().to_string();
        let Ok(text) = crate::input::read_to_string(&f) else {
            continue;
        };
        // Broken TOML is reported (with its position) by the case's own test.
        let Ok(table) = toml::from_str::<toml::Table>(&text) else {
            continue;
        };
        let Ok(instance) = serde_json::to_value(&table) else {
            continue;
        };
        for e in validator.iter_errors(&instance) {
            out.push(format!(
                "{rel}:1: the case fails cases/case.schema.json at {}: {e}",
                e.instance_path()
            ));
        }
    }
    out
}
