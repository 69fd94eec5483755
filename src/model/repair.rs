//! [`Outcome`]'s repairs, shared by the decoders: a call the output-token limit cut is withdrawn
//! (kept aside as a [`TruncatedCall`]), and a plain stop with calls becomes a `tool_calls` finish.

use serde_json::Value;

use super::outcome::{Diagnostic, DiagnosticKind, Finish, Outcome, TruncatedCall};

/// True when `raw` cannot be a call's finished arguments: empty (no fragment arrived) or not a
/// complete JSON value (a JSON object cut anywhere before its closing brace never parses).
pub(super) fn arguments_unfinished(raw: &str) -> bool {
    raw.trim().is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(raw).is_err()
}
impl Outcome {
    /// The output-token limit cut the turn (`finish` is `Length`): the last call was still being
    /// written, so its arguments are incomplete. It is withdrawn from `tool_calls`, reported as a
    /// `TruncatedCall` diagnostic instead (never as a valid call), and kept in `truncated_call`
    /// with the argument text received. Decoders call it only when their format says the last
    /// call was the one being written (see each decoder).
    pub fn withdraw_truncated_call(&mut self) {
        if self.finish != Finish::Length {
            return;
        }
        let Some(call) = self.tool_calls.pop() else {
            return;
        };
        let index = self.tool_calls.len();
        let mut unparsed = false;
        self.diagnostics.retain(|d| {
            let about =
                d.kind == DiagnosticKind::InvalidArgumentsJson && d.call_index == Some(index);
            unparsed |= about;
            !about
        });
        // Text that did not parse is kept as a JSON string by the decoders: that string is the
        // text as received; parsed arguments are written back as JSON text.
        let arguments = match call.arguments {
            Value::String(s) if unparsed => s,
            other => other.to_string(),
        };
        self.diagnostics.push(Diagnostic {
            kind: DiagnosticKind::TruncatedCall,
            message: format!(
                "the output-token limit was reached inside call {index} ({}): its arguments are incomplete, so it is not reported as a call",
                call.name
            )
            .into(),
            offset: None,
            call_index: Some(index),
            recovered: false,
        });
        self.truncated_call = Some(TruncatedCall {
            id: call.id,
            name: call.name,
            arguments,
        });
    }

    /// The Chat and Responses rule (see their decoders): under a length finish the last call is
    /// withdrawn only when `last_raw`, its arguments text as received, is unfinished
    /// ([`arguments_unfinished`]) or the format marks the call itself as cut (`marked_cut`: a
    /// Responses item with `status: "incomplete"`); the kept `truncated_call` holds that text.
    pub(crate) fn withdraw_unfinished_call(&mut self, last_raw: Option<&str>, marked_cut: bool) {
        let Some(raw) = last_raw.filter(|raw| marked_cut || arguments_unfinished(raw)) else {
            return;
        };
        self.withdraw_truncated_call();
        if let Some(cut) = &mut self.truncated_call {
            raw.clone_into(&mut cut.arguments);
        }
    }

    /// `finish` from calls: when calls are present and the provider said a plain stop, it is `tool_calls`.
    pub fn normalize_finish_for_calls(&mut self) {
        if !self.tool_calls.is_empty() && self.finish == Finish::Stop {
            self.finish = Finish::ToolCalls;
        }
    }
}
