//! The text protocol's injected developer instructions (stub until the text-protocol issue lands).

use serde_json::Value;

/// Builds the developer instructions for a Responses-shaped request JSON
/// (`tools`, `tool_choice`, `instructions`, `input`). `None` when nothing is to be injected.
pub fn developer_instructions(request: &Value) -> Option<String> {
    let _ = request;
    None
}
