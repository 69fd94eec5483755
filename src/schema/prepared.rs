//! What the schema layer hands encoders and reports: a tool prepared for one provider, one broken
//! rule (`Violation`), and the shared helpers that build them (pass-through, notes, errors).

use std::fmt;

use serde_json::{Map, Value};

use super::util::Ptr;
use crate::model::{EncodeError, Tool};

/// A tool as an encoder should send it to one provider.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PreparedTool {
    pub name: String,
    pub description: Option<String>,
    /// The schema to send (transformed for the provider's dialect). `Value::Null` means "omit
    /// the parameters field" (Gemini tools without parameters).
    pub parameters: Value,
    /// The `strict` value to send; `None` means omit the field.
    pub strict: Option<bool>,
    /// Gemini only: send as `parametersJsonSchema` (full JSON Schema) instead of `parameters`.
    pub gemini_json_schema: bool,
}

impl PreparedTool {
    /// How every API's declaration of the tool begins: its `name`, and its `description` when
    /// it has one.
    pub(crate) fn declaration(&self) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("name".into(), Value::String(self.name.clone()));
        if let Some(d) = &self.description {
            o.insert("description".into(), Value::String(d.clone()));
        }
        o
    }
}

/// One broken rule at one place of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the schema checked (`""` is the root).
    pub pointer: String,
    /// Stable kebab-case rule id, e.g. `additional-properties-false`, `max-depth`.
    pub rule: &'static str,
    pub message: String,
}

impl Violation {
    pub fn new(pointer: &str, rule: &'static str, message: impl Into<String>) -> Violation {
        Violation {
            pointer: pointer.to_string(),
            rule,
            message: message.into(),
        }
    }

    /// The `root-object` violation: the root schema is not the object a tool's parameters
    /// must be (`message` says how).
    pub(crate) fn root(message: impl Into<String>) -> Violation {
        Violation::new("", "root-object", message)
    }

    /// The checkers' `max-depth` violation at `pointer`: the schema is nested deeper than they
    /// walk.
    pub(crate) fn too_deep(pointer: &str) -> Violation {
        Violation::new(pointer, "max-depth", "schema is nested too deeply to check")
    }

    /// A violation at a lazily built pointer (rendered now, as it is reported).
    pub fn at(ptr: &Ptr<'_>, rule: &'static str, message: impl Into<String>) -> Violation {
        Violation {
            pointer: ptr.render(),
            rule,
            message: message.into(),
        }
    }

    /// A whole schema's `count` of something over its `limit`: rule `rule` at the root, the
    /// message `message(count)`; nothing within the limit.
    pub(crate) fn total_over(
        count: usize,
        limit: usize,
        rule: &'static str,
        message: impl FnOnce(usize) -> String,
    ) -> Option<Violation> {
        (count > limit).then(|| Violation::new("", rule, message(count)))
    }

    /// A `format` keyword that is not `supported`: rule `unsupported-format` at `pointer()`
    /// (built only then), the message "format 'F' is not supported" and `why`; nothing otherwise.
    pub(crate) fn unsupported_format(
        format: Option<&Value>,
        supported: impl FnOnce(&str) -> bool,
        pointer: impl FnOnce() -> String,
        why: &str,
    ) -> Option<Violation> {
        let f = format?.as_str()?;
        (!supported(f)).then(|| Violation {
            pointer: pointer(),
            rule: "unsupported-format",
            message: format!("format '{f}' is not supported {why}"),
        })
    }

    /// The pointer as shown to people: `(root)` for the empty pointer.
    pub fn shown_pointer(&self) -> &str {
        if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        }
    }
}

impl fmt::Display for Violation {
    /// `POINTER: RULE: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.shown_pointer(),
            self.rule,
            self.message
        )
    }
}

/// Something a transform dropped to make a schema acceptable to a provider: an annotation the
/// dialect refuses (`default`, `examples`, an unsupported `format`, …). What the schema accepts
/// is kept; what the model is told may not be, so every loss is reported, never silent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    /// JSON pointer into the schema as given (`""` is the root).
    pub pointer: String,
    /// The keyword dropped (`default`, `format`, …).
    pub keyword: &'static str,
    /// Its value was written into the node's `description` instead (`(default: 5)`).
    pub described: bool,
}

impl fmt::Display for Loss {
    /// `POINTER: KEYWORD dropped` and, when it was, `(moved into the description)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {} dropped", self.keyword)?;
        if self.described {
            f.write_str(" (moved into the description)")?;
        }
        Ok(())
    }
}

/// A schema a provider accepts with strict required, and what was lost to get it.
#[derive(Clone, Debug, PartialEq)]
pub struct Strict {
    pub schema: Value,
    pub lost: Vec<Loss>,
}

impl Strict {
    /// A schema sent as it is (nothing lost).
    pub(crate) fn whole(schema: Value) -> Strict {
        Strict {
            schema,
            lost: Vec::new(),
        }
    }
}

pub(super) fn passthrough(tool: &Tool, strict: Option<bool>) -> PreparedTool {
    PreparedTool {
        name: tool.name.clone(),
        description: tool.description.clone(),
        parameters: tool.parameters.clone(),
        strict,
        gemini_json_schema: false,
    }
}

/// `tool NAME: sent strict=false: POINTER: message; POINTER: message`.
pub(super) fn fallback_note(tool: &str, reasons: &[Violation]) -> String {
    let why: Vec<String> = reasons
        .iter()
        .map(|v| format!("{}: {}", v.shown_pointer(), v.message))
        .collect();
    format!("tool {tool}: sent strict=false: {}", why.join("; "))
}

/// `STRICT_SCHEMA`: `tool NAME cannot be sent strict: POINTER: RULE: message; …`.
pub(super) fn strict_error(tool: &str, reasons: &[Violation]) -> EncodeError {
    let why: Vec<String> = reasons.iter().map(ToString::to_string).collect();
    EncodeError::new(
        "STRICT_SCHEMA",
        format!("tool {tool} cannot be sent strict: {}", why.join("; ")),
    )
}
