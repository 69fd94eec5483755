//! Programmatic tool calling (class 30), the fail-closed part and the wire names: the model
//! writes code that a server-side runner executes, and the code calls client tools whose
//! `allowed_callers` let it. Each such call carries its caller (the runner's server call), the
//! runner's server call is an item of the answer, and on Anthropic the code runs in a
//! `container` the next request names; all three must come back on the next round.
//!
//! Sources (docs/wire-formats.md, "Programmatic tool calling"): Anthropic Messages declares a
//! `code_execution_20250825` / `code_execution_20260120` server tool beside client tools with
//! `allowed_callers: ["code_execution_…"]`; its answer has a `server_tool_use` block (the code),
//! `tool_use` blocks with `caller: {"type": "code_execution_…", "tool_id": "srvtoolu_…"}`, and a
//! `container`. OpenAI Responses declares `{"type": "programmatic_tool_calling"}` beside functions
//! with `allowed_callers: ["programmatic"]`; its answer has a `program` item and `function_call`
//! items with `caller: {"type": "program", "caller_id": …}`. Chat Completions, Gemini and the text
//! protocol have none of it: a request that asks for it is refused, never sent without it.

use serde_json::{Value, json};

use crate::model::{Caller, ChatRequest, EncodeError, Message, PROGRAMMATIC, Provider, Tool};

/// The code of every refusal here.
pub(crate) const NOT_SUPPORTED: &str = "PROGRAMMATIC_NOT_SUPPORTED";

/// The prefix of Anthropic's code-execution tool types (the runner, and the callers it names).
pub(crate) const ANTHROPIC_PREFIX: &str = "code_execution_";

/// Anthropic's fixed name of the code-execution server tool.
pub(crate) const ANTHROPIC_NAME: &str = "code_execution";

/// OpenAI Responses' runner type, and its caller type.
pub(crate) const RESPONSES_TYPE: &str = "programmatic_tool_calling";
pub(crate) const RESPONSES_CALLER: &str = "program";

/// Anthropic's beta header value for programmatic tool calling (and tool search's other tools).
pub(crate) const ANTHROPIC_BETA: &str = "advanced-tool-use-2025-11-20";

/// Whether `provider`'s wire has the runner `variant`.
pub(crate) fn has_variant(provider: Provider, variant: &str) -> bool {
    match provider {
        Provider::Anthropic => variant.starts_with(ANTHROPIC_PREFIX),
        Provider::OpenaiResponses => variant == RESPONSES_TYPE,
        Provider::OpenaiChat | Provider::Gemini | Provider::TextProtocol => false,
    }
}

/// The API a caller's wire type is of.
pub(crate) fn caller_owner(caller: &Caller) -> Option<Provider> {
    if caller.kind.starts_with(ANTHROPIC_PREFIX) {
        Some(Provider::Anthropic)
    } else if caller.kind == RESPONSES_CALLER {
        Some(Provider::OpenaiResponses)
    } else {
        None
    }
}

fn refusal(message: String) -> EncodeError {
    EncodeError::new(NOT_SUPPORTED, message)
}

/// The refusal of a runner `variant` that `provider` does not have.
pub(crate) fn refused(provider: Provider, variant: &str) -> EncodeError {
    let has = match provider {
        Provider::Anthropic => "code_execution_* as the runner",
        Provider::OpenaiResponses => "programmatic_tool_calling",
        Provider::OpenaiChat | Provider::Gemini | Provider::TextProtocol => {
            "no programmatic tool calling"
        }
    };
    refusal(format!(
        "{} cannot express the programmatic-calling runner {variant:?} (it has {has})",
        provider.slug()
    ))
}

/// Fails closed on what `provider` cannot express: a runner of another API, a tool only code
/// may call where there is no runner, and an earlier call made by another API's code (its
/// caller names a server call only that API's server knows).
pub(crate) fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    if let Some(variant) = req.programmatic()
        && !has_variant(provider, variant)
    {
        return Err(refused(provider, variant));
    }
    let programmable: Vec<&str> = (req.tools.iter())
        .filter(|t| t.programmable())
        .map(|t| t.name.as_str())
        .collect();
    if !programmable.is_empty() && req.programmatic().is_none() {
        return Err(refusal(format!(
            "tools callable from code ({}) with no programmatic-calling runner declared: declare one ({})",
            programmable.join(", "),
            match provider {
                Provider::Anthropic => "code_execution_20250825",
                Provider::OpenaiResponses => "programmatic_tool_calling",
                _ => "none exists on this target",
            }
        )));
    }
    let calls = (req.messages.iter()).flat_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
        _ => &[],
    });
    for c in calls {
        let Some(caller) = &c.caller else { continue };
        if caller_owner(caller) != Some(provider) {
            return Err(refusal(format!(
                "{} cannot take the call {} of `{}` made by {:?} code (`{}`): only the server that ran the code knows it",
                provider.slug(),
                c.id,
                c.name,
                caller.kind,
                caller.id
            )));
        }
    }
    Ok(())
}

/// A tool's `allowed_callers` as `provider` writes them (Anthropic names its runner's type),
/// `None` when the tool sets none.
pub(crate) fn wire_callers(provider: Provider, tool: &Tool, req: &ChatRequest) -> Option<Value> {
    if tool.allowed_callers.is_empty() {
        return None;
    }
    let runner = req.programmatic().unwrap_or_default();
    let callers: Vec<&str> = (tool.allowed_callers.iter())
        .map(|c| match (provider, c.as_str()) {
            (Provider::Anthropic, PROGRAMMATIC) => runner,
            (_, c) => c,
        })
        .collect();
    Some(json!(callers))
}

/// A wire `allowed_callers` list, neutral (any code-execution type is [`PROGRAMMATIC`]).
pub(crate) fn neutral_callers(wire: Option<&Value>) -> Vec<String> {
    (wire.and_then(Value::as_array).into_iter().flatten())
        .filter_map(Value::as_str)
        .map(|c| {
            if c.starts_with(ANTHROPIC_PREFIX) {
                PROGRAMMATIC.to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A call's wire `caller` (Anthropic `{type, tool_id}`, Responses `{type, caller_id}`) read;
/// a `direct` caller is none.
pub(crate) fn read_caller(caller: Option<&Value>) -> Option<Caller> {
    let c = caller?;
    let kind = c.get("type").and_then(Value::as_str)?;
    let id = (c.get("tool_id").or_else(|| c.get("caller_id"))).and_then(Value::as_str)?;
    Some(Caller {
        kind: kind.to_string(),
        id: id.to_string(),
    })
}

/// A caller as its own API writes it.
pub(crate) fn wire_caller(caller: &Caller) -> Value {
    match caller_owner(caller) {
        Some(Provider::OpenaiResponses) => json!({"type": caller.kind, "caller_id": caller.id}),
        _ => json!({"type": caller.kind, "tool_id": caller.id}),
    }
}

/// Whether an opaque item is a runner's server call: Anthropic's code-execution
/// `server_tool_use` block, Responses' `program` item.
pub(crate) fn is_runner_call(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("server_tool_use") => item.get("name").and_then(Value::as_str) == Some(ANTHROPIC_NAME),
        Some("program") => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
