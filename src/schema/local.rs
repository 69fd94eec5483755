//! The OpenAI transform's rewrites of one node, before its rules are checked and its
//! subschemas visited: refused annotations dropped (and reported), disjoint `oneOf`, `allOf`,
//! annotated `$ref`, the implied `type`, and closing objects with every property required.

use serde_json::{Map, Value, json};

use super::keywords::Keywords;
use super::prepared::Loss;
use super::util::{self, ANNOTATIONS, Ptr};

/// Annotations strict mode refuses: every one but `title` and `description` (the first two of
/// [`ANNOTATIONS`]). Dropped, each reported as a [`Loss`]; they never change which instances a
/// schema accepts (JSON Schema 2020-12: `format` is an annotation too).
fn refused_annotations() -> &'static [&'static str] {
    &ANNOTATIONS[2..]
}
/// Dropped without a loss: they name the dialect or the document, and tell the model nothing.
const META: &[&str] = &["$schema", "$id"];

/// Drops the annotations strict mode refuses from one node: [`refused_annotations`], a `format`
/// outside `formats`, `$schema` and `$id`. A dropped `default` (not `null`) or `format` is
/// written into the node's description (`(default: 5)`, `(format: uri)`) so the model is still
/// told.
pub(super) fn drop_refused(
    obj: &mut Map<String, Value>,
    formats: &[&str],
    ptr: &Ptr<'_>,
    lost: &mut Vec<Loss>,
) {
    let refused = |k: &str, v: &Value| {
        refused_annotations().contains(&k)
            || META.contains(&k)
            || (k == "format" && v.as_str().is_some_and(|f| !formats.contains(&f)))
    };
    if !obj.iter().any(|(k, v)| refused(k, v)) {
        return;
    }
    let mut told = Vec::new();
    let old = std::mem::take(obj);
    for (k, v) in old {
        if !refused(&k, &v) {
            obj.insert(k, v);
            continue;
        }
        if META.contains(&k.as_str()) {
            continue;
        }
        let keyword = refused_annotations()
            .iter()
            .copied()
            .find(|a| *a == k)
            .unwrap_or("format");
        // `default: null` tells nothing a nullable type does not.
        let described = matches!(keyword, "default" | "format") && !v.is_null();
        if described {
            let shown = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            told.push(format!("{keyword}: {shown}"));
        }
        lost.push(Loss {
            pointer: ptr.render(),
            keyword,
            described,
        });
    }
    if !told.is_empty() {
        let note = format!("({})", told.join("; "));
        match obj.get_mut("description") {
            Some(Value::String(d)) => {
                d.push(' ');
                d.push_str(&note);
            }
            Some(_) => {}
            None => {
                obj.insert("description".into(), Value::String(note));
            }
        }
    }
}

/// What the rewrites read of a node, found in one pass over its keys (this runs on every node,
/// and a node has few keys: cheaper than a hashed lookup per keyword).
#[derive(Default)]
struct Shape {
    /// `oneOf`, `allOf` or `$ref` is present: the rare rewrites may apply.
    rare: bool,
    ref_: bool,
    type_: bool,
    /// `properties` is present / is an object.
    properties: bool,
    props_object: bool,
    object_schema: bool,
    additional: Additional,
}

#[derive(Default, PartialEq)]
enum Additional {
    #[default]
    Absent,
    False,
    Other,
}

impl Shape {
    fn of(obj: &Map<String, Value>) -> Shape {
        let mut s = Shape::default();
        let mut type_ = None;
        for (k, v) in obj {
            match k.as_str() {
                "oneOf" | "allOf" => s.rare = true,
                "$ref" => s.ref_ = true,
                "type" => type_ = Some(v),
                "properties" => {
                    s.properties = true;
                    s.props_object = v.is_object();
                }
                "additionalProperties" => {
                    s.additional = if *v == Value::Bool(false) {
                        Additional::False
                    } else {
                        Additional::Other
                    };
                }
                _ => {}
            }
        }
        s.type_ = type_.is_some();
        s.object_schema = util::describes_objects(type_, s.properties);
        s
    }
}

/// True when [`rewrite_local`] would leave the node (its keywords `kw`) as it is and return
/// `None`: no keyword it acts on (`oneOf` and `allOf` are unsupported ones), not an object.
/// Most nodes are leaves like that, and skip its own pass over the keys.
pub(super) fn untouched(kw: &Keywords<'_>, is_root: bool) -> bool {
    !is_root
        && !kw.unsupported
        && kw.ref_.is_none()
        && kw.properties.is_none()
        && kw.additional.is_none()
        && !kw.object
}

/// Local rewrites of one node before its rules are checked. Returns, when the node ends up
/// closed (`additionalProperties: false` and a `properties` object), whether its original
/// `required` listed each property (in property order): the others are made nullable.
pub(super) fn rewrite_local(obj: &mut Map<String, Value>, is_root: bool) -> Option<Vec<bool>> {
    let mut s = Shape::of(obj);
    if s.rare || (s.ref_ && !is_root) {
        rare_rewrites(obj, is_root);
        s = Shape::of(obj);
    }
    if !s.type_ && s.properties {
        insert_first(obj, "type", json!("object"));
        s = Shape::of(obj);
    }
    if s.object_schema {
        if !s.props_object && (is_root || s.additional == Additional::False) {
            obj.insert("properties".into(), json!({}));
            s.props_object = true;
        }
        if s.props_object && s.additional == Additional::Absent {
            obj.insert("additionalProperties".into(), Value::Bool(false));
            s.additional = Additional::False;
        }
    }
    if !(s.props_object && s.additional == Additional::False) {
        return None;
    }
    let (listed, all) = listed_properties(obj, s.object_schema);
    if let Some(all) = all {
        let all = Value::Array(all);
        match obj.iter_mut().find(|(k, _)| *k == "required") {
            Some((_, r)) => *r = all,
            None => {
                obj.insert("required".into(), all);
            }
        }
    }
    Some(listed)
}

/// A disjoint `oneOf` becomes `anyOf`, `allOf` is merged when that keeps the meaning, and a
/// `$ref` with annotations is wrapped (not at the root).
fn rare_rewrites(obj: &mut Map<String, Value>, is_root: bool) {
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
}

/// For a closed node: whether its `required` lists each property, and (when `rewrite`) the
/// new `required`: every property, then the names required but not declared (they keep the
/// schema as (un)satisfiable as it was).
fn listed_properties(
    obj: &mut Map<String, Value>,
    rewrite: bool,
) -> (Vec<bool>, Option<Vec<Value>>) {
    let (mut props, mut required) = (None, None);
    for (k, v) in obj.iter_mut() {
        match k.as_str() {
            "properties" => props = v.as_object(),
            "required" => required = v.as_array_mut(),
            _ => {}
        }
    }
    let Some(props) = props else {
        return (Vec::new(), None);
    };
    let required = required.map_or(&mut [][..], Vec::as_mut_slice);
    // Usually `required` names declared properties in their order: one merged pass tells
    // which are listed and that nothing else is, and the new list takes over the old one's
    // strings. Otherwise a set (a scan per property would be quadratic) and a lookup per
    // required name.
    let mut keys = props.keys();
    let in_order = required
        .iter()
        .filter_map(Value::as_str)
        .all(|r| keys.any(|k| k == r));
    if !in_order {
        let required: Vec<&str> = required.iter().filter_map(Value::as_str).collect();
        let set = util::Names::new(required.iter().copied());
        let listed = props.keys().map(|k| set.contains(k)).collect();
        let all = rewrite.then(|| {
            let extra = required.iter().filter(|r| !props.contains_key(**r));
            props
                .keys()
                .map(|k| Value::String(k.clone()))
                .chain(extra.map(|r| Value::String((*r).to_string())))
                .collect()
        });
        return (listed, all);
    }
    let mut listed = Vec::with_capacity(props.len());
    let mut all = rewrite.then(|| Vec::with_capacity(props.len()));
    let mut next = required.iter_mut().filter(|r| r.is_string()).peekable();
    for k in props.keys() {
        let hit = next.next_if(|r| r.as_str() == Some(k.as_str()));
        listed.push(hit.is_some());
        if let Some(all) = &mut all {
            all.push(match hit {
                Some(r) => std::mem::take(r),
                None => Value::String(k.clone()),
            });
        }
    }
    (listed, all)
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
