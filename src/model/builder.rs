//! [`ChatRequest`]'s builder: `ChatRequest::new(model)` and one `with_*` method a field.

use super::request::{ChatRequest, HostedTool, Message, StrictPolicy, Tool, ToolChoice};

impl ChatRequest {
    /// A buffered request for `model` with nothing else set ([`ChatRequest::empty`]); the
    /// `with_*` methods add the rest, one field each:
    /// `ChatRequest::new("m").with_user("hi").with_tool(t).with_choice(ToolChoice::Auto)`.
    pub fn new(model: impl Into<String>) -> ChatRequest {
        ChatRequest::empty(model, false)
    }

    /// Streamed (`true`) or buffered.
    #[must_use]
    pub fn with_stream(self, stream: bool) -> ChatRequest {
        ChatRequest { stream, ..self }
    }

    /// `messages` appended to the conversation.
    #[must_use]
    pub fn with_messages(mut self, messages: impl IntoIterator<Item = Message>) -> ChatRequest {
        self.messages.extend(messages);
        self
    }

    /// A user message appended to the conversation.
    #[must_use]
    pub fn with_user(self, content: impl Into<String>) -> ChatRequest {
        let content = content.into();
        self.with_messages([Message::User { content }])
    }

    /// `tools` appended to the declared tools.
    #[must_use]
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Tool>) -> ChatRequest {
        self.tools.extend(tools);
        self
    }

    /// One tool appended to the declared tools.
    #[must_use]
    pub fn with_tool(self, tool: Tool) -> ChatRequest {
        self.with_tools([tool])
    }

    /// A hosted tool appended.
    #[must_use]
    pub fn with_hosted(mut self, hosted: HostedTool) -> ChatRequest {
        self.hosted.push(hosted);
        self
    }

    /// The tool choice (`None`: the field left out).
    #[must_use]
    pub fn with_choice(self, choice: impl Into<Option<ToolChoice>>) -> ChatRequest {
        let tool_choice = choice.into();
        ChatRequest {
            tool_choice,
            ..self
        }
    }

    /// The output-token limit.
    #[must_use]
    pub fn with_max_tokens(self, max_tokens: u32) -> ChatRequest {
        let max_tokens = Some(max_tokens);
        ChatRequest { max_tokens, ..self }
    }

    /// The strict policy.
    #[must_use]
    pub fn with_strict(self, strict: StrictPolicy) -> ChatRequest {
        ChatRequest { strict, ..self }
    }
}
