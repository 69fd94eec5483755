//! Tool results as the Anthropic and Gemini encoders send them: one run of consecutive tool
//! messages, in the order of the calls they answer.

use crate::model::{Message, ToolCall};

/// One tool result of a run of consecutive tool messages.
pub(crate) struct ToolResult<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub content: &'a str,
    pub is_error: bool,
}

/// The tool results of a run of tool messages, stably sorted by the position of their call in
/// the preceding assistant turn (ids that match no call keep their relative order, at the end).
pub(crate) fn in_call_order<'a>(run: &'a [Message], calls: &[ToolCall]) -> Vec<ToolResult<'a>> {
    let mut items: Vec<(usize, ToolResult<'a>)> = run
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id,
                name,
                content,
                is_error,
            } => Some(ToolResult {
                call_id,
                name,
                content,
                is_error: *is_error,
            }),
            _ => None,
        })
        .map(|r| {
            let pos = calls
                .iter()
                .position(|c| c.id == r.call_id)
                .unwrap_or(usize::MAX);
            (pos, r)
        })
        .collect();
    items.sort_by_key(|(pos, _)| *pos);
    items.into_iter().map(|(_, r)| r).collect()
}
