//! The text protocol's injected developer instructions: base text, tool-choice and strict lines,
//! the tool manifest and per-tool guidance, then the request's own instructions.
//!
//! Layout (pinned by the snapshots in `src/inject/snapshots/`):
//! - inside the injection block every line is joined with a single `\n`, sections follow each
//!   other with no blank line (as in the specification's example);
//! - the block, the top-level `instructions` and each `system`/`developer` input item are joined
//!   with a blank line (`\n\n`); empty or whitespace-only pieces are skipped;
//! - no trailing newline.
//!
//! A parameter without a description renders as `- name (required, string)` (no colon); a tool
//! without a description has no `Description:` line.

mod guidance;
pub mod request;
pub(crate) mod stringify;
#[cfg(test)]
mod tests;

use serde_json::Value;

use request::{Choice, FunctionTool, content_text, function_tools, tool_choice};
use stringify::js_stringify;

/// The fixed part of the block, verbatim from the specification.
pub(crate) const BASE_TEXT: &str = r#"Tool calling instructions:
Only emit tool calls using <tool_call>...</tool_call>.
Format: <tool_call>{"name":"TOOL_NAME","arguments":"{...}"}</tool_call>
Inside <tool_call>...</tool_call>, output ONLY a JSON object with keys "name" and "arguments".
Always emit <tool_call> blocks exactly as shown; the client executes them.
Do NOT call internal tools directly (shell, apply_patch, web_search, view_image); only emit <tool_call>.
Read-only sandbox or approval restrictions do NOT prevent emitting <tool_call> output.
Use EXACT parameter names from the schema; do NOT invent or rename keys.
Do not add any extra characters before or after the JSON (no trailing ">", no code fences).
Use exactly one opening <tool_call> and one closing </tool_call> tag.
Output must be valid JSON. Do not add extra braces or trailing characters.
Do NOT wrap the JSON object in an array (no leading "[" or trailing "]").
Bad: <tool_call>[{"name":"tool","arguments":"{...}"}]</tool_call>
Never repeat the closing tag.
Example (exact): <tool_call>{"name":"webSearch","arguments":"{\"query\":\"example\",\"chatHistory\":[]}"}</tool_call>
The "arguments" field must be a JSON string.
If a tool has no parameters, use arguments "{}".
If no tool is needed, respond with plain text."#;

/// Builds the developer instructions for a Responses-shaped request JSON
/// (`tools`, `tool_choice`, `instructions`, `input`). `None` when there is nothing to send:
/// no function tools, no `instructions` and no system/developer input.
pub fn developer_instructions(request: &Value) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(block) = injection_block(request) {
        parts.push(block);
    }
    if let Some(instr) = request.get("instructions").and_then(Value::as_str) {
        parts.push(instr.to_string());
    }
    if let Some(items) = request.get("input").and_then(Value::as_array) {
        for item in items {
            let role = item.get("role").and_then(Value::as_str);
            if matches!(role, Some("system" | "developer"))
                && let Some(text) = item.get("content").and_then(content_text)
            {
                parts.push(text);
            }
        }
    }
    parts.retain(|p| !p.trim().is_empty());
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The injection block, or `None` when the request declares no function tool.
pub(crate) fn injection_block(request: &Value) -> Option<String> {
    let tools = function_tools(request);
    if tools.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = vec![BASE_TEXT.to_string()];
    if let Some(line) = choice_line(&tool_choice(request)) {
        lines.push(line);
    }
    let strict: Vec<&str> = tools.iter().filter(|t| t.strict).map(|t| t.name).collect();
    if !strict.is_empty() {
        lines.push(format!(
            "Strict tools: {}. Arguments MUST conform exactly to schema.",
            strict.join(", ")
        ));
    }
    lines.push("Available tools (schema):".into());
    for t in &tools {
        lines.push(format!("- {}: {}", t.name, manifest_schema(t)));
    }
    lines.push("Per-tool guidance and examples (schema-conformant):".into());
    for t in &tools {
        guidance::tool_guidance(t, &mut lines);
    }
    Some(lines.join("\n"))
}

/// A tool without `parameters` is listed with the neutral model's empty schema.
fn manifest_schema(tool: &FunctionTool<'_>) -> String {
    match tool.parameters {
        Some(p) => js_stringify(p),
        None => js_stringify(&crate::model::empty_parameters()),
    }
}

/// The tool-choice line. `allowed_tools` (a choice the specification leaves open) renders as
/// `Tool choice is restricted: only call these tools: "a", "b".` (mode `auto`) or
/// `Tool choice is required: you MUST emit at least one <tool_call>, calling only these tools: "a", "b".`
/// (mode `required`); an empty allowed list means no tool may be called and renders as `none`.
/// The manifest still lists every tool (as native APIs keep the full tool list).
pub(crate) fn choice_line(choice: &Choice) -> Option<String> {
    match choice {
        Choice::Auto => None,
        Choice::None => Some("Tool choice is none: never emit <tool_call>.".into()),
        Choice::Required => {
            Some("Tool choice is required: you MUST emit at least one <tool_call>.".into())
        }
        Choice::Forced(name) => Some(format!("Tool choice is forced: you MUST call \"{name}\".")),
        Choice::Allowed { tools, .. } if tools.is_empty() => choice_line(&Choice::None),
        Choice::Allowed { required, tools } => {
            let list: Vec<String> = tools.iter().map(|t| format!("\"{t}\"")).collect();
            let list = list.join(", ");
            Some(if *required {
                format!(
                    "Tool choice is required: you MUST emit at least one <tool_call>, calling only these tools: {list}."
                )
            } else {
                format!("Tool choice is restricted: only call these tools: {list}.")
            })
        }
    }
}

/// serde_json's message without its own ` at line L column C` suffix (we print the position first).
pub fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rsplit_once(" at line ") {
        Some((msg, _)) => msg.to_string(),
        None => s,
    }
}
