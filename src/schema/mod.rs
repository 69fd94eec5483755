//! Tool parameter schemas per provider: the OpenAI strict transform, the checker with its
//! limits, the Anthropic strict subset and budgets, the Gemini sanitizer, the reverse mapping
//! of the nullable rewrite on decoded calls, and the provider's own 400 for invalid tools.
//!
//! Policy (per tool, [`prepare_tools`]):
//! * OpenAI Responses attempts strict for every tool unless the policy is `Off` or the tool
//!   says `strict: false`; Chat Completions only when the tool says `strict: true` or the
//!   policy is `Require`. `Off` still honours a tool's own `strict: true` (as the model's
//!   doc says) and then behaves like `Auto` for that tool.
//! * A schema that cannot be strict without changing what it accepts is never rewritten
//!   lossily: `Auto`/`Off` send the original with `strict: false` plus a note; `Require`
//!   fails with `STRICT_SCHEMA`.
//! * Anthropic strict is only attempted on `strict: true` tools or under `Require`; no
//!   nullable rewrite there (optional properties are allowed and unions are budgeted).
//! * Gemini has no strict flag: `parameters` when a meaning-preserving sanitize fits the
//!   OpenAPI subset, else `parametersJsonSchema`; no-arg tools omit parameters
//!   ([`PreparedTool::parameters`] is `Value::Null`).
//!
//! Notes and errors show the root pointer as `(root)`.

mod anthropic;
mod check;
mod cli;
mod gemini;
mod keywords;
mod limits;
mod local;
mod openai;
mod restore;
mod util;
mod wire;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::Value;

use crate::model::{StrictPolicy, Tool};
use crate::providers::{EncodeError, Provider};

pub use cli::{cli_check, cli_strict};
pub use openai::{Transformed, make_nullable, transform as openai_transform};
pub use restore::{restore_optional, restore_optional_with};
pub use wire::wire_rejection;

/// A tool as an encoder should send it to one provider.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedTool {
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

    /// A violation at a lazily built pointer (rendered now, as it is reported).
    pub fn at(ptr: &util::Ptr<'_>, rule: &'static str, message: impl Into<String>) -> Violation {
        Violation {
            pointer: ptr.render(),
            rule,
            message: message.into(),
        }
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

/// Checks `schema` as the parameters `provider` would receive: OpenAI strict rules and limits
/// (Chat and Responses), the Anthropic strict subset, the Gemini `parameters` subset. The text
/// protocol has no schema rules.
pub fn check(provider: Provider, schema: &Value) -> Vec<Violation> {
    match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses => check::openai(schema),
        Provider::Anthropic => anthropic::check(schema),
        Provider::Gemini => gemini::check(schema),
        Provider::TextProtocol => Vec::new(),
    }
}

/// Prepares every tool for `provider` under `policy`. Notes explain choices a reviewer should
/// see (e.g. "tool x: sent strict=false: /properties/y: patternProperties is not supported").
pub fn prepare_tools(
    provider: Provider,
    tools: &[Tool],
    policy: StrictPolicy,
) -> Result<(Vec<PreparedTool>, Vec<String>), EncodeError> {
    match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses => {
            let mut notes = Vec::new();
            let mut out = Vec::with_capacity(tools.len());
            for t in tools {
                out.push(prepare_openai(provider, t, policy, &mut notes)?);
            }
            Ok((out, notes))
        }
        Provider::Anthropic => anthropic::prepare(tools, policy),
        Provider::Gemini => Ok(gemini::prepare(tools)),
        Provider::TextProtocol => Ok((
            tools.iter().map(|t| passthrough(t, t.strict)).collect(),
            Vec::new(),
        )),
    }
}

/// Whether the OpenAI strict transform is attempted for this tool (see the module docs).
fn openai_attempts(provider: Provider, tool: &Tool, policy: StrictPolicy) -> bool {
    match policy {
        StrictPolicy::Require => true,
        StrictPolicy::Off => tool.strict == Some(true),
        StrictPolicy::Auto if provider == Provider::OpenaiResponses => tool.strict != Some(false),
        StrictPolicy::Auto => tool.strict == Some(true),
    }
}

/// The strict schema for OpenAI, or every reason it cannot be made (blockers found by the
/// transform point into the neutral schema; limit violations into the strict one).
pub fn openai_strict(neutral: &Value) -> Result<Value, Vec<Violation>> {
    let t = openai::transform(neutral);
    if !t.blockers.is_empty() {
        return Err(t.blockers);
    }
    let violations = check::openai(&t.schema);
    if violations.is_empty() {
        Ok(t.schema)
    } else {
        Err(violations)
    }
}

/// True when the strict rewrite (and so the nullable rewrite) applies to this tool's calls.
pub(crate) fn openai_rewrote(provider: Provider, tool: &Tool, policy: StrictPolicy) -> bool {
    matches!(provider, Provider::OpenaiChat | Provider::OpenaiResponses)
        && openai_attempts(provider, tool, policy)
        && openai_strict(&tool.parameters).is_ok()
}

fn prepare_openai(
    provider: Provider,
    tool: &Tool,
    policy: StrictPolicy,
    notes: &mut Vec<String>,
) -> Result<PreparedTool, EncodeError> {
    // Responses normalizes an omitted `strict` itself: say `false` whenever we did not go strict.
    let not_strict = if provider == Provider::OpenaiResponses {
        Some(false)
    } else {
        tool.strict
    };
    if !openai_attempts(provider, tool, policy) {
        return Ok(passthrough(tool, not_strict));
    }
    match openai_strict(&tool.parameters) {
        Ok(schema) => Ok(PreparedTool {
            parameters: schema,
            strict: Some(true),
            ..passthrough(tool, None)
        }),
        Err(reasons) if policy == StrictPolicy::Require => Err(strict_error(&tool.name, &reasons)),
        Err(reasons) => {
            notes.push(fallback_note(&tool.name, &reasons));
            Ok(passthrough(tool, Some(false)))
        }
    }
}

fn passthrough(tool: &Tool, strict: Option<bool>) -> PreparedTool {
    PreparedTool {
        name: tool.name.clone(),
        description: tool.description.clone(),
        parameters: tool.parameters.clone(),
        strict,
        gemini_json_schema: false,
    }
}

/// `tool NAME: sent strict=false: POINTER: message; POINTER: message`.
fn fallback_note(tool: &str, reasons: &[Violation]) -> String {
    let why: Vec<String> = reasons
        .iter()
        .map(|v| format!("{}: {}", v.shown_pointer(), v.message))
        .collect();
    format!("tool {tool}: sent strict=false: {}", why.join("; "))
}

/// `STRICT_SCHEMA`: `tool NAME cannot be sent strict: POINTER: RULE: message; …`.
fn strict_error(tool: &str, reasons: &[Violation]) -> EncodeError {
    let why: Vec<String> = reasons.iter().map(ToString::to_string).collect();
    EncodeError::new(
        "STRICT_SCHEMA",
        format!("tool {tool} cannot be sent strict: {}", why.join("; ")),
    )
}
