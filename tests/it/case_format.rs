//! `docs/case-format.md` documents every key of a case file: each key path of
//! `cases/case.schema.json` has a row in one of its tables, and every row names a key of the
//! schema (the schema itself is kept equal to the Rust case types by `case::schema`).

use std::collections::BTreeSet;

use crate::scratch::repo;
use serde_json::Value;

const DOC: &str = "docs/case-format.md";
const SCHEMA: &str = "cases/case.schema.json";

/// Every key path of the schema, written as the document writes them (`rounds[].results[].tool`).
fn schema_keys(node: &Value, defs: &Value, path: &str, out: &mut BTreeSet<String>) {
    if let Some(name) = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        schema_keys(&defs[name], defs, path, out);
        return;
    }
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (key, sub) in props {
            let p = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            out.insert(p.clone());
            schema_keys(sub, defs, &p, out);
        }
    }
    if let Some(items) = node.get("items").filter(|i| i.is_object()) {
        schema_keys(items, defs, &format!("{path}[]"), out);
    }
}

/// The key of each table row whose first cell is one code span: (line, key).
fn doc_rows(doc: &str) -> Vec<(usize, String)> {
    doc.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let first = line.strip_prefix("| `")?.split_once("` |")?.0;
            Some((i + 1, first.to_string()))
        })
        .collect()
}

#[test]
fn every_schema_key_is_documented_and_every_documented_key_exists() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join(SCHEMA)).expect("read the case schema"),
    )
    .expect("the case schema is JSON");
    let mut keys = BTreeSet::new();
    schema_keys(&schema, &schema["$defs"], "", &mut keys);
    assert!(keys.len() > 40, "{SCHEMA}: only {} keys found", keys.len());

    let doc = std::fs::read_to_string(repo().join(DOC)).expect("read the case format");
    let rows = doc_rows(&doc);
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (line, key) in &rows {
        if !keys.contains(key) {
            problems.push(format!(
                "{DOC}:{line}: `{key}` is not a key of {SCHEMA}: fix the row or remove it"
            ));
        }
        if !seen.insert(key.clone()) {
            problems.push(format!("{DOC}:{line}: `{key}` is documented twice"));
        }
    }
    for key in keys.difference(&seen) {
        problems.push(format!(
            "{DOC}: `{key}` of {SCHEMA} has no row: add `| `{key}` | type | meaning |` to its table"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn rows_are_read_from_tables_only() {
    let rows = doc_rows("| `a.b` | x |\n| key | type |\ntext `c` | d\n| `e[].f` | y |\n");
    assert_eq!(rows, vec![(1, "a.b".to_string()), (4, "e[].f".to_string())]);
}
