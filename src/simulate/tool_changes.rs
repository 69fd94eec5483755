//! Anthropic's mid-conversation tool changes as the simulated model reads them: a `system`
//! message's `tool_addition` / `tool_removal` blocks change the tools it may call from there on
//! (a `tool_reference` names a `tools` entry, usually one declared with `defer_loading: true`;
//! a `tool_definition` carries one by value). Without the beta header that enables them the
//! request is refused with a 400. The simulator's own reading: it shares no codec with
//! `providers/`.

use serde_json::Value;

use super::decide::FnTool;
use super::errors::Rejection;

/// The beta header value that enables `tool_addition` / `tool_removal`.
pub(crate) const CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";
/// The beta header value that enables a `tool_definition` carried inline.
pub(crate) const INLINE_BETA: &str = "inline-tools-2026-09-15";

/// Applies every tool change of `messages` in order: `tools` become the tools in force for the
/// turn the model answers; `deferred` holds the declared tools not in force (and keeps those
/// still not in force after the changes). `betas` is the
/// `anthropic-beta` header (comma-separated).
pub(crate) fn apply(
    messages: &[Value],
    tools: &mut Vec<FnTool>,
    deferred: &mut Vec<FnTool>,
    betas: Option<&str>,
) -> Result<(), Rejection> {
    let has_beta = |b: &str| betas.is_some_and(|v| v.split(',').any(|x| x.trim() == b));
    for (i, m) in messages.iter().enumerate() {
        if m.get("role").and_then(Value::as_str) != Some("system") {
            continue;
        }
        let blocks = m.get("content").and_then(Value::as_array);
        for (k, b) in blocks.into_iter().flatten().enumerate() {
            let ty = b.get("type").and_then(Value::as_str).unwrap_or_default();
            if ty != "tool_addition" && ty != "tool_removal" {
                continue;
            }
            let at = format!("messages.{i}.content.{k}");
            if !has_beta(CHANGES_BETA) {
                return Err(Rejection::bad_request(format!(
                    "{at}: `{ty}` blocks require the `anthropic-beta: {CHANGES_BETA}` header"
                )));
            }
            let tool = &b["tool"];
            match tool.get("type").and_then(Value::as_str) {
                Some("tool_definition") if ty == "tool_addition" => {
                    if !has_beta(INLINE_BETA) {
                        return Err(Rejection::bad_request(format!(
                            "{at}.tool: `tool_definition` requires the `anthropic-beta: {INLINE_BETA}` header"
                        )));
                    }
                    let def = &tool["definition"];
                    let name = def.get("name").and_then(Value::as_str).unwrap_or_default();
                    tools.retain(|t| t.name != name);
                    tools.push(FnTool {
                        name: name.to_string(),
                        schema: def.get("input_schema").cloned().unwrap_or(Value::Null),
                        strict: def.get("strict") == Some(&Value::Bool(true)),
                    });
                }
                Some("tool_reference") => {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                    let declared = |set: &[FnTool]| set.iter().position(|t| t.name == name);
                    match (ty, declared(tools), declared(deferred)) {
                        ("tool_addition", None, Some(d)) => tools.push(deferred.remove(d)),
                        ("tool_removal", Some(t), _) => deferred.push(tools.remove(t)),
                        (_, None, None) => {
                            return Err(Rejection::bad_request(format!(
                                "{at}.tool.name: Tool '{name}' not found in provided tools"
                            )));
                        }
                        _ => {}
                    }
                }
                // MCP references name a server's tools: the simulator serves none.
                _ => {}
            }
        }
    }
    Ok(())
}
