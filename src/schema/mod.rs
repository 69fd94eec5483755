//! Tool parameter schemas per provider: strict transform, checker, limits and sanitizers (stub:
//! passes schemas through until the strict-schema issue lands).

use serde_json::Value;

use crate::model::{ChatRequest, Outcome, StrictPolicy, Tool};
use crate::providers::{EncodeError, Provider};

/// A tool as an encoder should send it to one provider.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedTool {
    pub name: String,
    pub description: Option<String>,
    /// The schema to send (transformed for the provider's dialect).
    pub parameters: Value,
    /// The `strict` value to send; `None` means omit the field.
    pub strict: Option<bool>,
    /// Gemini only: send as `parametersJsonSchema` (full JSON Schema) instead of `parameters`.
    pub gemini_json_schema: bool,
}

/// Prepares every tool for `provider` under `policy`. Notes explain choices a reviewer should
/// see (e.g. "tool x: sent strict=false: /properties/y: patternProperties is not supported").
pub fn prepare_tools(
    provider: Provider,
    tools: &[Tool],
    policy: StrictPolicy,
) -> Result<(Vec<PreparedTool>, Vec<String>), EncodeError> {
    let _ = (provider, policy);
    let prepared = tools
        .iter()
        .map(|t| PreparedTool {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
            strict: t.strict,
            gemini_json_schema: false,
        })
        .collect();
    Ok((prepared, Vec::new()))
}

/// Undoes, on decoded calls, what the strict rewrite changed: a `null` for a property that was
/// optional in the neutral schema is reported as absent.
pub fn restore_optional(provider: Provider, req: &ChatRequest, outcome: &mut Outcome) {
    let _ = (provider, req, outcome);
}

/// What the real provider would answer with a 400 for this request body as sent (wire JSON):
/// the error message, or `None` when it would accept the tools. The simulator uses it so that
/// invalid-by-design trials get the provider's documented rejection.
pub fn wire_rejection(provider: Provider, body: &Value) -> Option<String> {
    let _ = (provider, body);
    None
}
