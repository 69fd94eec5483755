//! The neutral model: tools, tool choice, conversations and outcomes, independent of any wire format.
//!
//! Every provider module converts *from* [`ChatRequest`] and *to* [`Outcome`]; nothing here knows
//! about HTTP or JSON shapes of a particular API.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A function tool the client declares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object. Absent means "no parameters".
    #[serde(default = "empty_parameters")]
    pub parameters: Value,
    /// The tool asks for strict argument validation (provider-side constrained decoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// `{"type":"object","properties":{}}`: the schema of a tool without parameters.
pub fn empty_parameters() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// Which tools the model may or must call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    /// Exactly this tool must be called.
    Forced(String),
    /// Only these tools may be called; `mode` says whether one must be.
    Allowed {
        mode: AllowedMode,
        tools: Vec<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowedMode {
    Auto,
    Required,
}

impl ToolChoice {
    /// The choice's segment of a trial name: `auto`, `none`, `required`, `forced-NAME`,
    /// `allowed-auto-A+B`, `allowed-required-A+B`.
    pub fn slug(&self) -> String {
        match self {
            ToolChoice::Auto => "auto".into(),
            ToolChoice::None => "none".into(),
            ToolChoice::Required => "required".into(),
            ToolChoice::Forced(name) => format!("forced-{name}"),
            ToolChoice::Allowed { mode, tools } => {
                let mode = match mode {
                    AllowedMode::Auto => "auto",
                    AllowedMode::Required => "required",
                };
                format!("allowed-{mode}-{}", tools.join("+"))
            }
        }
    }

    /// Parses a slug back (`forced-get_weather`, `allowed-auto-a+b`, ...); `omitted` is not a choice.
    pub fn from_slug(s: &str) -> Option<ToolChoice> {
        match s {
            "auto" => Some(ToolChoice::Auto),
            "none" => Some(ToolChoice::None),
            "required" => Some(ToolChoice::Required),
            _ => {
                if let Some(name) = s.strip_prefix("forced-") {
                    return (!name.is_empty()).then(|| ToolChoice::Forced(name.to_string()));
                }
                let rest = s.strip_prefix("allowed-")?;
                let (mode, tools) = if let Some(t) = rest.strip_prefix("auto-") {
                    (AllowedMode::Auto, t)
                } else if let Some(t) = rest.strip_prefix("required-") {
                    (AllowedMode::Required, t)
                } else {
                    return None;
                };
                let tools: Vec<String> = tools.split('+').map(str::to_string).collect();
                if tools.iter().any(String::is_empty) {
                    return None;
                }
                Some(ToolChoice::Allowed { mode, tools })
            }
        }
    }

    /// True when the contract demands at least one tool call.
    pub fn demands_call(&self) -> bool {
        matches!(
            self,
            ToolChoice::Required
                | ToolChoice::Forced(_)
                | ToolChoice::Allowed {
                    mode: AllowedMode::Required,
                    ..
                }
        )
    }
}

/// How strictly tool schemas are enforced when a provider supports strict mode (case field `strict`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StrictPolicy {
    /// Make schemas strict where that keeps their meaning; otherwise send `strict: false` and note why.
    #[default]
    Auto,
    /// Every tool must be sent strict; a schema that cannot be is an encode error.
    Require,
    /// Never send strict schemas (a tool's own `strict = true` still asks for it).
    Off,
}

/// A server-side (hosted) tool the provider runs itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum HostedTool {
    WebSearch {
        /// `auto`: the model decides; `required`: it must search, or the request fails closed.
        #[serde(default)]
        grounding: Grounding,
        /// Wire variant to try (OpenAI Responses: `web_search` or `web_search_preview`); `None` = default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grounding {
    #[default]
    Auto,
    Required,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    Developer {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Provider-opaque items that must be sent back verbatim on the next turn
        /// (Anthropic thinking blocks with signatures, OpenAI reasoning items).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        opaque: Vec<Value>,
    },
    Tool {
        call_id: String,
        name: String,
        content: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// One exchange's request in neutral form: what an encoder turns into a provider request.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub tools: Vec<Tool>,
    pub hosted: Vec<HostedTool>,
    /// `None`: the field is omitted (provider default).
    pub tool_choice: Option<ToolChoice>,
    /// `None`: the field is omitted (provider default, usually true).
    pub parallel_tool_calls: Option<bool>,
    pub stream: bool,
    pub max_tokens: Option<u32>,
    pub strict: StrictPolicy,
    /// Extended thinking / reasoning budget in tokens, when the case turns it on.
    pub thinking: Option<u32>,
}

impl ChatRequest {
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as a JSON object (a non-object only when the model produced one: see diagnostics).
    pub arguments: Value,
    /// Gemini `thoughtSignature` attached to the call's part: must be sent back on the next turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

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
}

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
    /// Provider-opaque items to send back on the next turn (see [`Message::Assistant::opaque`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<Value>,
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

    /// `finish` from calls: when calls are present and the provider said a plain stop, it is `tool_calls`.
    pub fn normalize_finish_for_calls(&mut self) {
        if !self.tool_calls.is_empty() && self.finish == Finish::Stop {
            self.finish = Finish::ToolCalls;
        }
    }
}

#[cfg(test)]
mod tests;
