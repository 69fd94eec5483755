//! The inbound formats, what an answer says about itself, and each format's stop values.

use super::errors::Family;
use crate::model::Finish;

/// The four inbound wire formats a client can speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inbound {
    /// `POST /v1/chat/completions`
    Chat,
    /// `POST /v1/responses`
    Responses,
    /// `POST /v1/messages`
    Messages,
    /// `:generateContent` / `:streamGenerateContent`; `sse` is `alt=sse`.
    Gemini { sse: bool },
}

impl Inbound {
    pub(crate) fn family(self) -> Family {
        match self {
            Inbound::Chat | Inbound::Responses => Family::OpenAi,
            Inbound::Messages => Family::Anthropic,
            Inbound::Gemini { .. } => Family::Gemini,
        }
    }

    /// Content type of a streamed answer.
    pub(crate) fn stream_content_type(self) -> &'static str {
        match self {
            Inbound::Gemini { sse: false } => "application/json; charset=UTF-8",
            _ => "text/event-stream; charset=utf-8",
        }
    }
}

/// What the answer says about itself (ids, model, creation time).
#[derive(Clone, Debug)]
pub(crate) struct Meta {
    pub id: String,
    pub model: String,
    pub created: u64,
    /// Chat streams: the client asked `stream_options.include_usage`, so usage comes in one
    /// extra final chunk whose `choices` is empty (without it, no such chunk).
    pub usage_chunk: bool,
}

/// The inbound format's stop value for a neutral finish.
pub(crate) fn finish_value(inbound: Inbound, finish: Finish) -> &'static str {
    match (inbound, finish) {
        (Inbound::Chat, Finish::ToolCalls) => "tool_calls",
        (Inbound::Chat, Finish::Length) => "length",
        (Inbound::Chat, Finish::ContentFilter) => "content_filter",
        (Inbound::Chat, _) => "stop",
        (Inbound::Responses, Finish::Length | Finish::ContentFilter) => "incomplete",
        (Inbound::Responses, _) => "completed",
        (Inbound::Messages, Finish::ToolCalls) => "tool_use",
        (Inbound::Messages, Finish::Length) => "max_tokens",
        (Inbound::Messages, Finish::ContentFilter) => "refusal",
        (Inbound::Messages, _) => "end_turn",
        (Inbound::Gemini { .. }, Finish::Length) => "MAX_TOKENS",
        (Inbound::Gemini { .. }, Finish::ContentFilter) => "SAFETY",
        (Inbound::Gemini { .. }, _) => "STOP",
    }
}
