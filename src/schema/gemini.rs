//! Gemini: chooses `parameters` (OpenAPI-subset `Schema`) or `parametersJsonSchema` per tool,
//! sanitizes for `parameters` without changing meaning, and checks a `parameters` value.
//!
//! Choice: `parameters` when the schema can be expressed in the subset after a
//! meaning-preserving sanitize that tells the model everything the original did (works
//! everywhere, including the Live API, which lacks `parametersJsonSchema`); otherwise the
//! original schema as `parametersJsonSchema` with a note: it keeps more (every keyword, open
//! maps, `$defs`). A sanitize that would drop an annotation the model reads (`examples`,
//! `deprecated`, …) counts as keeping less; a `format` written into the description does not.
//! Tools without parameters omit the field. An object schema without properties, at any depth
//! (`{type: object}`, `{type: object, properties: {}}`), is rejected by `parameters` ("should be
//! non-empty for OBJECT type"), so such a tool goes as `parametersJsonSchema`.
//!
//! Sanitize: inline local refs (recursion cannot be inlined → JSON Schema), `anyOf`/type
//! arrays with null → `nullable: true`, disjoint `oneOf` → `anyOf`, `const` → `enum`,
//! integer/number enums → `format: "enum"` with string values (the Vertex documented form),
//! formats other than `enum`/`date-time` moved into the description (format is an annotation
//! in JSON Schema), `additionalProperties: false` and annotation-only keywords dropped.
//! Anything else that the subset cannot say (open maps, `allOf`, tuples, exclusive bounds…)
//! sends the tool as `parametersJsonSchema`.

use serde_json::{Map, Value, json};

use super::prepared::{Loss, PreparedTool, Strict, Violation, passthrough};
use super::util::{self, MAX_WALK_DEPTH, push, steps};
use crate::model::Tool;

/// Fields of the Gemini `Schema` object (what `parameters` accepts) that the sanitizer writes
/// itself; it copies the others unchanged ([`KEEP`]).
const REWRITTEN: &[&str] = &["type", "format", "enum", "items", "properties", "anyOf"];
/// Fields of the Gemini `Schema` object copied unchanged by the sanitizer.
const KEEP: &[&str] = &[
    "title",
    "description",
    "nullable",
    "default",
    "example",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "propertyOrdering",
    "required",
];
/// Dropped by the sanitizer: annotations, or keywords whose content is inlined.
const DROP: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];
/// Of [`DROP`], the annotations whose loss is reported (the model would have read them).
const LOSSY_DROP: &[&str] = &[
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];
const FORMATS: &[&str] = &["enum", "date-time"];
/// Inlining `$ref`s may copy subtrees; beyond this many output nodes it is refused.
const MAX_INLINED_NODES: usize = 100_000;
const TOO_BIG: &str = "schema too deep or too large once refs are inlined";
/// Reasons listed per schema; a schema whose refs fan out repeats the same few reasons at
/// thousands of pointers, and the rest are counted in one closing reason.
const MAX_REASONS: usize = 50;

/// Prepares every tool for Gemini (no strict flag on this provider).
pub(super) fn prepare(tools: &[Tool]) -> (Vec<PreparedTool>, Vec<String>) {
    let mut notes = Vec::new();
    let prepared = tools
        .iter()
        .map(|t| {
            if is_no_arg(&t.parameters) {
                return PreparedTool {
                    parameters: Value::Null,
                    ..passthrough(t, None)
                };
            }
            match sanitize(&t.parameters).and_then(keeps_all) {
                Ok(p) => PreparedTool {
                    parameters: p.schema,
                    ..passthrough(t, None)
                },
                Err(reasons) => {
                    let why: Vec<String> = reasons
                        .iter()
                        .map(|v| format!("{}: {}", v.shown_pointer(), v.message))
                        .collect();
                    notes.push(format!(
                        "tool {}: sent parametersJsonSchema: {}",
                        t.name,
                        why.join("; ")
                    ));
                    PreparedTool {
                        gemini_json_schema: true,
                        ..passthrough(t, None)
                    }
                }
            }
        })
        .collect();
    (prepared, notes)
}

/// An object schema that declares no parameters (and is not an open map).
pub(super) fn is_no_arg(schema: &Value) -> bool {
    let Some(o) = schema.as_object() else {
        return false;
    };
    let empty = |k: &str| match o.get(k) {
        None => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    o.get("type").is_none_or(|t| t == "object")
        && empty("properties")
        && empty("required")
        && o.get("additionalProperties")
            .is_none_or(|a| a == &Value::Bool(false))
        && o.keys().all(|k| {
            [
                "type",
                "properties",
                "required",
                "additionalProperties",
                "$schema",
                "title",
                "description",
            ]
            .contains(&k.as_str())
        })
}

/// A sanitized schema that tells the model everything the original did (losses written into
/// the description only), or why `parametersJsonSchema` keeps more.
pub(super) fn keeps_all(s: Strict) -> Result<Strict, Vec<Violation>> {
    let dropped: Vec<Violation> = s
        .lost
        .iter()
        .filter(|l| !l.described)
        .map(|l| {
            Violation::new(
                &l.pointer,
                "annotation-dropped",
                format!("{} cannot be expressed in parameters", l.keyword),
            )
        })
        .collect();
    if dropped.is_empty() {
        Ok(s)
    } else {
        Err(dropped)
    }
}

/// The `parameters` form of a JSON Schema with what it drops, or why it cannot be expressed
/// there.
pub(super) fn sanitize(schema: &Value) -> Result<Strict, Vec<Violation>> {
    let mut s = Sanitizer {
        root: schema,
        blockers: Vec::new(),
        lost: Vec::new(),
        omitted: 0,
        stack: Vec::new(),
        nodes: 0,
    };
    let out = s.node(schema, "", 0);
    if s.omitted > 0 {
        s.blockers.push(Violation::new(
            "",
            "too-many-reasons",
            format!("{} more reasons not listed", s.omitted),
        ));
    }
    if out.get("type").is_some_and(|t| t != "object") {
        s.blockers
            .push(Violation::root("parameters must be an OBJECT schema"));
    }
    let mut blockers = s.blockers;
    if blockers.is_empty() {
        blockers = check(&out);
    }
    if blockers.is_empty() {
        Ok(Strict {
            schema: out,
            lost: s.lost,
        })
    } else {
        Err(blockers)
    }
}

struct Sanitizer<'a> {
    root: &'a Value,
    blockers: Vec<Violation>,
    /// Annotations dropped and formats moved into descriptions.
    lost: Vec<Loss>,
    /// Reasons past [`MAX_REASONS`], counted, not listed.
    omitted: usize,
    /// `$ref`s being inlined on the current path (recursion detection). A ref already here can
    /// only lead back into itself, so the path holds each ref string at most once: its length
    /// is bounded by the distinct refs of the schema.
    stack: Vec<&'a str>,
    /// Output nodes so far: a ref used twice per level over `n` levels (no recursion) inlines
    /// into `2^n` copies, so the output, not the input, is what is capped.
    nodes: usize,
}

/// A schema node's keywords: its own object, or a `$ref` target's with the referring node's
/// other keywords laid over it (borrowed, not copied: inlining costs the keys of the target,
/// not a deep copy of it).
enum Keys<'a> {
    Own(&'a Map<String, Value>),
    Merged(Vec<(&'a str, &'a Value)>),
}

impl<'a> Keys<'a> {
    fn iter(&self) -> impl Iterator<Item = (&'a str, &'a Value)> + '_ {
        let (own, merged) = match self {
            Keys::Own(m) => (Some(*m), &[][..]),
            Keys::Merged(l) => (None, l.as_slice()),
        };
        own.into_iter()
            .flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
            .chain(merged.iter().copied())
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// `target`'s keys in its order, each overridden by this node's value when it has the
    /// key (except `$ref`), then this node's other keys in its order: what inserting this
    /// node's keywords into a copy of the target gives.
    fn over(&self, target: &'a Map<String, Value>) -> Keys<'a> {
        let mut merged: Vec<(&str, &Value)> = target
            .iter()
            .map(|(k, v)| {
                let mine = (k != "$ref").then(|| self.get(k)).flatten();
                (k.as_str(), mine.unwrap_or(v))
            })
            .collect();
        merged.extend(
            self.iter()
                .filter(|(k, _)| *k != "$ref" && !target.contains_key(*k)),
        );
        Keys::Merged(merged)
    }
}

impl<'a> Sanitizer<'a> {
    fn block(&mut self, ptr: &str, rule: &'static str, msg: impl Into<String>) -> Value {
        if self.blockers.len() < MAX_REASONS {
            self.blockers.push(Violation::new(ptr, rule, msg));
        } else {
            self.omitted += 1;
        }
        Value::Null
    }

    /// Counts one output node; false (with a blocker) when it is too deep or one too many.
    /// Past the node cap nothing more is visited or reported: one reason says it.
    fn enter(&mut self, ptr: &str, depth: usize) -> bool {
        steps::tick();
        self.nodes += 1;
        if self.nodes > MAX_INLINED_NODES {
            if self.nodes == MAX_INLINED_NODES + 1 {
                // Listed whatever the reason count: it says why the walk stopped.
                self.blockers
                    .push(Violation::new(ptr, "max-depth", TOO_BIG));
            }
            return false;
        }
        if depth > MAX_WALK_DEPTH {
            self.block(ptr, "max-depth", TOO_BIG);
            return false;
        }
        true
    }

    fn node(&mut self, v: &'a Value, ptr: &str, depth: usize) -> Value {
        if !self.enter(ptr, depth) {
            return Value::Null;
        }
        let Some(obj) = v.as_object() else {
            return self.block(
                ptr,
                "unsupported-keyword",
                "boolean schemas cannot be expressed in parameters",
            );
        };
        self.keywords(&Keys::Own(obj), ptr, depth)
    }

    fn keywords(&mut self, obj: &Keys<'a>, ptr: &str, depth: usize) -> Value {
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            return self.inline_ref(obj, r, ptr, depth);
        }
        let mut out = Map::new();
        let mut nullable = false;
        for (k, x) in obj.iter() {
            match k {
                "type" => self.type_kw(x, &mut out, &mut nullable, ptr),
                "properties" => self.properties(x, &mut out, ptr, depth),
                "items" if x.is_object() => {
                    let items = self.node(x, &push(ptr, "items"), depth + 1);
                    out.insert("items".into(), items);
                }
                "anyOf" | "oneOf" => {
                    self.union((k, x), obj, (&mut out, &mut nullable), (ptr, depth));
                }
                "enum" => self.enum_kw(x, &mut out, &mut nullable, ptr),
                "const" => self.enum_kw(&json!([x]), &mut out, &mut nullable, ptr),
                "format" => {
                    if format_kw(x, &mut out) {
                        self.lost.push(Loss {
                            pointer: ptr.to_string(),
                            keyword: "format",
                            described: true,
                        });
                    }
                }
                "additionalProperties" if x == &Value::Bool(false) => {}
                k if KEEP.contains(&k) => {
                    out.insert(k.into(), x.clone());
                }
                k if DROP.contains(&k) => {
                    if let Some(keyword) = LOSSY_DROP.iter().copied().find(|d| *d == k) {
                        self.lost.push(Loss {
                            pointer: ptr.to_string(),
                            keyword,
                            described: false,
                        });
                    }
                }
                k => {
                    self.block(
                        ptr,
                        "unsupported-keyword",
                        format!("{k} cannot be expressed in Gemini parameters"),
                    );
                }
            }
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        if !out.contains_key("type") && !out.contains_key("anyOf") {
            if out.contains_key("properties") {
                out.insert("type".into(), json!("object"));
            } else {
                // An untyped schema (`{}`, annotations only) has no `Schema` spelling.
                self.block(
                    ptr,
                    "missing-type",
                    "a schema without type cannot be expressed in parameters",
                );
            }
        }
        if let Some(f) = out.shift_remove("x-format-note") {
            let d = match out.get("description").and_then(Value::as_str) {
                Some(d) => format!("{d} ({})", f.as_str().unwrap_or_default()),
                None => f.as_str().unwrap_or_default().to_string(),
            };
            out.insert("description".into(), Value::String(d));
        }
        Value::Object(out)
    }

    fn inline_ref(&mut self, obj: &Keys<'a>, r: &'a str, ptr: &str, depth: usize) -> Value {
        if self.stack.contains(&r) {
            return self.block(
                ptr,
                "recursive-ref",
                format!("recursive $ref '{r}' cannot be inlined for parameters"),
            );
        }
        let Some(Value::Object(target)) = util::resolve(self.root, r) else {
            return self.block(
                ptr,
                "ref-unresolved",
                format!("$ref '{r}' cannot be resolved locally"),
            );
        };
        let merged = obj.over(target);
        self.stack.push(r);
        let out = if self.enter(ptr, depth + 1) {
            self.keywords(&merged, ptr, depth + 1)
        } else {
            Value::Null
        };
        self.stack.pop();
        out
    }

    fn type_kw(&mut self, t: &Value, out: &mut Map<String, Value>, nullable: &mut bool, ptr: &str) {
        match t {
            Value::String(_) => {
                out.insert("type".into(), t.clone());
            }
            Value::Array(ts) => {
                let non_null: Vec<&Value> = ts.iter().filter(|t| *t != "null").collect();
                *nullable |= non_null.len() < ts.len();
                match non_null.as_slice() {
                    [] => {
                        out.insert("type".into(), json!("null"));
                    }
                    [one] => {
                        out.insert("type".into(), (*one).clone());
                    }
                    _ => {
                        self.block(
                            ptr,
                            "type-array",
                            "several non-null types cannot be expressed in parameters",
                        );
                    }
                }
            }
            _ => {
                self.block(ptr, "invalid-type", "type must be a string");
            }
        }
    }

    fn properties(&mut self, x: &'a Value, out: &mut Map<String, Value>, ptr: &str, depth: usize) {
        let Some(props) = x.as_object() else { return };
        let base = push(ptr, "properties");
        let mut m = Map::new();
        for (k, p) in props {
            let s = self.node(p, &push(&base, k), depth + 1);
            m.insert(k.clone(), s);
        }
        // Empty or not: `check` refuses an object without properties at any depth.
        out.insert("properties".into(), Value::Object(m));
    }

    /// The union `key` (`anyOf`, `oneOf`) of `obj`, its branches `x`, written into `out` (a
    /// `null` branch makes the node `nullable`) for the node at `ptr`, `depth` deep.
    fn union(
        &mut self,
        (key, x): (&str, &'a Value),
        obj: &Keys<'a>,
        (out, nullable): (&mut Map<String, Value>, &mut bool),
        (ptr, depth): (&str, usize),
    ) {
        let Some(branches) = x.as_array() else { return };
        if key == "oneOf" && !util::one_of_is_disjoint(branches) {
            self.block(
                ptr,
                "unsupported-keyword",
                "oneOf with overlapping branches cannot be expressed",
            );
            return;
        }
        let base = push(ptr, key);
        let mut kept = Vec::new();
        for (i, b) in branches.iter().enumerate() {
            if b.get("type").is_some_and(|t| t == "null")
                && b.as_object().is_some_and(|o| o.len() == 1)
            {
                *nullable = true;
                continue;
            }
            kept.push(self.node(b, &push(&base, &i.to_string()), depth + 1));
        }
        let only_annotations = obj
            .iter()
            .all(|(k, _)| k == key || util::ANNOTATIONS.contains(&k));
        match kept.len() {
            1 if only_annotations => {
                // `anyOf: [X, null]` → X + nullable; the node's own annotations win.
                if let Some(Value::Object(b)) = kept.pop() {
                    for (k, v) in b {
                        out.entry(k).or_insert(v);
                    }
                }
            }
            _ => {
                out.insert("anyOf".into(), Value::Array(kept));
            }
        }
    }

    fn enum_kw(&mut self, x: &Value, out: &mut Map<String, Value>, nullable: &mut bool, ptr: &str) {
        let Some(members) = x.as_array() else { return };
        let non_null: Vec<&Value> = members.iter().filter(|m| !m.is_null()).collect();
        *nullable |= non_null.len() < members.len();
        if non_null.iter().all(|m| m.is_string()) {
            out.entry("type").or_insert(json!("string"));
            out.insert(
                "enum".into(),
                Value::Array(non_null.into_iter().cloned().collect()),
            );
        } else if non_null.iter().all(|m| m.is_number()) {
            let integer = non_null.iter().all(|m| m.is_i64() || m.is_u64());
            out.entry("type")
                .or_insert(json!(if integer { "integer" } else { "number" }));
            out.insert("format".into(), json!("enum"));
            let strings = non_null
                .iter()
                .map(|m| Value::String(m.to_string()))
                .collect();
            out.insert("enum".into(), Value::Array(strings));
        } else {
            self.block(
                ptr,
                "enum-not-string",
                "enum mixes types or has booleans/objects; parameters needs strings",
            );
        }
    }
}

/// Keeps `enum`/`date-time`; any other format goes into the description (`(format: uuid)`):
/// true then.
fn format_kw(x: &Value, out: &mut Map<String, Value>) -> bool {
    match x.as_str() {
        Some(f) if FORMATS.contains(&f) => {
            out.entry("format").or_insert_with(|| x.clone());
            false
        }
        Some(f) => {
            out.insert(
                "x-format-note".into(),
                Value::String(format!("format: {f}")),
            );
            true
        }
        None => false,
    }
}

/// Checks a `parameters` value as sent: only `Schema` fields, single string types, string
/// enums, supported formats, and every object schema (at any depth) with properties.
/// The proto3 JSON name of a proto field name: `min_length` → `minLength`.
pub(crate) fn json_name(proto: &str) -> String {
    let mut out = String::with_capacity(proto.len());
    let mut upper = false;
    for c in proto.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

pub(super) fn check(schema: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    if schema
        .get("type")
        .is_some_and(|t| t != "object" && t != "OBJECT")
    {
        out.push(Violation::root("parameters must be an OBJECT schema"));
    }
    walk(schema, "", 0, &mut out);
    out
}

/// Whether `k` is a field of the Gemini `Schema` object (what `parameters` accepts).
fn is_field(k: &str) -> bool {
    KEEP.contains(&k) || REWRITTEN.contains(&k)
}

fn walk(v: &Value, ptr: &str, depth: usize, out: &mut Vec<Violation>) {
    if depth > MAX_WALK_DEPTH {
        out.push(Violation::too_deep(ptr));
        return;
    }
    let Some(obj) = v.as_object() else {
        out.push(Violation::new(
            ptr,
            "invalid-type",
            "a schema must be an object",
        ));
        return;
    };
    for k in obj.keys() {
        // The API reads JSON by the proto3 mapping, which takes a field's proto name
        // (`property_ordering`) as well as its JSON name (`propertyOrdering`).
        if !is_field(k) && !is_field(&json_name(k)) {
            out.push(Violation::new(
                ptr,
                "unknown-field",
                format!("Unknown name \"{k}\": Cannot find field."),
            ));
        }
    }
    if obj.get("type").is_some_and(|t| !t.is_string()) {
        out.push(Violation::new(
            &push(ptr, "type"),
            "type-array",
            "type must be a single string",
        ));
    }
    out.extend(Violation::unsupported_format(
        obj.get("format"),
        |f| FORMATS.contains(&f),
        || ptr.to_string(),
        "(enum, date-time)",
    ));
    if let Some(e) = obj.get("enum").and_then(Value::as_array)
        && let Some(i) = e.iter().position(|m| !m.is_string())
    {
        out.push(Violation::new(
            &push(&push(ptr, "enum"), &i.to_string()),
            "enum-not-string",
            "enum values must be strings",
        ));
    }
    let is_object = obj
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("object"));
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        if props.is_empty() && is_object {
            out.push(Violation::new(
                &push(ptr, "properties"),
                "empty-properties",
                "should be non-empty for OBJECT type",
            ));
        }
        let base = push(ptr, "properties");
        for (k, p) in props {
            walk(p, &push(&base, k), depth + 1, out);
        }
    } else if is_object {
        out.push(Violation::new(
            &push(ptr, "properties"),
            "empty-properties",
            "should be non-empty for OBJECT type",
        ));
    }
    if let Some(items) = obj.get("items") {
        walk(items, &push(ptr, "items"), depth + 1, out);
    }
    if let Some(b) = obj.get("anyOf").and_then(Value::as_array) {
        let base = push(ptr, "anyOf");
        for (i, x) in b.iter().enumerate() {
            walk(x, &push(&base, &i.to_string()), depth + 1, out);
        }
    }
}
