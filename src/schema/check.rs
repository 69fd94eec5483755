//! OpenAI strict-mode rules: the per-node checks (shared with the transform, which runs them on
//! each rewritten node) and the whole-schema checker with its limits.

use serde_json::{Map, Value};

use super::Violation;
use super::limits::Counter;
use super::util::{self, MAX_WALK_DEPTH, Ptr};

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

/// The keywords the rules read, found in one pass over a node's keys: a node has few keys, and
/// scanning them is much cheaper than hashing a dozen keyword lookups per node.
#[derive(Default)]
struct Keywords<'a> {
    type_: Option<&'a Value>,
    format: Option<&'a Value>,
    items: Option<&'a Value>,
    ref_: Option<&'a Value>,
    additional: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    /// `anyOf`, `enum` or `const` is present (with `type` and `$ref`: the node is typed).
    typed_otherwise: bool,
    /// Some key is not in [`KEYWORDS`].
    unsupported: bool,
}

impl<'a> Keywords<'a> {
    fn scan(obj: &'a Map<String, Value>) -> Keywords<'a> {
        let mut kw = Keywords::default();
        for (k, v) in obj {
            match k.as_str() {
                "type" => kw.type_ = Some(v),
                "format" => kw.format = Some(v),
                "items" => kw.items = Some(v),
                "$ref" => kw.ref_ = Some(v),
                "additionalProperties" => kw.additional = Some(v),
                "properties" => kw.properties = Some(v),
                "required" => kw.required = Some(v),
                "anyOf" | "enum" | "const" => kw.typed_otherwise = true,
                other => kw.unsupported |= !KEYWORDS.contains(&other),
            }
        }
        kw
    }

    fn types(&self) -> impl Iterator<Item = &'a str> {
        util::types(self.type_)
    }

    /// [`util::is_object_schema`] from the scanned keywords.
    fn is_object_schema(&self) -> bool {
        let mut ts = self.types().peekable();
        if ts.peek().is_none() {
            return self.properties.is_some();
        }
        ts.any(|t| t == "object")
    }
}

/// Checks one node against the strict rules that can be seen locally. `root` resolves refs.
pub fn node_rules(
    root: &Value,
    obj: &Map<String, Value>,
    ptr: &Ptr<'_>,
    is_root: bool,
    out: &mut Vec<Violation>,
) {
    let kw = Keywords::scan(obj);
    if is_root {
        root_rules(obj, out);
    }
    if kw.unsupported {
        for k in obj.keys() {
            if !KEYWORDS.contains(&k.as_str()) {
                out.push(Violation::at(
                    ptr,
                    "unsupported-keyword",
                    format!("{k} is not supported in strict mode"),
                ));
            }
        }
    }
    if let Some(f) = kw.format.and_then(Value::as_str)
        && !FORMATS.contains(&f)
    {
        out.push(Violation::at(
            ptr,
            "unsupported-format",
            format!("format '{f}' is not supported in strict mode"),
        ));
    }
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
    } else if kw.type_.is_none() && !kw.typed_otherwise {
        out.push(Violation::at(
            ptr,
            "missing-type",
            "schema must have a 'type' (or anyOf, enum, const, $ref)",
        ));
    }
    if kw.is_object_schema() || kw.additional.is_some() {
        object_rules(&kw, ptr, out);
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

fn object_rules(kw: &Keywords<'_>, ptr: &Ptr<'_>, out: &mut Vec<Violation>) {
    if kw.additional != Some(&Value::Bool(false)) {
        let why = match kw.additional {
            None if kw.properties.is_none() => "an object without properties is an open map",
            None => "'additionalProperties' is required to be supplied and to be false",
            Some(_) => "open map: 'additionalProperties' must be false",
        };
        out.push(Violation::at(ptr, "additional-properties-false", why));
    }
    let Some(props) = kw.properties.and_then(Value::as_object) else {
        return;
    };
    // A set, not the list: objects with thousands of properties would go quadratic.
    let required = super::util::Names::new(
        kw.required
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    if let Some(missing) = props.keys().find(|k| !required.contains(k.as_str())) {
        out.push(Violation::at(
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
    walker.visit(obj, &Ptr::Root, 1, 0);
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
    fn child(&mut self, v: &Value, ptr: &Ptr<'_>, level: usize, depth: usize) {
        match v {
            Value::Object(obj) => {
                let is_obj = util::is_object_schema(obj);
                self.visit(obj, ptr, level + usize::from(is_obj), depth);
            }
            _ => self.out.push(Violation::at(
                ptr,
                "missing-type",
                "boolean schemas are not supported in strict mode",
            )),
        }
    }

    fn visit(&mut self, obj: &Map<String, Value>, ptr: &Ptr<'_>, level: usize, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            self.out.push(Violation::at(
                ptr,
                "max-depth",
                "schema is nested too deeply to check",
            ));
            return;
        }
        node_rules(self.root, obj, ptr, depth == 0, self.out);
        self.counter.node(obj, ptr, level, self.out);
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            let base = Ptr::Key(ptr, "properties");
            for (k, v) in props {
                self.child(v, &Ptr::Key(&base, k), level, depth + 1);
            }
        }
        if let Some(items) = obj.get("items").filter(|i| i.is_object()) {
            self.child(items, &Ptr::Key(ptr, "items"), level, depth + 1);
        }
        if let Some(branches) = obj.get("anyOf").and_then(Value::as_array) {
            let base = Ptr::Key(ptr, "anyOf");
            for (i, b) in branches.iter().enumerate() {
                self.child(b, &Ptr::Index(&base, i), level, depth + 1);
            }
        }
    }
}
