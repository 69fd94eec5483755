//! Anthropic's mid-conversation tool changes (beta `mid-conversation-tool-changes-2026-07-01`,
//! inline definitions `inline-tools-2026-09-15`) folded into the tools in force: the neutral
//! request's `tools` are the tools the model may call in the turn it answers.
//!
//! A `system` message's `tool_addition` puts a tool in force: a `tool_reference` names a `tools`
//! entry declared with `defer_loading: true` (or one in force already), a `tool_definition`
//! carries a `tools` entry by value. A `tool_removal`'s `tool_reference` takes a tool out of
//! force. Changes apply in conversation order. What cannot be folded (MCP references, a
//! reference to no declared tool, a definition of a server tool) stays a not-carried extra, so
//! `DecodedRequest::uncarried_tools` names it and `tooltape proxy` refuses it: a removed tool is
//! never silently kept and an added one never silently dropped. Without a tool-search tool in
//! the request, a deferred tool no change adds is not in force (its `defer_loading` is a wire
//! extra); beside one it is a declared tool marked deferred (`Tool::defer_loading`, read by
//! `request::tools_of`), which a search loads. Also the reading of one client tool,
//! shared by the `tools` array and inline definitions.

use serde_json::Value;

use crate::model::{DecodeError, Tool};
use crate::pointer::push;
use crate::providers::decoded::{Extra, ExtraKind, Fields, wire};

/// Folds the tool changes among `extras` (not-carried blocks of `system` messages, in body
/// order) into `tools`; each folded change becomes a wire extra.
pub(super) fn fold(
    tools: &mut Vec<Tool>,
    extras: &mut [Extra],
    mut deferred: Vec<Tool>,
) -> Result<(), DecodeError> {
    for e in extras.iter_mut() {
        let ty = e.value.get("type").and_then(Value::as_str);
        if e.kind != ExtraKind::NotCarried
            || !e.pointer.starts_with("/messages/")
            || !matches!(ty, Some("tool_addition" | "tool_removal"))
        {
            continue;
        }
        let adds = ty == Some("tool_addition");
        let tool = &e.value["tool"];
        let folded = match tool.get("type").and_then(Value::as_str) {
            Some("tool_reference") => {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                reference(tools, &mut deferred, name, adds)
            }
            Some("tool_definition") if adds => {
                let ptr = push(&push(&e.pointer, "tool"), "definition");
                let def = &tool["definition"];
                let mut f = Fields::of(def, &ptr, "a tool definition")?;
                match f.str("type")? {
                    None | Some("custom") => {
                        // A definition's own extras (cache_control, …) describe the change.
                        let (t, _) = client_tool(f, &mut Vec::new())?;
                        tools.retain(|k| k.name != t.name);
                        tools.push(t);
                        true
                    }
                    Some(_) => false,
                }
            }
            _ => false,
        };
        if folded {
            e.kind = ExtraKind::Wire;
        }
    }
    Ok(())
}

/// A change by `tool_reference`: an addition puts a deferred tool in force (one in force
/// already stays); a removal takes one out of force. `false`: the name is no declared tool.
fn reference(tools: &mut Vec<Tool>, deferred: &mut Vec<Tool>, name: &str, adds: bool) -> bool {
    let in_force = tools.iter().position(|t| t.name == name);
    let held = deferred.iter().position(|t| t.name == name);
    match (adds, in_force, held) {
        (true, Some(_), _) | (false, None, Some(_)) => true,
        (true, None, Some(k)) => {
            tools.push(deferred.remove(k));
            true
        }
        (false, Some(k), _) => {
            // Still declared: a later addition may put it back.
            deferred.push(tools.remove(k));
            true
        }
        (_, None, None) => false,
    }
}

/// A client tool (`type` absent or `custom`), its other fields read from `f`; `true` beside it
/// when it is declared with `defer_loading`: beside a tool-search tool a declared tool marked
/// deferred, without one not in force until a `tool_addition` names it.
pub(super) fn client_tool(
    mut f: Fields<'_>,
    extras: &mut Vec<Extra>,
) -> Result<(Tool, bool), DecodeError> {
    let name = f.req_str("name", "a tool has a name")?;
    let description = f.str("description")?.map(str::to_string);
    let parameters = f.schema(
        "input_schema",
        Some("a client tool declares its input_schema"),
    )?;
    let strict = f.strict(extras)?;
    let deferred = f.bool("defer_loading")?;
    if let Some(d) = deferred {
        wire(extras, f.at("defer_loading"), Value::Bool(d));
    }
    let eager_input_streaming = f.bool("eager_input_streaming")?.unwrap_or(false);
    // Who may call it (class 30): a code-execution type is the neutral `programmatic`.
    let allowed_callers = crate::providers::programmatic::neutral_callers(f.get("allowed_callers"));
    f.keep(
        &["cache_control", "input_examples"],
        ExtraKind::NotCarried,
        extras,
    );
    f.finish(extras);
    // Deferred in the neutral request only beside a tool search (the caller decides).
    let tool = Tool {
        strict,
        eager_input_streaming,
        allowed_callers,
        ..Tool::function(name, description, parameters)
    };
    Ok((tool, deferred == Some(true)))
}
