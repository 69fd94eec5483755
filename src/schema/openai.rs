//! OpenAI strict transform: closes every object, lists every property in `required`, makes
//! the formerly optional ones nullable, and reports (as blockers, with pointers into the
//! neutral schema) whatever cannot be made strict without changing what the schema accepts.
//!
//! Choices (see also the module docs of `schema`):
//! * optional → nullable: primitive `type` becomes `[T, "null"]`; an `anyOf` gains a
//!   `{"type":"null"}` branch; anything else (enum, const, `$ref`, objects, arrays) is wrapped
//!   as `{"anyOf":[X,{"type":"null"}]}` so `null` is not rejected by the enum/const/ref;
//! * a property that already accepts `null` is made required as is (no second null);
//! * `$ref` with annotation siblings becomes `{"anyOf":[{"$ref":…}], …annotations}` instead of
//!   being inlined: linear in size, and the only form that works for recursive targets;
//! * `oneOf` becomes `anyOf` only when provably disjoint; `allOf` is merged when entries do
//!   not conflict; otherwise they stay and are reported;
//! * a root `$ref` is inlined once (the root must be an object), `$defs` kept;
//! * `default: null` is removed (it contradicts non-null types); other defaults are kept;
//! * absent `additionalProperties` on an object that declares `properties` means "closed"
//!   (the universal convention); an object with neither is an open map and is reported.

use serde_json::{Map, Value, json};

use super::Violation;
use super::check::node_rules;
use super::util::{self, ANNOTATIONS, MAX_WALK_DEPTH, Ptr};

/// Result of the transform: the schema to send and what blocks sending it strict.
#[derive(Clone, Debug)]
pub struct Transformed {
    pub schema: Value,
    pub blockers: Vec<Violation>,
}

/// Rewrites a neutral parameters schema for OpenAI strict mode.
pub fn transform(neutral: &Value) -> Transformed {
    let mut blockers = Vec::new();
    let Some(obj) = neutral.as_object() else {
        blockers.push(Violation::new(
            "",
            "root-object",
            "the root schema must be a JSON object",
        ));
        return Transformed {
            schema: neutral.clone(),
            blockers,
        };
    };
    // Only a root `$ref` needs a separate inlined copy to judge refs against; otherwise the
    // neutral schema itself is the reference and the output is its single clone.
    let inlined = inline_root_ref(neutral, obj);
    let root = inlined.as_ref().unwrap_or(neutral);
    let mut schema = root.clone();
    if let Some(o) = schema.as_object_mut()
        && o.keys()
            .all(|k| ANNOTATIONS.contains(&k.as_str()) || k == "$schema")
    {
        // `{}`: a tool without parameters.
        o.insert("type".into(), json!("object"));
        o.insert("properties".into(), json!({}));
    }
    let mut t = Transform {
        root,
        blockers: &mut blockers,
    };
    t.node(&mut schema, &Ptr::Root, true, 0);
    Transformed { schema, blockers }
}

/// A root that is a `$ref` into `$defs` is replaced by its target (root keywords win; `$defs`
/// stay so that recursive references keep resolving).
fn inline_root_ref(neutral: &Value, obj: &Map<String, Value>) -> Option<Value> {
    let r = obj.get("$ref").and_then(Value::as_str)?;
    let Some(Value::Object(target)) = util::resolve(neutral, r).filter(|_| r != "#") else {
        return None;
    };
    let mut out = target.clone();
    for (k, v) in obj {
        if k != "$ref" {
            out.insert(k.clone(), v.clone());
        }
    }
    Some(Value::Object(out))
}

struct Transform<'a> {
    /// The neutral schema (root `$ref` inlined): refs and null acceptance are judged on it.
    root: &'a Value,
    blockers: &'a mut Vec<Violation>,
}

impl Transform<'_> {
    fn node(&mut self, v: &mut Value, ptr: &Ptr<'_>, is_root: bool, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            self.blockers.push(Violation::at(
                ptr,
                "max-depth",
                "schema is nested too deeply",
            ));
            return;
        }
        let Some(obj) = v.as_object_mut() else {
            self.blockers.push(Violation::at(
                ptr,
                "missing-type",
                "boolean schemas are not supported in strict mode",
            ));
            return;
        };
        let originally_required = rewrite_local(obj, is_root);
        node_rules(self.root, obj, ptr, is_root, self.blockers);
        self.children(obj, &originally_required, ptr, depth);
    }

    fn children(
        &mut self,
        obj: &mut Map<String, Value>,
        originally_required: &[String],
        ptr: &Ptr<'_>,
        depth: usize,
    ) {
        let closed = obj.get("additionalProperties") == Some(&Value::Bool(false));
        // A set, not the list: objects with thousands of properties would go quadratic.
        let originally_required = util::Names::new(originally_required.iter().map(String::as_str));
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            let base = Ptr::Key(ptr, "properties");
            for (k, child) in props.iter_mut() {
                let optional = !originally_required.contains(k.as_str());
                let needs_null = closed && optional && !util::accepts_null(self.root, child);
                self.node(child, &Ptr::Key(&base, k), false, depth + 1);
                if needs_null {
                    make_nullable(child);
                }
            }
        }
        if let Some(items) = obj.get_mut("items").filter(|i| i.is_object()) {
            self.node(items, &Ptr::Key(ptr, "items"), false, depth + 1);
        }
        if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
            let base = Ptr::Key(ptr, "anyOf");
            for (i, b) in branches.iter_mut().enumerate() {
                self.node(b, &Ptr::Index(&base, i), false, depth + 1);
            }
        }
        for section in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = obj.get_mut(section) {
                let base = Ptr::Key(ptr, section);
                for (name, def) in defs.iter_mut() {
                    self.node(def, &Ptr::Key(&base, name), false, depth + 1);
                }
            }
        }
    }
}

/// Local rewrites of one node before its rules are checked; returns the node's original
/// `required` list (the transform needs it to know which properties were optional).
fn rewrite_local(obj: &mut Map<String, Value>, is_root: bool) -> Vec<String> {
    if obj.get("default") == Some(&Value::Null) {
        obj.shift_remove("default");
    }
    if let Some(Value::Array(branches)) = obj.get("oneOf")
        && !obj.contains_key("anyOf")
        && util::one_of_is_disjoint(branches)
    {
        rename_key(obj, "oneOf", "anyOf");
    }
    if obj.contains_key("allOf") {
        merge_all_of(obj);
    }
    if obj.contains_key("$ref") && !is_root {
        wrap_ref_with_annotations(obj);
    }
    if !obj.contains_key("type") && obj.contains_key("properties") {
        insert_first(obj, "type", json!("object"));
    }
    let originally_required: Vec<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !util::is_object_schema(obj) {
        return originally_required;
    }
    let has_props = obj.get("properties").is_some_and(Value::is_object);
    let explicitly_closed = obj.get("additionalProperties") == Some(&Value::Bool(false));
    if !has_props && (is_root || explicitly_closed) {
        obj.insert("properties".into(), json!({}));
    }
    if obj.get("properties").is_some_and(Value::is_object)
        && !obj.contains_key("additionalProperties")
    {
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
    if obj.get("additionalProperties") == Some(&Value::Bool(false))
        && let Some(Value::Object(props)) = obj.get("properties")
    {
        let mut all: Vec<Value> = props.keys().map(|k| Value::String(k.clone())).collect();
        // Names required but not declared keep the schema as (un)satisfiable as it was.
        for extra in &originally_required {
            if !props.contains_key(extra) {
                all.push(Value::String(extra.clone()));
            }
        }
        obj.insert("required".into(), Value::Array(all));
    }
    originally_required
}

/// Makes a (transformed) schema also accept `null`, in the smallest form that keeps enums,
/// consts and refs correct.
pub fn make_nullable(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    let plain = !["enum", "const", "$ref"]
        .iter()
        .any(|k| obj.contains_key(*k));
    if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
        if plain {
            branches.push(json!({"type": "null"}));
            return;
        }
    } else if plain {
        match obj.get_mut("type") {
            Some(Value::String(t))
                if ["string", "number", "integer", "boolean"].contains(&t.as_str()) =>
            {
                let t = std::mem::take(t);
                obj.insert(
                    "type".into(),
                    Value::Array(vec![Value::String(t), null_name()]),
                );
                return;
            }
            Some(Value::Array(ts)) if !ts.iter().any(|t| t == "object" || t == "array") => {
                ts.push(json!("null"));
                return;
            }
            _ => {}
        }
    }
    // Built by hand: `json!` would serialize `inner` into a fresh copy (a deep copy per
    // wrapped property, quadratic over nested optional objects).
    let inner = std::mem::take(v);
    let mut wrapper = Map::new();
    wrapper.insert(
        "anyOf".into(),
        Value::Array(vec![inner, json!({"type": "null"})]),
    );
    *v = Value::Object(wrapper);
}

fn null_name() -> Value {
    Value::String("null".into())
}

/// `{"$ref": r, description…}` → `{"anyOf":[{"$ref": r}], description…}` when every sibling is
/// an annotation (key order kept). Other siblings are left for the rules to report.
fn wrap_ref_with_annotations(obj: &mut Map<String, Value>) {
    if obj.len() == 1
        || !obj
            .keys()
            .all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()))
    {
        return;
    }
    let old = std::mem::take(obj);
    for (k, v) in old {
        if k == "$ref" {
            let mut r = Map::new();
            r.insert("$ref".into(), v);
            obj.insert("anyOf".into(), Value::Array(vec![Value::Object(r)]));
        } else {
            obj.insert(k, v);
        }
    }
}

/// Merges `allOf` entries into the node when that keeps the meaning: entries are inline
/// objects (no `$ref`), nobody sets `additionalProperties`, property names do not collide and
/// every other shared keyword has the same value. Otherwise the node is left unchanged.
fn merge_all_of(obj: &mut Map<String, Value>) {
    let Some(Value::Array(entries)) = obj.get("allOf") else {
        return;
    };
    let mut merged = obj.clone();
    merged.shift_remove("allOf");
    for e in entries {
        let Some(e) = e.as_object() else { return };
        if e.contains_key("$ref") || e.contains_key("additionalProperties") {
            return;
        }
        for (k, v) in e {
            match (k.as_str(), merged.get_mut(k)) {
                (_, None) => {
                    merged.insert(k.clone(), v.clone());
                }
                ("properties", Some(Value::Object(mine))) => {
                    let Some(theirs) = v.as_object() else { return };
                    for (name, s) in theirs {
                        if mine.contains_key(name) {
                            return;
                        }
                        mine.insert(name.clone(), s.clone());
                    }
                }
                ("required", Some(Value::Array(mine))) => {
                    let Some(theirs) = v.as_array() else { return };
                    for r in theirs {
                        if !mine.contains(r) {
                            mine.push(r.clone());
                        }
                    }
                }
                (_, Some(existing)) if existing == v => {}
                _ => return,
            }
        }
    }
    if merged.contains_key("additionalProperties") {
        return;
    }
    *obj = merged;
}

/// Renames a key in place, keeping its position (serde_json keeps insertion order here).
fn rename_key(obj: &mut Map<String, Value>, from: &str, to: &str) {
    let old = std::mem::take(obj);
    for (k, v) in old {
        let k = if k == from { to.to_string() } else { k };
        obj.insert(k, v);
    }
}

/// Inserts a key as the first one of the map.
fn insert_first(obj: &mut Map<String, Value>, key: &str, value: Value) {
    let old = std::mem::take(obj);
    obj.insert(key.into(), value);
    obj.extend(old);
}
