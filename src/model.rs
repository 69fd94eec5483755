//! The neutral model: tools, tool choice, conversations and outcomes, independent of any wire format.
//!
//! Every provider module converts *from* [`ChatRequest`] and *to* [`Outcome`]; nothing here knows
//! about HTTP or JSON shapes of a particular API.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::HttpRequest;

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
    /// The tool's arguments stream eagerly: Anthropic's fine-grained tool streaming, whose
    /// `input_json_delta` fragments come unbuffered and unvalidated, so the arguments may not be
    /// valid JSON before the block ends (or ever, when `max_tokens` cuts it). Only Anthropic's
    /// API has the switch; the other encoders drop it with a note.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eager_input_streaming: bool,
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

/// How much a finding matters, least first (drift reports and gateway findings alike; a list
/// shown most severe first sorts by `Reverse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Cosmetic,
    Behaviour,
    Breaking,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Cosmetic => "cosmetic",
            Severity::Behaviour => "behaviour",
            Severity::Breaking => "breaking",
        }
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
        /// The result's text; for a parts result, its text parts joined by `\n`.
        content: String,
        /// Empty: the result is the string `content`. Otherwise the result as parts, kept in
        /// each API's array form (and failing closed where a part cannot be expressed).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<ResultPart>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// One part of a tool result given as parts (case files write them the same way).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ResultPart {
    Text {
        text: String,
    },
    /// An image as base64 `data` with its `media_type` (`image/png`).
    Image {
        media_type: String,
        data: String,
    },
    /// An image by URL, where the API takes one.
    ImageUrl {
        url: String,
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
    /// Puts `earlier` (a conversation this request continues) before the request's own
    /// messages, after its system messages.
    pub fn continue_after(&mut self, earlier: impl IntoIterator<Item = Message>) {
        let at = (self.messages.iter())
            .take_while(|m| matches!(m, Message::System { .. }))
            .count();
        let own = self.messages.split_off(at);
        self.messages.extend(earlier);
        self.messages.extend(own);
    }

    /// A request with nothing set but the model and the stream flag: what a decoder fills in,
    /// or the context a response body is decoded in on its own.
    pub fn empty(model: impl Into<String>, stream: bool) -> ChatRequest {
        ChatRequest {
            model: model.into(),
            messages: Vec::new(),
            tools: Vec::new(),
            hosted: Vec::new(),
            tool_choice: None,
            parallel_tool_calls: None,
            stream,
            max_tokens: None,
            strict: StrictPolicy::Off,
            thinking: None,
        }
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

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

    /// The caller asks for strict tool schemas: the policy requires it or a tool does.
    pub fn asks_strict(&self) -> bool {
        self.strict == StrictPolicy::Require || self.tools.iter().any(|t| t.strict == Some(true))
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
    /// The text parser keeps the first [`crate::model::MAX_DIAGNOSTICS`] diagnostics; this one
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
    /// Provider-opaque items to send back on the next turn (see [`Message::Assistant::opaque`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opaque: Vec<Value>,
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

/// True when `raw` cannot be a call's finished arguments: empty (no fragment arrived) or not a
/// complete JSON value (a JSON object cut anywhere before its closing brace never parses).
pub(crate) fn arguments_unfinished(raw: &str) -> bool {
    raw.trim().is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(raw).is_err()
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

// ---- Providers and the coded errors of encoding and decoding (every layer sees them) ----

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    OpenaiChat,
    OpenaiResponses,
    Anthropic,
    Gemini,
    TextProtocol,
}

impl Provider {
    pub const ALL: [Provider; 5] = [
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::TextProtocol,
    ];

    /// The name used in case files, trial names, cassette paths and the CLI.
    pub fn slug(self) -> &'static str {
        match self {
            Provider::OpenaiChat => "openai-chat",
            Provider::OpenaiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::TextProtocol => "text-protocol",
        }
    }

    pub fn from_slug(s: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.slug() == s)
    }

    /// Environment variables that may hold the API key, in order of preference.
    pub fn key_vars(self) -> &'static [&'static str] {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
                &["OPENAI_API_KEY"]
            }
            Provider::Anthropic => &["ANTHROPIC_API_KEY"],
            Provider::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        }
    }

    /// Environment variable that overrides the base URL.
    pub fn base_url_var(self) -> &'static str {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
                "OPENAI_BASE_URL"
            }
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
            Provider::Gemini => "GEMINI_BASE_URL",
        }
    }

    /// The credential header for a key (added by transports, never by encoders).
    pub fn auth_header(self, key: &str) -> (&'static str, String) {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
                ("authorization", format!("Bearer {key}"))
            }
            Provider::Anthropic => ("x-api-key", key.to_string()),
            Provider::Gemini => ("x-goog-api-key", key.to_string()),
        }
    }
}

/// Providers are read by their slug; an unknown one lists the valid slugs. The error is raised
/// inside the visitor, so a deserializer that tracks positions reports the value's own.
impl<'de> serde::Deserialize<'de> for Provider {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Slug;
        impl serde::de::Visitor<'_> for Slug {
            type Value = Provider;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Provider, E> {
                Provider::from_slug(s).ok_or_else(|| {
                    let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
                    E::custom(format!(
                        "unknown provider `{s}`; expected one of {}",
                        all.join(", ")
                    ))
                })
            }
        }
        d.deserialize_str(Slug)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}

/// An encoder's output: the request, plus notes on choices it made that a reviewer should see
/// (for example why a tool was sent with `strict: false`). Notes go into the trial's snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub request: HttpRequest,
    pub notes: Vec<String>,
}

/// The encoder refused to build a request: it fails closed instead of sending something the
/// provider would reject or silently reinterpret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EncodeError {
    /// Stable upper-case code, e.g. `GROUNDING_NOT_SUPPORTED`, `STRICT_SCHEMA`, `FORCED_WITH_THINKING`.
    pub code: String,
    pub message: String,
}

impl EncodeError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> EncodeError {
        EncodeError {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for EncodeError {}

/// A body the decoder cannot make sense of, with where it went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub message: String,
    /// 1-based line of the body (for streams: the SSE line of the event's data).
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl DecodeError {
    pub fn new(message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub fn at(message: impl Into<String>, line: usize, column: Option<usize>) -> DecodeError {
        DecodeError {
            message: message.into(),
            line: Some(line),
            column,
        }
    }

    /// A serde_json error inside a body or an event's data that starts at `base_line`.
    pub fn json(context: &str, err: &serde_json::Error, base_line: usize) -> DecodeError {
        DecodeError::at(
            format!("{context}: {err}"),
            base_line + err.line().saturating_sub(1),
            Some(err.column()),
        )
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "line {l}, column {c}: {}", self.message),
            (Some(l), None) => write!(f, "line {l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<crate::sse::SseError> for DecodeError {
    fn from(e: crate::sse::SseError) -> DecodeError {
        DecodeError::at(e.message, e.line, None)
    }
}

#[cfg(test)]
mod tests;
