//! Anthropic: strict tool use subset (per schema) and request-wide budgets (20 strict tools,
//! 24 optional parameters, 16 union parameters), plus the non-strict rule that
//! `input_schema` must be an object without a top-level `oneOf`/`allOf`/`anyOf`.
//!
//! The strict rewrite here only closes objects that declare properties (and turns provably
//! disjoint `oneOf` into `anyOf`): optional properties stay optional, because making them
//! nullable would spend the 16-union budget.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::prepared::{PreparedTool, Violation, fallback_note, passthrough, strict_error};
use super::util::{self, MAX_WALK_DEPTH, push};
use crate::model::EncodeError;
use crate::model::{StrictPolicy, Tool};

pub(crate) const MAX_STRICT_TOOLS: usize = 20;
pub(crate) const MAX_OPTIONAL_PARAMS: usize = 24;
pub(crate) const MAX_UNION_PARAMS: usize = 16;

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "allOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "definitions",
    "format",
    "pattern",
    "minItems",
    "default",
    "description",
    "title",
    "examples",
    "$comment",
    "$schema",
    "$id",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// String formats strict mode supports: OpenAI's ([`super::check::FORMATS`]) and `uri`.
fn supported_format(f: &str) -> bool {
    f == "uri" || super::check::FORMATS.contains(&f)
}

/// Budget use of one strict schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Budget {
    pub optional: usize,
    pub unions: usize,
}

/// Checks one schema against the strict subset, including its own share of the budgets.
pub(super) fn check(schema: &Value) -> Vec<Violation> {
    let (violations, _) = check_with_budget(schema);
    violations
}

/// Optional and union parameters one strict schema spends.
pub(crate) fn budget(schema: &Value) -> Budget {
    check_with_budget(schema).1
}

fn check_with_budget(schema: &Value) -> (Vec<Violation>, Budget) {
    let mut out = Vec::new();
    let mut budget = Budget::default();
    let Some(obj) = schema.as_object() else {
        out.push(Violation::root("input_schema must be a JSON object"));
        return (out, budget);
    };
    if let Some(v) = top_level_rule(obj) {
        out.push(v);
    }
    for name in util::recursive_defs(schema) {
        let ptr = name.trim_start_matches('#').to_string();
        out.push(Violation::new(
            &ptr,
            "recursive-ref",
            "recursive schemas are not supported in strict mode",
        ));
    }
    let mut w = Walker {
        root: schema,
        out: &mut out,
        budget: &mut budget,
    };
    w.node(schema, "", 0);
    let totals = [
        Violation::total_over(
            budget.optional,
            MAX_OPTIONAL_PARAMS,
            "max-optional-params",
            |n| {
                format!("{n} optional parameters; strict tools allow at most {MAX_OPTIONAL_PARAMS}")
            },
        ),
        Violation::total_over(budget.unions, MAX_UNION_PARAMS, "max-union-params", |n| {
            format!("{n} parameters use unions; strict tools allow at most {MAX_UNION_PARAMS}")
        }),
    ];
    out.extend(totals.into_iter().flatten());
    (out, budget)
}

/// The rule every Anthropic tool obeys, strict or not.
fn top_level_rule(obj: &Map<String, Value>) -> Option<Violation> {
    if ["oneOf", "allOf", "anyOf"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return Some(Violation::root(
            "input_schema does not support oneOf, allOf, or anyOf at the top level",
        ));
    }
    match obj.get("type") {
        Some(t) if t != "object" => Some(Violation::root(format!(
            "input_schema must have type \"object\", got {t}"
        ))),
        _ => None,
    }
}

struct Walker<'a> {
    root: &'a Value,
    out: &'a mut Vec<Violation>,
    budget: &'a mut Budget,
}

impl Walker<'_> {
    fn node(&mut self, v: &Value, ptr: &str, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            self.out.push(Violation::too_deep(ptr));
            return;
        }
        let Some(obj) = v.as_object() else {
            if v.as_bool() != Some(true) {
                self.out.push(Violation::new(
                    ptr,
                    "unsupported-keyword",
                    "boolean false schema",
                ));
            }
            return;
        };
        self.rules(obj, ptr);
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            let required: HashSet<&str> = util::required_names(obj.get("required")).collect();
            let base = push(ptr, "properties");
            for (k, p) in props {
                self.budget.optional += usize::from(!required.contains(k.as_str()));
                let union = p.get("anyOf").is_some() || p.get("type").is_some_and(Value::is_array);
                self.budget.unions += usize::from(union);
                self.node(p, &push(&base, k), depth + 1);
            }
        }
        if let Some(items) = obj.get("items") {
            self.node(items, &push(ptr, "items"), depth + 1);
        }
        for key in ["anyOf", "allOf"] {
            if let Some(branches) = obj.get(key).and_then(Value::as_array) {
                let base = push(ptr, key);
                for (i, b) in branches.iter().enumerate() {
                    self.node(b, &push(&base, &i.to_string()), depth + 1);
                }
            }
        }
        for section in ["$defs", "definitions"] {
            if let Some(defs) = obj.get(section).and_then(Value::as_object) {
                let base = push(ptr, section);
                for (name, d) in defs {
                    self.node(d, &push(&base, name), depth + 1);
                }
            }
        }
    }

    fn rules(&mut self, obj: &Map<String, Value>, ptr: &str) {
        let out = &mut *self.out;
        for k in obj.keys() {
            if !KEYWORDS.contains(&k.as_str()) {
                out.push(Violation::new(
                    ptr,
                    "unsupported-keyword",
                    format!("{k} is not supported in strict mode"),
                ));
            }
        }
        out.extend(Violation::unsupported_format(
            obj.get("format"),
            supported_format,
            || ptr.to_string(),
            "in strict mode",
        ));
        if obj
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1)
        {
            out.push(Violation::new(
                ptr,
                "unsupported-keyword",
                "minItems must be 0 or 1 in strict mode",
            ));
        }
        if let Some(p) = obj.get("pattern").and_then(Value::as_str)
            && unsupported_pattern(p)
        {
            out.push(Violation::new(
                ptr,
                "unsupported-pattern",
                "pattern uses lookaround, backreferences or \\b, which strict mode does not support",
            ));
        }
        if obj
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().any(|m| m.is_object() || m.is_array()))
        {
            out.push(Violation::new(
                ptr,
                "enum-complex",
                "enum values must be primitives in strict mode",
            ));
        }
        if let Some(r) = obj.get("$ref").and_then(Value::as_str)
            && util::resolve(self.root, r).is_none()
        {
            out.push(Violation::new(
                ptr,
                "ref-unresolved",
                format!("$ref '{r}' must be a local reference"),
            ));
        }
        if let Some(entries) = obj.get("allOf").and_then(Value::as_array)
            && entries.iter().any(|e| e.get("$ref").is_some())
        {
            out.push(Violation::new(
                ptr,
                "unsupported-keyword",
                "allOf with $ref is not supported in strict mode",
            ));
        }
        if util::is_object_schema(obj)
            && obj.get("additionalProperties") != Some(&Value::Bool(false))
        {
            out.push(Violation::new(
                ptr,
                "additional-properties-false",
                "additionalProperties must be false in strict mode (open maps are not supported)",
            ));
        }
    }
}

/// Lookaround, backreferences and word boundaries (the documented unsupported regex features).
fn unsupported_pattern(p: &str) -> bool {
    ["(?=", "(?!", "(?<=", "(?<!", "\\b", "\\B"]
        .iter()
        .any(|x| p.contains(x))
        || p.as_bytes()
            .windows(2)
            .any(|w| w[0] == b'\\' && w[1].is_ascii_digit() && w[1] != b'0')
}

/// The strict rewrite: close objects that declare properties, infer a missing root/object
/// type, `oneOf` → `anyOf` when disjoint. Nothing else changes.
pub(super) fn strictify(schema: &Value) -> Value {
    let mut out = schema.clone();
    if let Some(o) = out.as_object_mut()
        && !o.contains_key("type")
        && !o.contains_key("$ref")
    {
        o.insert("type".into(), json!("object"));
        if !o.contains_key("properties") {
            o.insert("properties".into(), json!({}));
        }
    }
    close(&mut out, 0);
    out
}

fn close(v: &mut Value, depth: usize) {
    let Some(obj) = v.as_object_mut().filter(|_| depth <= MAX_WALK_DEPTH) else {
        return;
    };
    if let Some(Value::Array(b)) = obj.get("oneOf")
        && !obj.contains_key("anyOf")
        && util::one_of_is_disjoint(b)
    {
        let old = std::mem::take(obj);
        obj.extend(old.into_iter().map(|(k, v)| {
            if k == "oneOf" {
                ("anyOf".into(), v)
            } else {
                (k, v)
            }
        }));
    }
    if !obj.contains_key("type") && obj.contains_key("properties") {
        obj.insert("type".into(), json!("object"));
    }
    if obj.get("properties").is_some_and(Value::is_object)
        && !obj.contains_key("additionalProperties")
    {
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(m)) = obj.get_mut(key) {
            m.values_mut().for_each(|c| close(c, depth + 1));
        }
    }
    for key in ["anyOf", "allOf"] {
        if let Some(Value::Array(a)) = obj.get_mut(key) {
            a.iter_mut().for_each(|c| close(c, depth + 1));
        }
    }
    if let Some(items) = obj.get_mut("items") {
        close(items, depth + 1);
    }
}

/// A root without `type` gets `type: object` (the API requires it); nothing else changes.
fn ensure_root_object(schema: &Value) -> Value {
    let mut out = schema.clone();
    if let Some(o) = out.as_object_mut()
        && !o.contains_key("type")
    {
        o.insert("type".into(), json!("object"));
    }
    out
}

/// Prepares Anthropic tools: strict where asked for and possible, within the request budgets.
pub(super) fn prepare(
    tools: &[Tool],
    policy: StrictPolicy,
) -> Result<(Vec<PreparedTool>, Vec<String>), EncodeError> {
    let mut notes = Vec::new();
    let mut out = Vec::with_capacity(tools.len());
    let mut budgets: Vec<Option<Budget>> = Vec::with_capacity(tools.len());
    for t in tools {
        if let Some(v) = t.parameters.as_object().and_then(top_level_rule) {
            return Err(EncodeError::new(
                "TOOL_SCHEMA",
                format!("tool {}: {}", t.name, v.message),
            ));
        }
        let attempt = policy == StrictPolicy::Require || t.strict == Some(true);
        if !attempt {
            out.push(PreparedTool {
                parameters: ensure_root_object(&t.parameters),
                ..passthrough(t, t.strict)
            });
            budgets.push(None);
            continue;
        }
        let strict = strictify(&t.parameters);
        let (violations, budget) = check_with_budget(&strict);
        if violations.is_empty() {
            out.push(PreparedTool {
                parameters: strict,
                strict: Some(true),
                ..passthrough(t, None)
            });
            budgets.push(Some(budget));
        } else if policy == StrictPolicy::Require {
            return Err(strict_error(&t.name, &violations));
        } else {
            notes.push(fallback_note(&t.name, &violations));
            out.push(PreparedTool {
                parameters: ensure_root_object(&t.parameters),
                ..passthrough(t, Some(false))
            });
            budgets.push(None);
        }
    }
    enforce_budgets(tools, &mut out, &mut budgets, policy, &mut notes)?;
    Ok((out, notes))
}

/// Request-wide limits: under `Require` an error; otherwise `strict` is dropped from the last
/// strict tools until the request fits, with a note per tool.
fn enforce_budgets(
    tools: &[Tool],
    out: &mut [PreparedTool],
    budgets: &mut [Option<Budget>],
    policy: StrictPolicy,
    notes: &mut Vec<String>,
) -> Result<(), EncodeError> {
    loop {
        let strict: Vec<usize> = (0..budgets.len())
            .filter(|&i| budgets[i].is_some())
            .collect();
        let optional: usize = budgets.iter().flatten().map(|b| b.optional).sum();
        let unions: usize = budgets.iter().flatten().map(|b| b.unions).sum();
        let over = if strict.len() > MAX_STRICT_TOOLS {
            format!("{} strict tools (at most {MAX_STRICT_TOOLS})", strict.len())
        } else if optional > MAX_OPTIONAL_PARAMS {
            format!(
                "{optional} optional parameters across strict tools (at most {MAX_OPTIONAL_PARAMS})"
            )
        } else if unions > MAX_UNION_PARAMS {
            format!("{unions} union parameters across strict tools (at most {MAX_UNION_PARAMS})")
        } else {
            return Ok(());
        };
        if policy == StrictPolicy::Require {
            return Err(EncodeError::new(
                "STRICT_SCHEMA",
                format!("request exceeds Anthropic strict limits: {over}"),
            ));
        }
        let Some(&last) = strict.last() else {
            return Ok(());
        };
        budgets[last] = None;
        out[last] = PreparedTool {
            parameters: ensure_root_object(&tools[last].parameters),
            ..passthrough(&tools[last], Some(false))
        };
        notes.push(format!(
            "tool {}: sent strict=false: request-wide budget: {over}",
            tools[last].name
        ));
    }
}
