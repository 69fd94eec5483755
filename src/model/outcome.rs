//! What came back for one exchange in neutral form: [`Outcome`] with its calls' finish, usage,
//! error, diagnostics, hosted and tool-search activity. Its repairs (cut calls, finish from calls) are `repair.rs`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::{Phase, ToolCall};

/// Why the model stopped, normalized across providers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    ToolCalls,
    Stop,
    Length,
    ContentFilter,
    #[default]
    Other,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
}

/// A provider's error answer (non-2xx, or an error event inside a stream), typed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderError {
    pub status: u16,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub code: Option<String>,
    pub message: String,
    /// Retry delay the provider asked for (header or body), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl ProviderError {
    /// An error answer whose body is no error envelope (a proxy's HTML page, say): still an error
    /// answer, not a decode failure, its message the body's first 500 characters.
    pub(crate) fn unparsed(status: u16, body: &[u8]) -> ProviderError {
        ProviderError {
            status,
            message: String::from_utf8_lossy(body).chars().take(500).collect(),
            ..ProviderError::default()
        }
    }
}

/// A typed note the decoder or parser attaches to an outcome: something was recovered or rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    /// Borrowed when the message is fixed text: a parser recovering thousands of calls does not
    /// allocate a copy of the same words for each.
    pub message: Cow<'static, str>,
    /// Byte offset in the decoded text or body, when it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// Index of the tool call (in emission order) the diagnostic is about, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_index: Option<usize>,
    /// True when the call was still produced despite the problem.
    pub recovered: bool,
}

impl Diagnostic {
    /// A stream that ended before its terminal event (`message` says which): what it carried
    /// is kept.
    pub fn stream_truncated(message: impl Into<Cow<'static, str>>) -> Diagnostic {
        Diagnostic {
            kind: DiagnosticKind::StreamTruncated,
            message: message.into(),
            offset: None,
            call_index: None,
            recovered: true,
        }
    }

    /// Call `call`'s arguments are not valid JSON (`message` says where and why); `recovered`
    /// as the decoder counts it.
    pub fn invalid_arguments(call: usize, message: String, recovered: bool) -> Diagnostic {
        Diagnostic {
            kind: DiagnosticKind::InvalidArgumentsJson,
            message: message.into(),
            offset: None,
            call_index: Some(call),
            recovered,
        }
    }
}

/// Every diagnostic tooltape can attach. Text-protocol recovery kinds follow the reference's vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiagnosticKind {
    // Text protocol: fatal for the call.
    MalformedJson,
    TruncatedCall,
    UnknownTool,
    SchemaViolation,
    MissingName,
    ArgumentsNotObject,
    // Text protocol: recovered.
    MissingCloseTag,
    TrailingGarbage,
    ExtraCloseTag,
    ArrayWrapped,
    CodeFence,
    MissingBraces,
    ArgumentsAsObject,
    ParsingDisabled,
    /// A repeated opening `<tool_call>` (the instructions ask for exactly one).
    ExtraOpenTag,
    /// Characters between `<tool_call>` and the JSON object (the instructions forbid them).
    LeadingGarbage,
    /// No `arguments` key: the call is made with `{}` (a strict schema still checks required keys).
    MissingArguments,
    /// `parameters` used instead of `arguments` (the llama3_json spelling).
    ParametersAlias,
    /// A key repeated in an object of the call's arguments (at any depth): the last value is
    /// kept, as `JSON.parse` and serde_json keep it.
    DuplicateKey,
    // Native decoders.
    InvalidArgumentsJson,
    NullOptionalRemoved,
    UnknownStreamEvent,
    StreamTruncated,
    /// The text parser keeps the first [`MAX_DIAGNOSTICS`] diagnostics; this one
    /// counts the rest (memory stays bounded on hostile text).
    DiagnosticsTruncated,
}

/// The most diagnostics the text parser keeps for one text; the rest are counted in one
/// [`DiagnosticKind::DiagnosticsTruncated`].
pub(crate) const MAX_DIAGNOSTICS: usize = 1000;

/// What came back for one exchange, normalized.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Outcome {
    pub tool_calls: Vec<ToolCall>,
    /// Assistant text outside tool calls; `None` when there was none.
    pub text: Option<String>,
    pub finish: Finish,
    /// The provider's own stop signal (`finish_reason`, `stop_reason`, `status`, `finishReason`).
    pub raw_finish: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
    /// The model that answered, when the response says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    /// Hosted (server-side) tool activity: never counted as client tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosted: Option<HostedActivity>,
    /// Tool-search activity (Anthropic `tool_search_tool_*`, Responses `tool_search`): server
    /// items, never client tool calls, and no web search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_search: Option<ToolSearchActivity>,
    /// Provider-opaque items to send back on the next turn (see the `opaque` of
    /// [`Message::Assistant`](super::request::Message::Assistant)).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<Value>,
    /// The `phase` of the answer's assistant message item (OpenAI Responses: `commentary`,
    /// `final_answer`), which must come back with that message on the next round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Anthropic's code-execution `container` the answer ran in (its `id`): the next request
    /// names it (`container`) to continue the programmatic calls the answer made (class 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The call the output-token limit cut (see [`Outcome::withdraw_truncated_call`]): never in
    /// `tool_calls`, kept so a gateway can write it back in the client's format as the last call,
    /// which is what a length finish means in every format. Not serialized: snapshots show the
    /// `TruncatedCall` diagnostic.
    #[serde(skip)]
    pub truncated_call: Option<TruncatedCall>,
}

/// A call cut by the output-token limit: what was received of it before the cut.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncatedCall {
    pub id: String,
    pub name: String,
    /// The argument text received before the cut, as received (normally not valid JSON).
    /// Empty when no argument text came (the call was cut before its first fragment, or the
    /// format carried an object placeholder instead of text: see the Anthropic decoder).
    pub arguments: String,
}

/// Server-side tool activity seen in a response (web search calls, results, citations).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostedActivity {
    /// Search invocations the provider reports (`web_search_call`, `server_tool_use`, grounding queries).
    pub search_calls: u32,
    /// Individual results the hosted tool returned (0 when it searched and found nothing).
    pub search_results: u32,
    /// Cited URLs (`url_citation`, `web_search_result_location`, grounding chunks), in order.
    pub citations: Vec<String>,
    /// The hosted tool type the provider echoed (`web_search`, `web_search_preview`, `google_search`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_type: Option<String>,
}

/// A tool search seen in a response: how many searches ran, and the tools they loaded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSearchActivity {
    /// Searches the provider ran (`server_tool_use` of a tool-search tool, `tool_search_call`).
    pub searches: u32,
    /// The tools the searches returned, in order (`tool_reference`'s `tool_name`, the names in
    /// `tool_search_output`'s `tools`).
    pub loaded: Vec<String>,
    /// The search tool's wire name (Anthropic `tool_search_tool_regex` / `_bm25`, Responses
    /// `tool_search`), so a gateway can write the search back in its client's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

impl Outcome {
    /// An outcome that carries only an error.
    pub fn from_error(error: ProviderError) -> Outcome {
        Outcome {
            error: Some(error),
            ..Outcome::default()
        }
    }

    /// Appends text, turning `None` into `Some` on the first fragment.
    pub fn push_text(&mut self, fragment: &str) {
        match &mut self.text {
            Some(t) => t.push_str(fragment),
            None => self.text = Some(fragment.to_string()),
        }
    }
}
