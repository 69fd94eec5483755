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
//! * annotations strict mode refuses (`default`, `examples`, `$comment`, `deprecated`,
//!   `readOnly`, `writeOnly`, a `format` outside its list) are dropped and each reported as a
//!   [`Loss`]; a dropped `default` or `format` is written into the description; `$schema` and
//!   `$id` are dropped silently;
//! * absent `additionalProperties` on an object that declares `properties` means "closed"
//!   (the universal convention); an object with neither is an open map and is reported.

use serde_json::{Map, Value, json};

use super::check::{FORMATS, node_rules};
use super::keywords::Keywords;
use super::local;
use super::prepared::{Loss, Violation};
use super::util::{self, ANNOTATIONS, MAX_WALK_DEPTH, Ptr};

/// Result of the transform: the schema to send, what blocks sending it strict, and what was
/// dropped to get it (pointers into the neutral schema).
#[derive(Clone, Debug)]
pub struct Transformed {
    pub schema: Value,
    pub blockers: Vec<Violation>,
    pub lost: Vec<Loss>,
}

/// Rewrites a neutral parameters schema for OpenAI strict mode.
pub fn transform(neutral: &Value) -> Transformed {
    let mut blockers = Vec::new();
    let Some(obj) = neutral.as_object() else {
        blockers.push(Violation::root("the root schema must be a JSON object"));
        return Transformed {
            schema: neutral.clone(),
            blockers,
            lost: Vec::new(),
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
    let mut lost = Vec::new();
    let mut t = Transform {
        root,
        blockers: &mut blockers,
        lost: &mut lost,
    };
    t.node(&mut schema, &Ptr::Root, true, 0);
    Transformed {
        schema,
        blockers,
        lost,
    }
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
    lost: &'a mut Vec<Loss>,
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
        let mut kw = Keywords::scan(obj);
        let refused_format = kw
            .format
            .and_then(Value::as_str)
            .is_some_and(|f| !FORMATS.contains(&f));
        if kw.unsupported || refused_format {
            local::drop_refused(obj, FORMATS, ptr, self.lost);
            kw = Keywords::scan(obj);
        }
        let mut listed = None;
        if !local::untouched(&kw, is_root) {
            listed = local::rewrite_local(obj, is_root);
            kw = Keywords::scan(obj);
        }
        node_rules(self.root, obj, &kw, (ptr, is_root), self.blockers);
        if kw.has_subschemas() {
            self.children(obj, listed.as_deref(), ptr, depth);
        }
    }

    /// Transforms the subschemas of a rewritten node; `listed` says, per property, whether the
    /// node originally required it (`None` unless the node is closed, when nothing is made
    /// nullable).
    fn children(
        &mut self,
        obj: &mut Map<String, Value>,
        listed: Option<&[bool]>,
        ptr: &Ptr<'_>,
        depth: usize,
    ) {
        // One pass over the keys finds every subschema keyword; they are visited in a fixed
        // order (blockers come out in that order).
        let (mut props, mut items, mut any_of, mut defs, mut definitions) =
            (None, None, None, None, None);
        for (k, v) in obj.iter_mut() {
            let slot = match k.as_str() {
                "properties" => &mut props,
                "items" => &mut items,
                "anyOf" => &mut any_of,
                "$defs" => &mut defs,
                "definitions" => &mut definitions,
                _ => continue,
            };
            *slot = Some(v);
        }
        if let Some(Value::Object(props)) = props {
            let base = Ptr::Key(ptr, "properties");
            for (i, (k, child)) in props.iter_mut().enumerate() {
                let optional = listed.is_some_and(|l| !l[i]);
                let needs_null = optional && !util::accepts_null(self.root, child);
                self.node(child, &Ptr::Key(&base, k), false, depth + 1);
                if needs_null {
                    make_nullable(child);
                }
            }
        }
        if let Some(items) = items.filter(|i| i.is_object()) {
            self.node(items, &Ptr::Key(ptr, "items"), false, depth + 1);
        }
        if let Some(Value::Array(branches)) = any_of {
            let base = Ptr::Key(ptr, "anyOf");
            for (i, b) in branches.iter_mut().enumerate() {
                self.node(b, &Ptr::Index(&base, i), false, depth + 1);
            }
        }
        for (section, defs) in [("$defs", defs), ("definitions", definitions)] {
            if let Some(Value::Object(defs)) = defs {
                let base = Ptr::Key(ptr, section);
                for (name, def) in defs.iter_mut() {
                    self.node(def, &Ptr::Key(&base, name), false, depth + 1);
                }
            }
        }
    }
}

/// Makes a (transformed) schema also accept `null`, in the smallest form that keeps enums,
/// consts and refs correct.
pub(crate) fn make_nullable(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    // One pass over the keys (this runs on every optional property).
    let (mut plain, mut any_of, mut type_) = (true, None, None);
    for (k, x) in obj.iter_mut() {
        match k.as_str() {
            "enum" | "const" | "$ref" => plain = false,
            "anyOf" => any_of = Some(x),
            "type" => type_ = Some(x),
            _ => {}
        }
    }
    if let Some(Value::Array(branches)) = any_of {
        if plain {
            branches.push(null_schema());
            return;
        }
    } else if plain {
        match type_ {
            Some(t)
                if t.as_str()
                    .is_some_and(|t| ["string", "number", "integer", "boolean"].contains(&t)) =>
            {
                let name = std::mem::take(t);
                *t = Value::Array(vec![name, null_name()]);
                return;
            }
            Some(Value::Array(ts)) if !ts.iter().any(|t| t == "object" || t == "array") => {
                ts.push(null_name());
                return;
            }
            _ => {}
        }
    }
    // Built by hand: `json!` would serialize `inner` into a fresh copy (a deep copy per
    // wrapped property, quadratic over nested optional objects).
    let inner = std::mem::take(v);
    let mut wrapper = Map::with_capacity(1);
    wrapper.insert("anyOf".into(), Value::Array(vec![inner, null_schema()]));
    *v = Value::Object(wrapper);
}

fn null_name() -> Value {
    Value::String("null".into())
}

/// `{"type":"null"}`, sized up front (one per optional property that gets wrapped).
fn null_schema() -> Value {
    let mut null = Map::with_capacity(1);
    null.insert("type".into(), null_name());
    Value::Object(null)
}
