//! The neutral request: tools, tool choice, hosted tools, the conversation's messages and the
//! calls in it, and [`ChatRequest`] with what every reader asks of it. Its builder is `builder.rs`.

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
    /// The tool's arguments stream eagerly: Anthropic's fine-grained tool streaming, whose
    /// `input_json_delta` fragments come unbuffered and unvalidated, so the arguments may not be
    /// valid JSON before the block ends (or ever, when `max_tokens` cuts it). Only Anthropic's
    /// API has the switch; the other encoders drop it with a note.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eager_input_streaming: bool,
    /// Declared but deferred: its definition is sent, marked `defer_loading`, and it becomes
    /// callable once a tool search ([`HostedTool::ToolSearch`]) returns its reference. Only
    /// Anthropic Messages and OpenAI Responses have it; the other encoders refuse it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
    /// The OpenAI Responses namespace the function is declared in (`{"type":"namespace"}`); its
    /// calls come back, and must be replayed, with that `namespace`. Only Responses has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The callers allowed to call the tool, neutral: `direct` (the model) and [`PROGRAMMATIC`]
    /// (code the model wrote, run by [`HostedTool::Programmatic`]); on the wire Anthropic's
    /// `allowed_callers` names the code-execution tool type, Responses' `programmatic`. Empty:
    /// the model only, every API's default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_callers: Vec<String>,
    /// The JSON Schema of the tool's structured result, as an MCP server lists it
    /// (`outputSchema`): no provider API carries it (the encoders never send it); tooltape's MCP
    /// server lists it and answers the tool's results as `structuredContent` (class 35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl Tool {
    /// A plain function tool: no strict flag, and none of the switches only some APIs have
    /// (eager streaming, deferral, a namespace).
    pub fn function(
        name: impl Into<String>,
        description: Option<String>,
        parameters: Value,
    ) -> Tool {
        Tool {
            name: name.into(),
            description,
            parameters,
            strict: None,
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
            allowed_callers: Vec::new(),
            output_schema: None,
        }
    }
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
    /// A tool search: the provider searches the request's deferred tools ([`Tool::defer_loading`])
    /// and loads those it finds. Anthropic Messages and OpenAI Responses only.
    ToolSearch {
        /// The wire type: Anthropic's `tool_search_tool_regex_20251119` or
        /// `tool_search_tool_bm25_20251119`, OpenAI Responses' `tool_search`.
        variant: String,
    },
    /// The code runner that calls client tools in the model's stead (programmatic tool
    /// calling): the tools whose [`Tool::allowed_callers`] name [`PROGRAMMATIC`] may be called
    /// from the code it runs. Anthropic Messages and OpenAI Responses only.
    Programmatic {
        /// The wire type: Anthropic's `code_execution_20250825` or `code_execution_20260120`,
        /// OpenAI Responses' `programmatic_tool_calling`.
        variant: String,
    },
}

/// The neutral caller of [`Tool::allowed_callers`] that is code the model wrote (Anthropic's
/// code-execution tool type, Responses' `programmatic`); `direct` is the model itself.
pub const PROGRAMMATIC: &str = "programmatic";

impl HostedTool {
    /// Whether this is the hosted web search (the grounding machinery's one tool).
    pub fn is_web_search(&self) -> bool {
        matches!(self, HostedTool::WebSearch { .. })
    }
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
        /// OpenAI Responses' `phase` of the assistant's message item (`commentary` while it
        /// works, `final_answer`), to be sent back with it.
        #[serde(skip_serializing_if = "Option::is_none")]
        phase: Option<Phase>,
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

/// The phase an assistant message is in (OpenAI Responses `phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Commentary,
    FinalAnswer,
}

impl Phase {
    /// The wire value (`commentary`, `final_answer`).
    pub fn wire(self) -> &'static str {
        match self {
            Phase::Commentary => "commentary",
            Phase::FinalAnswer => "final_answer",
        }
    }
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
    /// What the provider's server keeps for the conversation between exchanges.
    pub server: ServerContext,
}

/// What a provider's server keeps for a conversation between exchanges, which the next request
/// must name again: the code-execution container, the context-management settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerContext {
    /// Anthropic's `container` (the id an answer's `container` gave) that programmatic calls run in.
    pub container: Option<String>,
    /// The context-management settings (compaction): Anthropic's `context_management`,
    /// OpenAI Responses' `context_management`.
    pub context_management: Option<Value>,
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
            server: ServerContext::default(),
        }
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The tool-search tool the request declares, if any.
    pub fn tool_search(&self) -> Option<&str> {
        self.hosted.iter().find_map(|h| match h {
            HostedTool::ToolSearch { variant } => Some(variant.as_str()),
            HostedTool::WebSearch { .. } | HostedTool::Programmatic { .. } => None,
        })
    }

    /// The programmatic-calling code runner the request declares, if any.
    pub fn programmatic(&self) -> Option<&str> {
        self.hosted.iter().find_map(|h| match h {
            HostedTool::Programmatic { variant } => Some(variant.as_str()),
            HostedTool::WebSearch { .. } | HostedTool::ToolSearch { .. } => None,
        })
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
    /// OpenAI Responses `function_call.namespace`: the namespace of the function called (a
    /// deferred top-level function's calls carry its own name). A replay without it is refused
    /// (`400 Missing namespace for function_call`), so it travels with the call; only the
    /// Responses encoder can write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The code that made the call in the model's stead (programmatic tool calling); `None`:
    /// the model called it directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
}

/// Code that calls a client tool in the model's stead (programmatic tool calling): Anthropic's
/// `tool_use.caller`, OpenAI Responses' `function_call.caller`. It must come back with the call
/// on the next round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caller {
    /// The caller's wire type (Anthropic's code-execution tool type, Responses' `program`),
    /// which says whose API the call is of: only that API takes it back.
    pub kind: String,
    /// The id of the server call that runs the code (Anthropic `tool_id`, OpenAI `caller_id`).
    pub id: String,
}

impl Tool {
    /// Whether code the model wrote may call the tool (`allowed_callers` names it).
    pub fn programmable(&self) -> bool {
        self.allowed_callers.iter().any(|c| c == PROGRAMMATIC)
    }
}

impl ToolCall {
    /// A call without a thought signature (every API's but Gemini's, and Gemini's unsigned).
    pub fn unsigned(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            thought_signature: None,
            namespace: None,
            caller: None,
        }
    }
}
