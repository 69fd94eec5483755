//! Shared schema helpers: JSON pointers, local `$ref` resolution, null acceptance, recursion
//! detection and the "provably disjoint `oneOf`" test used by every dialect.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use serde_json::{Map, Value};

use crate::fnv::Fnv;

/// How deep any walker goes into a schema before giving up (guards the stack on user data;
/// far above every provider's own nesting limit).
pub(super) const MAX_WALK_DEPTH: usize = 128;

/// Annotation keywords: they never change which instances a schema accepts. `title` and
/// `description` come first: OpenAI strict mode accepts those two only (`local::drop_refused`).
pub(super) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

pub(crate) use crate::pointer::Ptr;

pub(crate) use crate::pointer::{push, tokens};

/// The names a `required` keyword lists (`required`: its value, when the node has one); what is
/// not a string is no name.
pub(super) fn required_names(required: Option<&Value>) -> impl Iterator<Item = &str> {
    required
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// True when `r` is a reference we can resolve inside the document (`#` or `#/…`).
pub(super) fn is_local_ref(r: &str) -> bool {
    r == "#" || r.starts_with("#/")
}

/// Resolves a local `$ref` against `root`; `None` for external or dangling references.
pub(super) fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    if !is_local_ref(r) {
        return None;
    }
    let ptr = &r[1..];
    // `pointer` does the RFC 6901 unescaping; percent-encoding in fragments is not used by
    // schema generators we know of, so it is not decoded.
    root.pointer(ptr)
}

/// Follows a chain of pure-or-not `$ref`s from `node` (at most `MAX_WALK_DEPTH` hops) to the
/// first node without `$ref`. `None` when a hop cannot be resolved or the chain cycles.
pub(super) fn deref<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let mut cur = node;
    for _ in 0..MAX_WALK_DEPTH {
        match cur.get("$ref").and_then(Value::as_str) {
            Some(r) => cur = resolve(root, r)?,
            None => return Some(cur),
        }
    }
    None
}

/// Whether `null` is valid against `schema` as far as its top-level keywords say (type, enum,
/// const, anyOf/oneOf branches, local `$ref`). Conservative: unknown shapes answer false,
/// except the empty schema which accepts everything.
///
/// The answer is "some null-accepting leaf is reachable through refs and branches" (there is
/// no "and" among these keywords), so each `$ref` target is followed at most once per
/// question: a target met again is either still being followed (a cycle: it can only lead
/// back to the same subtree) or was explored without success, and the search stops at the
/// first success. Linear in the branches and refs reachable from `schema`; following every
/// self-reference down to the depth limit instead doubled the work per level for a target
/// that references itself twice.
pub(super) fn accepts_null(root: &Value, schema: &Value) -> bool {
    NullSearch {
        root,
        followed: HashSet::default(),
    }
    .at(schema, 0)
}

struct NullSearch<'a> {
    root: &'a Value,
    /// `$ref` targets already followed for this question, by address (no allocation until a
    /// ref is met; most properties have none).
    followed: HashSet<*const Value, BuildHasherDefault<Fnv>>,
}

impl<'a> NullSearch<'a> {
    fn at(&mut self, schema: &'a Value, depth: usize) -> bool {
        steps::tick();
        if depth > MAX_WALK_DEPTH {
            return false;
        }
        let Some(obj) = schema.as_object() else {
            return schema.as_bool() == Some(true);
        };
        // One pass over the keys: this runs on every optional property.
        let (mut ref_, mut const_, mut enum_, mut any_of, mut one_of, mut type_) =
            (None, None, None, None, None, None);
        for (k, v) in obj {
            let slot = match k.as_str() {
                "$ref" => &mut ref_,
                "const" => &mut const_,
                "enum" => &mut enum_,
                "anyOf" => &mut any_of,
                "oneOf" => &mut one_of,
                "type" => &mut type_,
                _ => continue,
            };
            *slot = Some(v);
        }
        if let Some(r) = ref_.and_then(Value::as_str) {
            let root = self.root;
            return resolve(root, r).is_some_and(|t| {
                self.followed.insert(std::ptr::from_ref(t)) && self.at(t, depth + 1)
            });
        }
        if let Some(c) = const_ {
            return c.is_null();
        }
        if let Some(e) = enum_.and_then(Value::as_array)
            && !e.iter().any(Value::is_null)
        {
            return false;
        }
        let branches = [any_of, one_of].into_iter().find_map(|b| b?.as_array());
        if let Some(branches) = branches {
            return branches.iter().any(|b| self.at(b, depth + 1));
        }
        match type_ {
            Some(Value::String(t)) => t == "null",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
            Some(_) => false,
            None => enum_.is_some() || obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        }
    }
}

#[cfg(not(test))]
pub(super) mod steps {
    #[inline(always)]
    pub(crate) fn tick() {}
}

/// The names a `type` keyword lists (a single string or an array of strings), given the
/// keyword's value; an iterator, not a list, because walkers call this on every node.
pub(super) fn types(type_: Option<&Value>) -> impl Iterator<Item = &str> {
    let (one, many) = match type_ {
        Some(Value::String(t)) => (Some(t.as_str()), &[][..]),
        Some(Value::Array(ts)) => (None, ts.as_slice()),
        _ => (None, &[][..]),
    };
    one.into_iter().chain(many.iter().filter_map(Value::as_str))
}

/// True for a node that describes objects: `type` names `object`, or no type but `properties`.
pub(super) fn is_object_schema(obj: &Map<String, Value>) -> bool {
    describes_objects(obj.get("type"), obj.contains_key("properties"))
}

/// [`is_object_schema`] from a node's `type` value and whether it has `properties`, for walkers
/// that found them in their own pass over the keys. (Same answer as going through [`types`],
/// without building the list: it runs on every node.)
pub(super) fn describes_objects(type_: Option<&Value>, has_properties: bool) -> bool {
    match type_ {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) if ts.iter().any(Value::is_string) => {
            ts.iter().any(|t| t == "object")
        }
        _ => has_properties,
    }
}

/// Names of the `$defs`/`definitions` entries that can reach themselves through local refs.
/// Linear in the schema size: one DFS over the graph "definition → definitions it references".
pub(super) fn recursive_defs(root: &Value) -> Vec<String> {
    let mut defs: Vec<(String, Vec<String>)> = Vec::new();
    for section in ["$defs", "definitions"] {
        if let Some(map) = root.get(section).and_then(Value::as_object) {
            for (name, body) in map {
                let mut refs = Vec::new();
                collect_refs(body, &mut refs, 0);
                defs.push((format!("#/{section}/{name}"), refs));
            }
        }
    }
    let mut root_refs = Vec::new();
    if let Some(obj) = root.as_object() {
        for (k, v) in obj {
            if k != "$defs" && k != "definitions" {
                collect_refs(v, &mut root_refs, 0);
            }
        }
    }
    // Node 0 is the root document (`#`), nodes 1.. are definitions.
    let mut names = vec!["#".to_string()];
    names.extend(defs.iter().map(|(n, _)| n.clone()));
    let edges: Vec<Vec<usize>> = std::iter::once(&root_refs)
        .chain(defs.iter().map(|(_, r)| r))
        .map(|refs| {
            refs.iter()
                .filter_map(|r| target_index(&names, r))
                .collect()
        })
        .collect();
    // A node is recursive when it lies on a cycle: strongly connected components find all
    // of them in linear time (a DFS per node would be quadratic).
    let sccs = kosaraju(&edges);
    let mut out = Vec::new();
    for comp in sccs {
        let cyclic = comp.len() > 1 || comp.iter().any(|&n| edges[n].contains(&n));
        if cyclic {
            out.extend(comp.into_iter().map(|n| names[n].clone()));
        }
    }
    out
}

/// Maps a `$ref` to the index of the definition (or root) it points into: `#/$defs/A/properties/x`
/// points into `#/$defs/A`.
fn target_index(names: &[String], r: &str) -> Option<usize> {
    if r == "#" {
        return Some(0);
    }
    let toks = tokens(r.strip_prefix('#')?);
    if toks.len() >= 2 && (toks[0] == "$defs" || toks[0] == "definitions") {
        let name = format!("#/{}/{}", toks[0], toks[1]);
        return names.iter().position(|n| *n == name);
    }
    // Any other local pointer lands somewhere in the root document.
    is_local_ref(r).then_some(0)
}

/// Every `$ref` string under `v` (keyword positions and data alike: over-approximating keeps
/// the recursion check conservative).
pub(super) fn collect_refs(v: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > MAX_WALK_DEPTH {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(s) = x.as_str() {
                        out.push(s.to_string());
                    }
                } else {
                    collect_refs(x, out, depth + 1);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out, depth + 1)),
        _ => {}
    }
}

/// Strongly connected components of a small directed graph (iterative Kosaraju).
fn kosaraju(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for s in 0..n {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        let mut stack = vec![(s, 0usize)];
        while let Some((v, i)) = stack.pop() {
            if let Some(&w) = edges[v].get(i) {
                stack.push((v, i + 1));
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, 0));
                }
            } else {
                order.push(v);
            }
        }
    }
    let mut rev = vec![Vec::new(); n];
    for (v, ws) in edges.iter().enumerate() {
        for &w in ws {
            rev[w].push(v);
        }
    }
    let mut comp_of = vec![usize::MAX; n];
    let mut comps = Vec::new();
    for &s in order.iter().rev() {
        if comp_of[s] != usize::MAX {
            continue;
        }
        let id = comps.len();
        let mut comp = vec![s];
        comp_of[s] = id;
        let mut stack = vec![s];
        while let Some(v) = stack.pop() {
            for &w in &rev[v] {
                if comp_of[w] == usize::MAX {
                    comp_of[w] = id;
                    comp.push(w);
                    stack.push(w);
                }
            }
        }
        comps.push(comp);
    }
    comps
}

/// A `oneOf` can become `anyOf` without changing meaning only when no instance can match two
/// branches. Proven here for two shapes: every branch has one distinct primitive `type` (and
/// not both `integer` and `number`), or every branch is an object requiring a common
/// property whose `const` (or one-value `enum`) differs per branch (a tagged union).
pub(super) fn one_of_is_disjoint(branches: &[Value]) -> bool {
    if branches.len() < 2 {
        return true;
    }
    distinct_types(branches) || tagged_union(branches)
}

fn distinct_types(branches: &[Value]) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    for b in branches {
        let Some(Value::String(t)) = b.get("type") else {
            return false;
        };
        if seen.contains(&t.as_str()) {
            return false;
        }
        seen.push(t);
    }
    !(seen.contains(&"integer") && seen.contains(&"number"))
}

fn tagged_union(branches: &[Value]) -> bool {
    let Some(first) = branches[0].get("properties").and_then(Value::as_object) else {
        return false;
    };
    'tag: for tag in first.keys() {
        let mut values: Vec<&Value> = Vec::new();
        for b in branches {
            let required = required_names(b.get("required")).any(|x| x == tag);
            let lit = b.pointer(&push("/properties", tag)).and_then(literal);
            match lit {
                Some(v) if required && !values.contains(&v) => values.push(v),
                _ => continue 'tag,
            }
        }
        return true;
    }
    false
}

fn literal(s: &Value) -> Option<&Value> {
    if let Some(c) = s.get("const") {
        return Some(c);
    }
    match s.get("enum").and_then(Value::as_array) {
        Some(e) if e.len() == 1 => e.first(),
        _ => None,
    }
}

/// A set of property names: a linear scan for the usual handful, an FNV-hashed set for objects
/// with many required properties (SipHash dominated the transform's profile; a linear scan over
/// thousands would be quadratic).
pub(crate) enum Names<'a> {
    Few(Vec<&'a str>),
    Many(HashSet<&'a str, BuildHasherDefault<Fnv>>),
}

impl<'a> Names<'a> {
    const FEW: usize = 16;

    pub(crate) fn new(names: impl Iterator<Item = &'a str>) -> Names<'a> {
        let v: Vec<&str> = names.collect();
        if v.len() <= Self::FEW {
            Names::Few(v)
        } else {
            Names::Many(v.into_iter().collect())
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        match self {
            Names::Few(v) => v.contains(&name),
            Names::Many(s) => s.contains(name),
        }
    }
}

/// Steps taken by the walks that follow `$ref`s (null acceptance, the Gemini inliner, the
/// reverse mapping), counted per thread in tests only: the tests bound them, so a walk that
/// turns exponential again fails instead of merely being slow.
#[cfg(test)]
pub(super) mod steps {
    use std::cell::Cell;

    thread_local! {
        static STEPS: Cell<usize> = const { Cell::new(0) };
    }

    pub(crate) fn tick() {
        STEPS.with(|s| s.set(s.get() + 1));
    }

    /// The steps counted on this thread since the last call.
    pub(crate) fn take() -> usize {
        STEPS.with(|s| s.replace(0))
    }
}
