//! Per-provider dispatch: checking a schema as a provider would receive it, and preparing every
//! tool for a provider under the case's strict policy (see the folder docs for the policy).

use serde_json::Value;

use super::check as rules;
use super::prepared::{
    Loss, PreparedTool, Strict, Violation, fallback_note, passthrough, strict_error,
};
use super::{anthropic, gemini, openai};
use crate::model::{EncodeError, Provider, StrictPolicy, Tool};

/// Checks `schema` as the parameters `provider` would receive: OpenAI strict rules and limits
/// (Chat and Responses), the Anthropic strict subset, the Gemini `parameters` subset. The text
/// protocol has no schema rules.
pub fn check(provider: Provider, schema: &Value) -> Vec<Violation> {
    match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses => rules::openai(schema),
        Provider::Anthropic => anthropic::check(schema),
        Provider::Gemini => gemini::check(schema),
        Provider::TextProtocol => Vec::new(),
    }
}

/// Prepares every tool for `provider` under `policy`. Notes explain choices a reviewer should
/// see (e.g. "tool x: sent strict=false: /properties/y: patternProperties is not supported").
pub(crate) fn prepare_tools(
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

/// The strict schema for OpenAI with what was dropped to get it, or every reason it cannot be
/// made (blockers found by the transform point into the neutral schema; limit violations into
/// the strict one).
pub fn openai_strict(neutral: &Value) -> Result<Strict, Vec<Violation>> {
    let t = openai::transform(neutral);
    if !t.blockers.is_empty() {
        return Err(t.blockers);
    }
    let violations = rules::openai(&t.schema);
    if violations.is_empty() {
        Ok(Strict {
            schema: t.schema,
            lost: t.lost,
        })
    } else {
        Err(violations)
    }
}

/// True when the strict rewrite (and so the nullable rewrite) applies to this tool's calls.
pub(super) fn openai_rewrote(provider: Provider, tool: &Tool, policy: StrictPolicy) -> bool {
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
        Ok(strict) => {
            if !strict.lost.is_empty() {
                notes.push(loss_note(&tool.name, &strict.lost));
            }
            Ok(PreparedTool {
                parameters: strict.schema,
                strict: Some(true),
                ..passthrough(tool, None)
            })
        }
        Err(reasons) if policy == StrictPolicy::Require => Err(strict_error(&tool.name, &reasons)),
        Err(reasons) => {
            notes.push(fallback_note(&tool.name, &reasons));
            Ok(passthrough(tool, Some(false)))
        }
    }
}

/// `tool NAME: sent strict after dropping: POINTER: KEYWORD dropped; …`.
fn loss_note(tool: &str, lost: &[Loss]) -> String {
    let what: Vec<String> = lost.iter().map(ToString::to_string).collect();
    format!(
        "tool {tool}: sent strict after dropping: {}",
        what.join("; ")
    )
}

/// A schema whose root is an object schema: a JSON object whose `type`, when present, is
/// `object` (any case).
fn is_object_root(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| match o.get("type") {
        None => true,
        Some(Value::String(t)) => t.eq_ignore_ascii_case("object"),
        Some(_) => false,
    })
}

/// What the encoder would send as `provider`'s parameters with strict required, with what was
/// dropped to get it, or every reason it cannot: OpenAI's strict transform, Anthropic's strict
/// subset, Gemini's `{"parameters": …}` or `{"parametersJsonSchema": …}` (`{}` for a tool
/// without parameters, so the choice shows), the text protocol's schema as it is.
pub fn strict_parameters(provider: Provider, schema: &Value) -> Result<Strict, Vec<Violation>> {
    match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses => openai_strict(schema),
        Provider::Anthropic => {
            let strict = anthropic::strictify(schema);
            let violations = anthropic::check(&strict);
            if violations.is_empty() {
                Ok(Strict::whole(strict))
            } else {
                Err(violations)
            }
        }
        Provider::Gemini if !is_object_root(schema) => Err(vec![Violation::root(
            "function parameters must be an object schema (type \"object\")",
        )]),
        Provider::Gemini if gemini::is_no_arg(schema) => Ok(Strict::whole(serde_json::json!({}))),
        Provider::Gemini => Ok(match gemini::sanitize(schema).and_then(gemini::keeps_all) {
            Ok(p) => Strict {
                schema: serde_json::json!({ "parameters": p.schema }),
                lost: p.lost,
            },
            Err(_) => Strict::whole(serde_json::json!({ "parametersJsonSchema": schema })),
        }),
        Provider::TextProtocol => Ok(Strict::whole(schema.clone())),
    }
}
