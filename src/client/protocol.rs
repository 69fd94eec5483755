//! The driver protocol (docs/clients/README.md): one JSON document per line on the driver's
//! stdin and stdout. tooltape writes a trial, the driver answers a result; tooltape then writes
//! the tool results of a follow-up round (the driver sends them back through its library and
//! answers another result) or `done`. This module owns those documents and their readings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Handed, HandedCall, HandedChunk, HandedError};
use crate::model::{
    AllowedMode, ChatRequest, HostedTool, Message, Outcome, Provider, ResultPart, StrictPolicy,
    ToolCall, ToolChoice, Usage,
};

/// What tooltape writes first: one trial, as the library's caller would ask it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverTrial {
    /// `client::NAME::case::route::choice::mode`, for the driver's own logs.
    pub name: String,
    /// The wire format the library is to speak: `openai-chat`, `openai-responses`, `anthropic`,
    /// `gemini` (a `Provider` slug).
    pub api: String,
    /// The upstream's origin, `http://127.0.0.1:PORT`: the driver adds the path prefix its
    /// library expects (`/v1` for OpenAI's SDK, nothing for Anthropic's, …).
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    /// The route's `options` table from the profile (library-specific switches).
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
    pub stream: bool,
    pub messages: Vec<DriverMessage>,
    pub tools: Vec<DriverTool>,
    /// `"auto"`, `"none"`, `"required"`, `{"name": T}`, or `{"allowed": [T…], "mode": "auto" |
    /// "required"}`; absent: the library's default (the field left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Absent: the library's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// `true`: the tools are to be sent strict where the API has strict mode.
    pub strict: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Extended thinking on, with this budget in tokens; absent: off. The library must then keep
    /// the reasoning state of each answer for the next round (a driver whose library cannot
    /// answers `unsupported`: the shared loops do so unless the driver says it supports it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<u32>,
    /// Hosted (server-side) tools the caller offers beside its functions, in tooltape's neutral
    /// form (`{"type": "web_search", "grounding": "auto"}`); absent: none. The library must send
    /// each in the API's own shape or refuse (a driver whose library cannot answers
    /// `unsupported`: the shared loops do so unless the driver says it supports it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosted: Vec<HostedTool>,
    /// `true`: a round's tool results are given as parts, which the library must send in the
    /// API's own form (the shared loops answer `unsupported` unless the driver says it does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub result_parts: bool,
    /// `"previous_response_id"` (Responses only): the library is to continue each round by the
    /// last answer's response id, sending only the round's results and leaving the earlier
    /// context to the server (class 22); absent: it sends the whole conversation. A driver whose
    /// library cannot answers `unsupported` (the shared loops do so unless the driver says it
    /// supports it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_with: Option<String>,
    /// Tools the caller declares that tooltape's neutral form cannot carry (OpenAI `custom`
    /// freeform or grammar tools), in the API's own wire form, to send beside `tools`; absent:
    /// none (a driver whose library cannot answers `unsupported`: the shared loops do so unless
    /// the driver says it supports it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caller_tools: Vec<Value>,
    /// Where each follow-up round goes when the conversation changes provider (class 20, as an
    /// agent framework's fallback does): entry `i` for the `i`-th round of results, the library's
    /// route to the provider it goes to, `None` where it stays where the round before went;
    /// absent: every round stays on the trial's route (a driver whose library cannot answers
    /// `unsupported`: the shared loops do so unless the driver says it supports it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_routes: Vec<Option<DriverRoute>>,
    /// `true`: the server compacts the conversation (class 31), as it does only for a caller that
    /// asked for it, and the library must send each compaction item back on the next round (a
    /// driver whose library has no documented way to ask for compaction answers `unsupported`:
    /// the shared loops do so unless the driver says it supports it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compaction: bool,
    /// The MCP server the trial's tools come from (a route with `mcp = true`, issue 42 item 7):
    /// the library takes them through its own MCP client, and each round's results by calling
    /// the tools through it (a driver whose library has none answers `unsupported`: the shared
    /// loops do so unless the driver says it supports it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<DriverMcp>,
}

/// Where a trial's MCP server is: its Streamable HTTP endpoint. Only `url` is written; the rest
/// is what the endpoint serves, opened when the trial is sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverMcp {
    /// `http://127.0.0.1:PORT/mcp/N`.
    pub url: String,
    /// The endpoint's key on tooltape's server.
    #[serde(skip)]
    pub key: u64,
    /// The tools it lists.
    #[serde(skip)]
    pub tools: Vec<crate::model::Tool>,
    /// What its `tools/call`s answer.
    #[serde(skip)]
    pub answers: Vec<crate::mcp::Answer>,
}

/// A route of the library a round goes to: the wire format to the provider, the model and the
/// profile route's `options`, as the trial's own `api`, `model` and `options`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverRoute {
    pub api: String,
    pub model: String,
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
}

/// A conversation turn: `system`, `user`, `assistant` (with its calls) or `tool` (a result).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverMessage {
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<HandedCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// A `tool` result given as parts (`{type: "text", text}`, `{type: "image", media_type,
    /// data}`, `{type: "image_url", url}`); `content` is then their text joined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ResultPart>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's JSON Schema as the case writes it.
    pub parameters: Value,
    /// With `strict` on OpenAI's and Anthropic's APIs: the schema in the API's strict dialect
    /// (every property required, optional ones nullable, `additionalProperties: false`), for
    /// drivers of libraries that pass schemas through unchanged (their callers write it so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict_parameters: Option<Value>,
    /// `true` (on the `anthropic` api only, where the tool carries the switch): the caller asks
    /// Anthropic's fine-grained tool streaming for this tool, `eager_input_streaming: true` on
    /// its definition (class 25). A driver whose library cannot send it answers `unsupported`
    /// (the shared loops do so unless the driver says it supports it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eager_input_streaming: bool,
    /// `true` (on the `anthropic` and `openai-responses` apis, beside a `tool_search` in
    /// `hosted`): the tool is declared deferred, `defer_loading: true`, loaded when the search
    /// finds it (class 28).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
    /// The OpenAI Responses namespace the function is declared in (`openai-responses` only); its
    /// calls carry it and go back with it on the next round (class 29).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Who may call the tool (`anthropic` and `openai-responses`, beside a `programmatic`
    /// runner in `hosted`): `direct` (the model) and `programmatic` (code the model wrote);
    /// absent, the model only (class 30). A call the model's code made must go back with its
    /// caller, beside the runner's server call, in Anthropic's `container`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_callers: Vec<String>,
}

/// What the library handed its caller for one call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverResult {
    /// The calls after the library's own accumulation (its final message or response).
    #[serde(default)]
    pub calls: Vec<HandedCall>,
    #[serde(default)]
    pub text: Option<String>,
    /// The library's finish or stop reason, as it spells it.
    #[serde(default)]
    pub finish: Option<String>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub error: Option<HandedError>,
    /// Streamed: each chunk the library yielded, in order (`None` when buffered).
    #[serde(default)]
    pub chunks: Option<Vec<HandedChunk>>,
    /// Trial fields the library has no knob for (`tool_choice`, `parallel_tool_calls`,
    /// `strict`, …): the trial is not expressible in it, and nothing was sent.
    #[serde(default)]
    pub unsupported: Vec<String>,
    /// The reasoning state the library handed over with its calls, in the API's own form
    /// (Anthropic thinking blocks, Responses reasoning items, Gemini signed parts); absent when
    /// there was none or the library does not hand it over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<Value>,
    /// The id of the answer (a Responses `resp_…`), when the library hands it over: the shared
    /// loops keep it on the assistant turn, for a round continued by `previous_response_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

/// What tooltape writes after a result: a round's tool results, or the end of the trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Next {
    /// The tool results to send back, and the follow-up's `tool_choice` (a caller asks `auto`
    /// once the results are in, so the model may answer; absent: leave it out).
    Results {
        results: Vec<DriverMessage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_choice: Option<Value>,
        /// The tools in force from this round on, when the round changes them (class 26);
        /// absent: the tools stay as they were.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<Vec<DriverTool>>,
    },
    Done {
        done: bool,
    },
}

/// The driver's line: `{"result": …}`.
#[derive(Debug, Deserialize)]
pub(super) struct ResultLine {
    pub result: DriverResult,
}

impl DriverMessage {
    /// A neutral message in the protocol's spelling.
    pub fn of(m: &Message) -> DriverMessage {
        let plain = |role: &str, content: &str| DriverMessage {
            role: role.into(),
            content: Some(content.into()),
            tool_calls: Vec::new(),
            call_id: None,
            name: None,
            is_error: false,
            parts: Vec::new(),
        };
        match m {
            Message::System { content } | Message::Developer { content } => {
                plain("system", content)
            }
            Message::User { content } => plain("user", content),
            Message::Assistant {
                text, tool_calls, ..
            } => DriverMessage {
                content: text.clone(),
                tool_calls: tool_calls.iter().map(call).collect(),
                ..plain("assistant", "")
            },
            Message::Tool {
                call_id,
                name,
                content,
                parts,
                is_error,
            } => DriverMessage {
                call_id: Some(call_id.clone()),
                name: Some(name.clone()),
                is_error: *is_error,
                parts: parts.clone(),
                ..plain("tool", content)
            },
        }
    }
}

fn call(c: &ToolCall) -> HandedCall {
    HandedCall {
        index: None,
        id: Some(c.id.clone()),
        name: Some(c.name.clone()),
        arguments: Some(c.arguments.clone()),
    }
}

/// The protocol's spelling of a tool choice.
pub(crate) fn choice_value(c: &ToolChoice) -> Value {
    match c {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Forced(n) => serde_json::json!({ "name": n }),
        ToolChoice::Allowed { mode, tools } => serde_json::json!({
            "allowed": tools,
            "mode": if *mode == AllowedMode::Required { "required" } else { "auto" },
        }),
    }
}

/// Reads a tool choice back from its protocol spelling.
pub(crate) fn choice_of(v: &Value) -> Option<ToolChoice> {
    match v {
        Value::String(s) => match s.as_str() {
            "auto" => Some(ToolChoice::Auto),
            "none" => Some(ToolChoice::None),
            "required" => Some(ToolChoice::Required),
            _ => None,
        },
        Value::Object(o) => {
            if let Some(n) = o.get("name").and_then(Value::as_str) {
                return Some(ToolChoice::Forced(n.into()));
            }
            let tools = o.get("allowed")?.as_array()?;
            Some(ToolChoice::Allowed {
                mode: if o.get("mode").and_then(Value::as_str) == Some("required") {
                    AllowedMode::Required
                } else {
                    AllowedMode::Auto
                },
                tools: tools
                    .iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
            })
        }
        _ => None,
    }
}

/// `req`'s tools in the protocol's spelling, for a library speaking `api`.
pub(crate) fn driver_tools(api: Provider, req: &ChatRequest) -> Vec<DriverTool> {
    let strict_dialect = req.asks_strict()
        && matches!(
            api,
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::Anthropic
        );
    req.tools
        .iter()
        .map(|t| DriverTool {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
            strict_parameters: strict_dialect
                .then(|| {
                    crate::schema::strict_parameters(api, &t.parameters)
                        .ok()
                        .map(|s| s.schema)
                })
                .flatten(),
            // Only Anthropic's API has the switch; the other encoders drop it with a note.
            eager_input_streaming: api == Provider::Anthropic && t.eager_input_streaming,
            defer_loading: t.defer_loading,
            namespace: t.namespace.clone(),
            allowed_callers: t.allowed_callers.clone(),
        })
        .collect()
}

impl DriverTool {
    /// The neutral tool (a faithful library sends it as the caller wrote it).
    pub fn neutral(&self) -> crate::model::Tool {
        crate::model::Tool {
            eager_input_streaming: self.eager_input_streaming,
            defer_loading: self.defer_loading,
            namespace: self.namespace.clone(),
            allowed_callers: self.allowed_callers.clone(),
            ..crate::model::Tool::function(
                self.name.clone(),
                self.description.clone(),
                self.parameters.clone(),
            )
        }
    }
}

impl DriverTrial {
    /// The trial for a neutral request.
    pub fn of(
        name: String,
        api: Provider,
        base_url: String,
        options: BTreeMap<String, Value>,
        req: &ChatRequest,
    ) -> DriverTrial {
        let strict = req.asks_strict();
        DriverTrial {
            name,
            api: api.slug().to_string(),
            base_url,
            api_key: "sk-tooltape-upstream".into(),
            model: req.model.clone(),
            options,
            stream: req.stream,
            messages: req.messages.iter().map(DriverMessage::of).collect(),
            tools: driver_tools(api, req),
            tool_choice: req.tool_choice.as_ref().map(choice_value),
            parallel_tool_calls: req.parallel_tool_calls,
            strict,
            max_tokens: req.max_tokens,
            thinking: req.thinking,
            hosted: req.hosted.clone(),
            result_parts: false,
            continue_with: None,
            caller_tools: Vec::new(),
            round_routes: Vec::new(),
            compaction: false,
            mcp: None,
        }
    }

    /// The neutral request this trial asks for (what a faithful library sends).
    pub fn request(&self) -> ChatRequest {
        let mut req = ChatRequest::empty(self.model.clone(), self.stream);
        req.messages = self.messages.iter().map(DriverMessage::neutral).collect();
        req.tools = self.tools.iter().map(DriverTool::neutral).collect();
        req.tool_choice = self.tool_choice.as_ref().and_then(choice_of);
        req.parallel_tool_calls = self.parallel_tool_calls;
        req.max_tokens = self.max_tokens;
        req.thinking = self.thinking;
        req.hosted.clone_from(&self.hosted);
        req.strict = if self.strict {
            StrictPolicy::Require
        } else {
            StrictPolicy::Off
        };
        req
    }
}

impl DriverMessage {
    /// The neutral message.
    pub fn neutral(&self) -> Message {
        let content = self.content.clone().unwrap_or_default();
        match self.role.as_str() {
            "system" => Message::System { content },
            "assistant" => Message::Assistant {
                phase: None,
                text: self.content.clone(),
                tool_calls: self
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| c.whole(i))
                    .collect(),
                opaque: Vec::new(),
            },
            "tool" => Message::Tool {
                call_id: self.call_id.clone().unwrap_or_default(),
                name: self.name.clone().unwrap_or_default(),
                content,
                parts: self.parts.clone(),
                is_error: self.is_error,
            },
            _ => Message::User { content },
        }
    }
}

impl DriverResult {
    /// What the library handed its caller, for the judge.
    pub fn handed(&self) -> Handed<'_> {
        Handed {
            calls: &self.calls,
            chunks: self.chunks.as_deref(),
            text: self.text.as_deref(),
            finish: self.finish.as_deref(),
            usage: self.usage.as_ref(),
            error: self.error.as_ref(),
        }
    }

    /// What the caller got, as an outcome (`downstream_outcome` of the trial record).
    pub fn outcome(&self) -> Outcome {
        self.handed().outcome()
    }
}
