//! The transforms hold on real schemas (issue 31 item 4): every tool of the MCP corpus (class 27,
//! `cases/c27_mcp_*.toml`, captured from nine pinned servers) either is refused by the OpenAI
//! strict transform with a reason, or becomes a schema the strict checker accepts, in which every
//! property is required, the ones the server required still refuse `null` (unless they accepted
//! it) and the optional ones accept it; Gemini's `parameters` never holds an object without
//! properties nor a field outside its subset. The figures are the ones `docs/mcp.md` gives.

use serde_json::{Map, Value};
use tooltape::mcp::{Target, judge};
use tooltape::schema::{check, strict_parameters};
use tooltape::{Provider, Tool};

use crate::scratch::repo;

/// Every tool the class-27 cases declare: (case, the tool).
fn corpus_tools() -> Vec<(String, Tool)> {
    let cases = repo().join("cases");
    let mut names: Vec<_> = std::fs::read_dir(&cases)
        .expect("cases/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("c27_mcp_") && n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let text = std::fs::read_to_string(cases.join(&n)).unwrap();
        let case: toml::Table = toml::from_str(&text).unwrap();
        for t in case["tools"].as_array().unwrap() {
            let t = t.as_str().unwrap();
            let file = std::fs::read_to_string(cases.join(format!("tools/{t}.json"))).unwrap();
            out.push((n.clone(), serde_json::from_str(&file).unwrap()));
        }
    }
    out
}

/// `schema` with the root's `$defs`/`definitions` beside it, so its local refs resolve alone.
fn standalone(schema: &Value, root: &Value) -> Value {
    let mut s = match schema {
        Value::Object(o) => o.clone(),
        other => return other.clone(),
    };
    for section in ["$defs", "definitions"] {
        if let Some(d) = root.get(section) {
            s.insert(section.into(), d.clone());
        }
    }
    Value::Object(s)
}

fn accepts_null(schema: &Value, root: &Value) -> bool {
    jsonschema::validator_for(&standalone(schema, root)).is_ok_and(|v| v.is_valid(&Value::Null))
}

/// The object schema inside a nullable wrapper (`anyOf: [X, {type: null}]`), or the node itself.
fn unwrap_nullable(v: &Value) -> &Value {
    match v.get("anyOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([x, n]) if n == &serde_json::json!({"type": "null"}) => x,
        _ => v,
    }
}

/// Checks one object node of the strict schema against the same node of the original, then the
/// nested object properties that have the same shape in both.
fn keeps_required(
    (tool, at): (&str, &str),
    original: &Map<String, Value>,
    strict: &Map<String, Value>,
    roots: (&Value, &Value),
    depth: usize,
) {
    let (Some(props), Some(sprops)) = (
        original.get("properties").and_then(Value::as_object),
        strict.get("properties").and_then(Value::as_object),
    ) else {
        return;
    };
    let listed = |o: &Map<String, Value>, k: &str| {
        o.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x == k))
    };
    for (k, p) in props {
        let sp = &sprops[k];
        assert!(listed(strict, k), "{tool}{at}/{k}: not required in strict");
        let was_null = accepts_null(p, roots.0);
        if listed(original, k) {
            assert_eq!(
                accepts_null(sp, roots.1),
                was_null,
                "{tool}{at}/{k}: a required property changed whether it accepts null"
            );
        } else {
            assert!(
                accepts_null(sp, roots.1),
                "{tool}{at}/{k}: an optional property is not nullable in strict"
            );
        }
        if depth < 8
            && let (Some(po), Some(so)) = (p.as_object(), unwrap_nullable(sp).as_object())
        {
            keeps_required((tool, &format!("{at}/{k}")), po, so, roots, depth + 1);
        }
    }
}

#[test]
fn every_corpus_tool_is_refused_with_a_reason_or_strict_valid_for_openai_and_clean_for_gemini() {
    let tools = corpus_tools();
    let (mut refused, mut lossy, mut json_schema) = (0, 0, 0);
    for (case, t) in &tools {
        let (tool, params) = (format!("{case}: {}", t.name), &t.parameters);
        match strict_parameters(Provider::OpenaiResponses, params) {
            Err(reasons) => {
                refused += 1;
                assert!(!reasons.is_empty(), "{tool}: refused without a reason");
                assert!(reasons.iter().all(|r| !r.message.is_empty()), "{tool}");
            }
            Ok(strict) => {
                lossy += usize::from(!strict.lost.is_empty());
                let violations = check(Provider::OpenaiResponses, &strict.schema);
                assert!(
                    violations.is_empty(),
                    "{tool}: not strict-valid: {violations:?}"
                );
                let (Some(o), Some(s)) = (params.as_object(), strict.schema.as_object()) else {
                    panic!("{tool}: not an object schema");
                };
                keeps_required((&tool, ""), o, s, (params, &strict.schema), 0);
            }
        }
        let gemini = strict_parameters(Provider::Gemini, params).expect("an object root");
        if let Some(p) = gemini.schema.get("parameters") {
            let violations = check(Provider::Gemini, p);
            assert!(
                violations.is_empty(),
                "{tool}: Gemini parameters: {violations:?}"
            );
        } else {
            json_schema += usize::from(gemini.schema.get("parametersJsonSchema").is_some());
        }
        // The verdict reads the encoded request: an object without properties at any depth of
        // `parameters` is refused there, in Gemini's words.
        let verdict = judge(t, Target::Gemini);
        assert_ne!(verdict.word(), "refused", "{tool}: {verdict:?}");
    }
    // The figures of docs/mcp.md ("The MCP corpus").
    assert_eq!(
        (tools.len(), refused, lossy, json_schema),
        (101, 26, 19, 14),
        "tools, refused by OpenAI strict, sent strict after a reported loss, sent to Gemini as parametersJsonSchema"
    );
}
