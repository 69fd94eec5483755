//! OpenAI strict-mode rules: the per-node checks (shared with the transform, which runs them on
//! each rewritten node) and the whole-schema checker with its limits.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::Violation;
use super::limits::Counter;
use super::util::{self, MAX_WALK_DEPTH, push};

/// Keywords OpenAI strict mode accepts on a schema node (Structured Outputs "Supported
/// schemas"), plus annotations. Anything else is reported as `unsupported-keyword`.
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
    "$schema",
    "$id",
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// String formats strict mode supports (no `uri`).
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Checks one node against the strict rules that can be seen locally. `root` resolves refs.
pub fn node_rules(
    root: &Value,
    obj: &Map<String, Value>,
    ptr: &str,
    is_root: bool,
    out: &mut Vec<Violation>,
) {
    if is_root {
        root_rules(obj, out);
    }
    for k in obj.keys() {
        if !KEYWORDS.contains(&k.as_str()) {
            out.push(Violation::new(
                ptr,
                "unsupported-keyword",
                format!("{k} is not supported in strict mode"),
            ));
        }
    }
    if let Some(f) = obj.get("format").and_then(Value::as_str)
        && !FORMATS.contains(&f)
    {
        out.push(Violation::new(
            ptr,
            "unsupported-format",
            format!("format '{f}' is not supported in strict mode"),
        ));
    }
    for t in util::types(obj) {
        if !TYPES.contains(&t) {
            out.push(Violation::new(
                ptr,
                "invalid-type",
                format!("unknown type '{t}'"),
            ));
        }
    }
    if obj.get("items").is_some_and(|i| !i.is_object()) {
        out.push(Violation::new(
            ptr,
            "unsupported-keyword",
            "items must be a single schema (tuple-form items are not supported in strict mode)",
        ));
    }
    if let Some(r) = obj.get("$ref") {
        ref_rules(root, obj, r, ptr, out);
    } else if !["type", "anyOf", "enum", "const"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        out.push(Violation::new(
            ptr,
            "missing-type",
            "schema must have a 'type' (or anyOf, enum, const, $ref)",
        ));
    }
    if util::is_object_schema(obj) || obj.contains_key("additionalProperties") {
        object_rules(obj, ptr, out);
    }
}

fn root_rules(obj: &Map<String, Value>, out: &mut Vec<Violation>) {
    if obj.contains_key("anyOf") {
        out.push(Violation::new(
            "",
            "root-object",
            "the root schema must not be anyOf",
        ));
    }
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        let got = match obj.get("type") {
            Some(t) => t.to_string(),
            None => "none".into(),
        };
        out.push(Violation::new(
            "",
            "root-object",
            format!("the root schema must be a plain object (type \"object\"), got type {got}"),
        ));
    }
}

fn ref_rules(
    root: &Value,
    obj: &Map<String, Value>,
    r: &Value,
    ptr: &str,
    out: &mut Vec<Violation>,
) {
    let Some(r) = r.as_str() else {
        out.push(Violation::new(
            ptr,
            "ref-unresolved",
            "$ref must be a string",
        ));
        return;
    };
    let supported = r == "#" || r.starts_with("#/$defs/") || r.starts_with("#/definitions/");
    if !supported || util::resolve(root, r).is_none() {
        out.push(Violation::new(
            ptr,
            "ref-unresolved",
            format!("$ref '{r}' must point to the root (#) or into $defs/definitions"),
        ));
    }
    let siblings: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !["$ref", "$defs", "definitions", "$schema", "$id"].contains(k))
        .collect();
    if !siblings.is_empty() {
        out.push(Violation::new(
            ptr,
            "ref-siblings",
            format!(
                "$ref cannot have sibling keywords in strict mode ({})",
                siblings.join(", ")
            ),
        ));
    }
}

fn object_rules(obj: &Map<String, Value>, ptr: &str, out: &mut Vec<Violation>) {
    if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
        let why = match obj.get("additionalProperties") {
            None if !obj.contains_key("properties") => {
                "an object without properties is an open map"
            }
            None => "'additionalProperties' is required to be supplied and to be false",
            Some(_) => "open map: 'additionalProperties' must be false",
        };
        out.push(Violation::new(ptr, "additional-properties-false", why));
    }
    let Some(props) = obj.get("properties").and_then(Value::as_object) else {
        return;
    };
    // A set, not the list: objects with thousands of properties would go quadratic.
    let required: HashSet<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(missing) = props.keys().find(|k| !required.contains(k.as_str())) {
        out.push(Violation::new(
            ptr,
            "required-all",
            format!("every property must be in 'required'; missing '{missing}'"),
        ));
    }
}

/// Checks a whole schema as it would be sent with `strict: true` to OpenAI.
pub fn openai(schema: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(obj) = schema.as_object() else {
        out.push(Violation::new(
            "",
            "root-object",
            "the root schema must be a JSON object",
        ));
        return out;
    };
    let mut counter = Counter::default();
    let mut walker = Walker {
        root: schema,
        counter: &mut counter,
        out: &mut out,
    };
    walker.visit(obj, "", 1, 0);
    for section in ["$defs", "definitions"] {
        if let Some(defs) = obj.get(section).and_then(Value::as_object) {
            let base = push("", section);
            for (name, def) in defs {
                walker.child(def, &push(&base, name), 0, 1);
            }
        }
    }
    counter.finish(&mut out);
    out
}

struct Walker<'a> {
    root: &'a Value,
    counter: &'a mut Counter,
    out: &'a mut Vec<Violation>,
}

impl Walker<'_> {
    fn child(&mut self, v: &Value, ptr: &str, level: usize, depth: usize) {
        match v {
            Value::Object(obj) => {
                let is_obj = util::is_object_schema(obj);
                self.visit(obj, ptr, level + usize::from(is_obj), depth);
            }
            _ => self.out.push(Violation::new(
                ptr,
                "missing-type",
                "boolean schemas are not supported in strict mode",
            )),
        }
    }

    fn visit(&mut self, obj: &Map<String, Value>, ptr: &str, level: usize, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            self.out.push(Violation::new(
                ptr,
                "max-depth",
                "schema is nested too deeply to check",
            ));
            return;
        }
        node_rules(self.root, obj, ptr, depth == 0, self.out);
        self.counter.node(obj, ptr, level, self.out);
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            let base = push(ptr, "properties");
            for (k, v) in props {
                self.child(v, &push(&base, k), level, depth + 1);
            }
        }
        if let Some(items) = obj.get("items").filter(|i| i.is_object()) {
            self.child(items, &push(ptr, "items"), level, depth + 1);
        }
        if let Some(branches) = obj.get("anyOf").and_then(Value::as_array) {
            let base = push(ptr, "anyOf");
            for (i, b) in branches.iter().enumerate() {
                self.child(b, &push(&base, &i.to_string()), level, depth + 1);
            }
        }
    }
}
