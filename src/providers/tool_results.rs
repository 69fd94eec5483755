//! Tool results as the Anthropic and Gemini encoders send them: one run of consecutive tool
//! messages, in the order of the calls they answer; the conversation walked turn by turn so.

use crate::model::{Message, ResultPart, ToolCall};

/// One tool result of a run of consecutive tool messages.
pub(crate) struct ToolResult<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub content: &'a str,
    pub parts: &'a [ResultPart],
    pub is_error: bool,
}

/// A turn of the conversation as the Anthropic and Gemini encoders walk it: a message that is
/// not a tool result, with its index, or a run of tool results in call order.
pub(crate) enum Turn<'a> {
    Message(usize, &'a Message),
    Results(Vec<ToolResult<'a>>),
}

/// The conversation turn by turn ([`Turn`]): each run of tool messages ordered by the calls of
/// the assistant message before it.
pub(crate) struct Turns<'a> {
    msgs: &'a [Message],
    at: usize,
    last_calls: &'a [ToolCall],
}

impl<'a> Turns<'a> {
    pub(crate) fn new(msgs: &'a [Message]) -> Turns<'a> {
        Turns {
            msgs,
            at: 0,
            last_calls: &[],
        }
    }

    /// The next message's text when it is a user message, taken (Anthropic joins a user
    /// message right after tool results to their message).
    pub(crate) fn take_user(&mut self) -> Option<&'a str> {
        let Some(Message::User { content }) = self.msgs.get(self.at) else {
            return None;
        };
        self.at += 1;
        Some(content)
    }
}

impl<'a> Iterator for Turns<'a> {
    type Item = Turn<'a>;

    fn next(&mut self) -> Option<Turn<'a>> {
        let m = self.msgs.get(self.at)?;
        if let Message::Tool { .. } = m {
            let (results, end) = run_at(self.msgs, self.at, self.last_calls);
            self.at = end;
            return Some(Turn::Results(results));
        }
        if let Message::Assistant { tool_calls, .. } = m {
            self.last_calls = tool_calls;
        }
        self.at += 1;
        Some(Turn::Message(self.at - 1, m))
    }
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
