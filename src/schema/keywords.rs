//! One pass over a schema node's keys for the OpenAI transform, checker and limits: a node has
//! few keys, and matching each once is much cheaper than a hashed lookup per keyword read.

use serde_json::{Map, Value};

use super::util;

/// The keywords the OpenAI transform, rules and limits read, each found by one pass over the
/// node's keys.
#[derive(Default)]
pub(super) struct Keywords<'a> {
    pub type_: Option<&'a Value>,
    pub format: Option<&'a Value>,
    pub items: Option<&'a Value>,
    pub ref_: Option<&'a Value>,
    pub additional: Option<&'a Value>,
    pub properties: Option<&'a Value>,
    pub required: Option<&'a Value>,
    pub any_of: Option<&'a Value>,
    pub enum_: Option<&'a Value>,
    pub const_: Option<&'a Value>,
    pub defs: Option<&'a Value>,
    pub definitions: Option<&'a Value>,
    /// The node describes objects ([`util::is_object_schema`]).
    pub object: bool,
    /// Some key is not one strict mode supports (see [`supported`]).
    pub unsupported: bool,
}

impl<'a> Keywords<'a> {
    #[inline]
    pub(super) fn scan(obj: &'a Map<String, Value>) -> Keywords<'a> {
        let mut kw = Keywords::default();
        for (k, v) in obj {
            let slot = match k.as_str() {
                "type" => &mut kw.type_,
                "format" => &mut kw.format,
                "items" => &mut kw.items,
                "$ref" => &mut kw.ref_,
                "additionalProperties" => &mut kw.additional,
                "properties" => &mut kw.properties,
                "required" => &mut kw.required,
                "anyOf" => &mut kw.any_of,
                "enum" => &mut kw.enum_,
                "const" => &mut kw.const_,
                "$defs" => &mut kw.defs,
                "definitions" => &mut kw.definitions,
                other => {
                    kw.unsupported |= !supported(other);
                    continue;
                }
            };
            *slot = Some(v);
        }
        kw.object = util::describes_objects(kw.type_, kw.properties.is_some());
        kw
    }

    /// `anyOf`, `enum` or `const` is present (with `type` and `$ref`: the node is typed).
    pub(super) fn typed_otherwise(&self) -> bool {
        self.any_of.is_some() || self.enum_.is_some() || self.const_.is_some()
    }

    pub(super) fn types(&self) -> impl Iterator<Item = &'a str> {
        util::types(self.type_)
    }

    /// The node has keywords that hold subschemas (`properties`, `items`, `anyOf`, `$defs`,
    /// `definitions`).
    pub(super) fn has_subschemas(&self) -> bool {
        self.properties.is_some()
            || self.items.is_some()
            || self.any_of.is_some()
            || self.defs.is_some()
            || self.definitions.is_some()
    }
}

/// Keywords OpenAI strict mode accepts on a schema node: the Structured Outputs "Supported
/// schemas" list (types, `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
/// `enum`, `const`, `$ref`/`$defs`/`definitions`; `pattern`, `format`; `multipleOf`, `maximum`,
/// `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; `minItems`, `maxItems`) plus `title` and
/// `description`. Anything else is reported as `unsupported-keyword`: `default`, `examples`,
/// `$schema` and the other annotations are not on the list (`default` is answered "'default' is
/// not permitted" by Azure and by api.openai.com in 2024), so the transform drops them and
/// reports the loss (see `local::drop_refused`).
pub(super) fn supported(k: &str) -> bool {
    matches!(
        k,
        "type"
            | "properties"
            | "required"
            | "additionalProperties"
            | "items"
            | "anyOf"
            | "enum"
            | "const"
            | "$ref"
            | "$defs"
            | "definitions"
            | "pattern"
            | "format"
            | "multipleOf"
            | "maximum"
            | "exclusiveMaximum"
            | "minimum"
            | "exclusiveMinimum"
            | "minItems"
            | "maxItems"
            | "title"
            | "description"
    )
}
