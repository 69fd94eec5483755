//! A tool schema read by meaning, for comparing two schemas by what they accept rather than how
//! they are spelled: the keyword paths of a schema with unions of types in one spelling
//! ([`keyword_paths`], Gemini's proto names read as JSON names by [`proto_names`]), and a schema
//! with local `$ref`s inlined and the spellings that change no constraint made one
//! ([`by_meaning`]).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// The keyword paths of `schema` (object keys joined by `/`, for "keyword lost" messages), with
/// each union of types in one spelling: a type list and its `anyOf` spelling have the same paths.
pub(crate) fn keyword_paths(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    keys(&type_unions_folded(schema), "", &mut out);
    out
}

/// `schema` in one spelling of its meaning (see [`read`]), its local definitions (`$defs`, or
/// `definitions`) inlined.
pub(crate) fn by_meaning(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .cloned()
        .unwrap_or(Value::Null);
    read(schema, &defs, 0)
}

/// Key paths with every keyword in its proto3 JSON spelling (`/min_items` → `/minItems`);
/// property names (the segment after `properties`) stay as written.
pub(crate) fn proto_names(paths: &BTreeSet<String>) -> BTreeSet<String> {
    paths
        .iter()
        .map(|p| {
            let mut prev = "";
            p.split('/')
                .map(|seg| {
                    let out = if prev == "properties" {
                        seg.to_string()
                    } else {
                        super::gemini::json_name(seg)
                    };
                    prev = seg;
                    out
                })
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect()
}

/// The keyword paths below `v`, each prefixed by `prefix`, into `out`.
fn keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                // An empty object (`"properties": {}`, `"items": {}`), an empty array
                // (`"required": []`) or a null (`"default": null`) constrains nothing: leaving it
                // out (as Gemini requires for a tool without parameters) loses no keyword.
                if x.as_object().is_some_and(serde_json::Map::is_empty)
                    || x.as_array().is_some_and(Vec::is_empty)
                    || x.is_null()
                {
                    continue;
                }
                let p = format!("{prefix}/{k}");
                out.insert(p.clone());
                keys(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                keys(x, &format!("{prefix}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// `v` with each union of types spelled as `anyOf` written as the type list it means: an `anyOf`
/// (`any_of` in Gemini's proto spelling) of two or more branches that are each one `type` and the
/// same other keywords, in a schema with no `type` of its own, is `type: [A, B, …]` with those
/// keywords once beside the schema's own (a keyword on both sides must agree). `{type: [A, B],
/// K}`, `{anyOf: [{type: A}, {type: B}], K}` and `{anyOf: [{type: A, K}, {type: B, K}]}` validate
/// the same instances, so the three give the same keyword paths. A `null` allowed beside one
/// schema X is folded the same way whatever its spelling (`null_folded`): `{anyOf: [X], nullable:
/// true}`, `{anyOf: [X, {type: null}]}`, X with `nullable: true` and X with `null` in its type
/// list are all X's keywords with `type: [A, null]`.
fn type_unions_folded(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let out: Map<String, Value> = (o.iter())
                .map(|(k, x)| (k.clone(), type_unions_folded(x)))
                .collect();
            let out = folded_union(&out).unwrap_or(out);
            let out = one_branch_merged(&out).unwrap_or(out);
            Value::Object(null_folded(out))
        }
        Value::Array(a) => Value::Array(a.iter().map(type_unions_folded).collect()),
        x => x.clone(),
    }
}

/// The `anyOf` of a schema object with no `type` of its own (its key, `any_of` in Gemini's proto
/// spelling, and its branches).
fn untyped_any_of(o: &Map<String, Value>) -> Option<(&'static str, &Vec<Value>)> {
    if o.contains_key("type") {
        return None;
    }
    ["anyOf", "any_of"]
        .into_iter()
        .find_map(|k| Some((k, o.get(k)?.as_array()?)))
}

/// The schema object `o` as a type list, when it is a union of types spelled as `anyOf`.
fn folded_union(o: &Map<String, Value>) -> Option<Map<String, Value>> {
    let (key, branches) = untyped_any_of(o)?;
    if branches.len() < 2 {
        return None;
    }
    let mut types = Vec::new();
    let mut shared: Option<Map<String, Value>> = None;
    for b in branches {
        let b = b.as_object()?;
        types.push(b.get("type").filter(|t| t.is_string())?.clone());
        let rest: Map<String, Value> = (b.iter())
            .filter(|(k, _)| *k != "type")
            .map(|(k, x)| (k.clone(), x.clone()))
            .collect();
        match &shared {
            Some(s) if *s != rest => return None,
            Some(_) => {}
            None => shared = Some(rest),
        }
    }
    let mut out = o.clone();
    out.remove(key);
    for (k, x) in shared? {
        match out.get(&k) {
            Some(y) if *y != x => return None,
            _ => {
                out.insert(k, x);
            }
        }
    }
    out.insert("type".into(), Value::Array(types));
    Some(out)
}

/// The schema object `o` with an `anyOf` that has one branch besides `{type: null}` branches
/// merged into it: the branch's keywords beside `o`'s own (a keyword on both must agree), and
/// `nullable: true` when a `null` branch was dropped. `{anyOf: [X], K}` validates what `{X, K}`
/// validates. `None` when `o` has a `type` of its own or no such `anyOf`.
fn one_branch_merged(o: &Map<String, Value>) -> Option<Map<String, Value>> {
    let (key, branches) = untyped_any_of(o)?;
    let is_null = |b: &&Value| {
        b.as_object().is_some_and(|b| {
            b.len() == 1
                && (b.get("type").and_then(Value::as_str))
                    .is_some_and(|t| t.eq_ignore_ascii_case("null"))
        })
    };
    let rest: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
    let [branch] = rest.as_slice() else {
        return None;
    };
    let mut merged = o.clone();
    merged.remove(key);
    if rest.len() < branches.len() {
        merged.insert("nullable".into(), Value::Bool(true));
    }
    for (k, x) in branch.as_object()? {
        match merged.get(k) {
            Some(y) if y != x => return None,
            _ => {
                merged.insert(k.clone(), x.clone());
            }
        }
    }
    Some(merged)
}

/// `o` with `nullable: true` (OpenAPI's and Gemini's spelling) written as `null` in its type
/// list: `{type: A, nullable: true}` is `{type: [A, null]}`. `nullable: false` says nothing and
/// goes; a `nullable` beside no `type` stays.
fn null_folded(mut o: Map<String, Value>) -> Map<String, Value> {
    let types = match (o.get("nullable"), o.get("type")) {
        (Some(Value::Bool(false)), _) => {
            o.remove("nullable");
            return o;
        }
        (Some(Value::Bool(true)), Some(Value::String(t))) => vec![Value::String(t.clone())],
        (Some(Value::Bool(true)), Some(Value::Array(ts))) => ts.clone(),
        _ => return o,
    };
    let mut types = types;
    let has_null = |t: &Value| t.as_str().is_some_and(|t| t.eq_ignore_ascii_case("null"));
    if !types.iter().any(has_null) {
        types.push(Value::String("null".into()));
    }
    o.remove("nullable");
    o.insert("type".into(), Value::Array(types));
    o
}

/// A schema with the spellings that change no constraint made one: local `$ref`s inlined (and
/// `$defs` dropped), a one-element `anyOf`/`oneOf` merged into its parent, a nullable type
/// (`["T", "null"]`, OpenAPI's `nullable`) read as `T`, and the annotations `$schema`, `$id`,
/// `$comment` dropped. Recursion stops at depth 32 (a self-referencing `$ref`).
fn read(v: &Value, defs: &Value, depth: usize) -> Value {
    let Value::Object(o) = v else {
        return match v {
            Value::Array(a) => Value::Array(a.iter().map(|x| read(x, defs, depth)).collect()),
            other => other.clone(),
        };
    };
    if depth > 32 {
        return v.clone();
    }
    if let Some(target) = o
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| {
            r.strip_prefix("#/$defs/")
                .or_else(|| r.strip_prefix("#/definitions/"))
        })
        .and_then(|name| defs.get(name))
    {
        let mut merged = target.as_object().cloned().unwrap_or_default();
        merged.extend(
            o.iter()
                .filter(|(k, _)| *k != "$ref")
                .map(|(k, x)| (k.clone(), x.clone())),
        );
        return read(&Value::Object(merged), defs, depth + 1);
    }
    let mut out = serde_json::Map::new();
    let mut merged_one = false;
    for (k, x) in o {
        match k.as_str() {
            "$defs" | "definitions" | "$schema" | "$id" | "$comment" | "nullable" => {}
            "anyOf" | "oneOf" if x.as_array().is_some_and(|a| a.len() == 1) => {
                if let Some(Value::Object(only)) = x.as_array().and_then(|a| a.first()) {
                    merged_one = true;
                    for (k2, x2) in only {
                        out.entry(k2.clone()).or_insert_with(|| x2.clone());
                    }
                }
            }
            "type" => {
                let types: Vec<&Value> = x
                    .as_array()
                    .map(|a| a.iter().filter(|t| t.as_str() != Some("null")).collect())
                    .unwrap_or_else(|| vec![x]);
                out.insert(
                    k.clone(),
                    match types.as_slice() {
                        [one] => (*one).clone(),
                        many => Value::Array(many.iter().map(|t| (*t).clone()).collect()),
                    },
                );
            }
            _ => {
                out.insert(k.clone(), read(x, defs, depth + 1));
            }
        }
    }
    // What a merged one-element anyOf brought in is read by meaning too.
    if merged_one {
        return read(&Value::Object(out), defs, depth + 1);
    }
    Value::Object(out)
}
