//! OpenAI strict-mode rules: the per-node checks (shared with the transform, which runs them on
//! each rewritten node) and the whole-schema checker with its limits.

use serde_json::{Map, Value};

use super::keywords::{Keywords, supported};
use super::limits::Counter;
use super::prepared::Violation;
use super::util::{self, MAX_WALK_DEPTH, Ptr};

/// String formats strict mode supports (no `uri`).
pub(super) const FORMATS: &[&str] = &[
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

/// Checks one node (its keywords `kw` scanned from `obj`) against the strict rules that can be
/// seen locally. `root` resolves refs.
pub(super) fn node_rules(
    root: &Value,
    obj: &Map<String, Value>,
    kw: &Keywords<'_>,
    (ptr, is_root): (&Ptr<'_>, bool),
    out: &mut Vec<Violation>,
) {
    if is_root {
        root_rules(obj, out);
    }
    if kw.unsupported {
        for k in obj.keys() {
            if !supported(k) {
                out.push(Violation::at(
                    ptr,
                    "unsupported-keyword",
                    format!("{k} is not supported in strict mode"),
                ));
            }
        }
    }
    out.extend(Violation::unsupported_format(
        kw.format,
        |f| FORMATS.contains(&f),
        || ptr.render(),
        "in strict mode",
    ));
    for t in kw.types() {
        if !TYPES.contains(&t) {
            out.push(Violation::at(
                ptr,
                "invalid-type",
                format!("unknown type '{t}'"),
            ));
        }
    }
    if kw.items.is_some_and(|i| !i.is_object()) {
        out.push(Violation::at(
            ptr,
            "unsupported-keyword",
            "items must be a single schema (tuple-form items are not supported in strict mode)",
        ));
    }
    if let Some(r) = kw.ref_ {
        ref_rules(root, obj, r, ptr, out);
    } else if kw.type_.is_none() && !kw.typed_otherwise() {
        out.push(Violation::at(
            ptr,
            "missing-type",
            "schema must have a 'type' (or anyOf, enum, const, $ref)",
        ));
    }
    if kw.object || kw.additional.is_some() {
        object_rules(kw, ptr, out);
    }
}

fn root_rules(obj: &Map<String, Value>, out: &mut Vec<Violation>) {
    if obj.contains_key("anyOf") {
        out.push(Violation::root("the root schema must not be anyOf"));
    }
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        let got = match obj.get("type") {
            Some(t) => t.to_string(),
            None => "none".into(),
        };
        out.push(Violation::root(format!(
            "the root schema must be a plain object (type \"object\"), got type {got}"
        )));
    }
}

fn ref_rules(
    root: &Value,
    obj: &Map<String, Value>,
    r: &Value,
    ptr: &Ptr<'_>,
    out: &mut Vec<Violation>,
) {
    let Some(r) = r.as_str() else {
        out.push(Violation::at(
            ptr,
            "ref-unresolved",
            "$ref must be a string",
        ));
        return;
    };
    let supported = r == "#" || r.starts_with("#/$defs/") || r.starts_with("#/definitions/");
    if !supported || util::resolve(root, r).is_none() {
        out.push(Violation::at(
            ptr,
            "ref-unresolved",
            format!("$ref '{r}' must point to the root (#) or into $defs/definitions"),
        ));
    } else if let Some(cycle) = ref_cycle(root, r) {
        out.push(Violation::at(
            ptr,
            "ref-cycle",
            format!("$ref '{r}' only leads to other $refs and back ({cycle}): it names no schema"),
        ));
    }
    let siblings: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !["$ref", "$defs", "definitions", "$schema", "$id"].contains(k))
        .collect();
    if !siblings.is_empty() {
        out.push(Violation::at(
            ptr,
            "ref-siblings",
            format!(
                "$ref cannot have sibling keywords in strict mode ({})",
                siblings.join(", ")
            ),
        ));
    }
}

/// A chain of schemas that are nothing but a `$ref`, starting at `r`, that comes back to a ref
/// already followed: `a -> b -> a`.
fn ref_cycle(root: &Value, r: &str) -> Option<String> {
    let mut seen = vec![r.to_string()];
    let mut at = r.to_string();
    while let Some(Value::Object(target)) = util::resolve(root, &at) {
        let next = target.get("$ref").and_then(Value::as_str)?;
        if seen.iter().any(|s| s == next) {
            seen.push(next.to_string());
            return Some(seen.join(" -> "));
        }
        if seen.len() > 64 {
            return None;
        }
        seen.push(next.to_string());
        at = next.to_string();
    }
    None
}

fn object_rules(kw: &Keywords<'_>, ptr: &Ptr<'_>, out: &mut Vec<Violation>) {
    if kw.additional != Some(&Value::Bool(false)) {
        let why = match kw.additional {
            None if kw.properties.is_none() => "an object without properties is an open map",
            None => "'additionalProperties' is required to be supplied and to be false",
            Some(_) => "open map: 'additionalProperties' must be false",
        };
        out.push(Violation::at(ptr, "additional-properties-false", why));
    }
    let props = kw.properties.and_then(Value::as_object);
    for name in kw
        .required
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if props.is_none_or(|p| !p.contains_key(name)) {
            out.push(Violation::at(
                ptr,
                "required-unknown",
                format!("'required' lists '{name}', which is not a property"),
            ));
        }
    }
    let Some(props) = props else {
        return;
    };
    if let Some(missing) = first_unlisted(props, kw.required) {
        out.push(Violation::at(
            ptr,
            "required-all",
            format!("every property must be in 'required'; missing '{missing}'"),
        ));
    }
}

/// The first property (in property order) that `required` does not list. `required` usually
/// lists the properties in their own order (the transform writes it so), and one merged pass
/// answers that; otherwise a set does (a list scan per property would be quadratic).
fn first_unlisted<'a>(props: &'a Map<String, Value>, required: Option<&Value>) -> Option<&'a str> {
    let listed = || {
        required
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    };
    let mut rest = listed();
    if props.keys().all(|k| rest.any(|r| r == k)) {
        return None;
    }
    let listed = util::Names::new(listed());
    props
        .keys()
        .map(String::as_str)
        .find(|k| !listed.contains(k))
}

/// Checks a whole schema as it would be sent with `strict: true` to OpenAI.
pub(super) fn openai(schema: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(obj) = schema.as_object() else {
        out.push(Violation::root("the root schema must be a JSON object"));
        return out;
    };
    let mut counter = Counter::default();
    let mut walker = Walker {
        root: schema,
        counter: &mut counter,
        out: &mut out,
    };
    walker.visit(obj, &Ptr::Root, 0, 0);
    for section in ["$defs", "definitions"] {
        if let Some(defs) = obj.get(section).and_then(Value::as_object) {
            let base = Ptr::Key(&Ptr::Root, section);
            for (name, def) in defs {
                walker.child(def, &Ptr::Key(&base, name), 0, 1);
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
    fn child(&mut self, v: &Value, ptr: &Ptr<'_>, parent_level: usize, depth: usize) {
        match v {
            Value::Object(obj) => self.visit(obj, ptr, parent_level, depth),
            _ => self.out.push(Violation::at(
                ptr,
                "missing-type",
                "boolean schemas are not supported in strict mode",
            )),
        }
    }

    /// Checks a node and its subschemas. Its nesting level is `parent_level` plus one when it
    /// is an object schema; the root is level 1 whatever it is.
    fn visit(
        &mut self,
        obj: &Map<String, Value>,
        ptr: &Ptr<'_>,
        parent_level: usize,
        depth: usize,
    ) {
        if depth > MAX_WALK_DEPTH {
            self.out.push(Violation::too_deep(&ptr.render()));
            return;
        }
        let kw = Keywords::scan(obj);
        let level = if depth == 0 {
            1
        } else {
            parent_level + usize::from(kw.object)
        };
        node_rules(self.root, obj, &kw, (ptr, depth == 0), self.out);
        self.counter.node(&kw, ptr, level, self.out);
        if let Some(props) = kw.properties.and_then(Value::as_object) {
            let base = Ptr::Key(ptr, "properties");
            for (k, v) in props {
                self.child(v, &Ptr::Key(&base, k), level, depth + 1);
            }
        }
        if let Some(items) = kw.items.filter(|i| i.is_object()) {
            self.child(items, &Ptr::Key(ptr, "items"), level, depth + 1);
        }
        if let Some(branches) = kw.any_of.and_then(Value::as_array) {
            let base = Ptr::Key(ptr, "anyOf");
            for (i, b) in branches.iter().enumerate() {
                self.child(b, &Ptr::Index(&base, i), level, depth + 1);
            }
        }
    }
}
