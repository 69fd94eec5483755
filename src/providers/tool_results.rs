//! Tool results as the Anthropic and Gemini encoders send them: one run of consecutive tool
//! messages, in the order of the calls they answer.

use crate::model::{Message, ResultPart, ToolCall};

/// One tool result of a run of consecutive tool messages.
pub(crate) struct ToolResult<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub content: &'a str,
    pub parts: &'a [ResultPart],
    pub is_error: bool,
}

/// The run of consecutive tool messages of `msgs` that begins at `start`, in call order (see
/// [`in_call_order`]), and the index of the first message after it.
pub(crate) fn run_at<'a>(
    msgs: &'a [Message],
    start: usize,
    calls: &[ToolCall],
) -> (Vec<ToolResult<'a>>, usize) {
    let len = msgs[start..]
        .iter()
        .take_while(|m| matches!(m, Message::Tool { .. }))
        .count();
    (in_call_order(&msgs[start..start + len], calls), start + len)
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
                parts,
                is_error,
            } => Some(ToolResult {
                call_id,
                name,
                content,
                parts,
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
