//! What the provider simulator should do for one trial: the `[simulate]` table of a case file.
//!
//! The simulated model is deterministic. Without a scenario it honours `tool_choice` and calls the
//! first eligible tool once with arguments generated from the schema. A scenario pins the calls,
//! the text, a malformed text-protocol form, an error answer or empty search results.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Calls the model makes when the request lets it call tools (filtered by the request's
    /// `tool_choice`: a forced choice always wins). Empty: one call to the first eligible tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ScenarioCall>,
    /// Text the model writes: before its calls, or as the whole answer when it calls nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Text answer after tool results came back (multi-turn). Default: a sentence quoting the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_text: Option<String>,
    /// The model prefers to answer in text when `tool_choice` is `auto` (it still obeys required/forced).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prefer_text: bool,
    /// Text protocol only: write the calls in this malformed form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed: Option<Malformed>,
    /// Answer with this HTTP error (in the provider's own error envelope) instead of a completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ScenarioError>,
    /// Hosted web search returns no results.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_search_results: bool,
    /// Hosted web search: tool types (e.g. `web_search`) this model answers "not supported" for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported_tool_types: Vec<String>,
    /// Reasoning written before the calls: an Anthropic `thinking` block with its signature, a
    /// Responses `reasoning` item, a Gemini `thought` part (its calls signed). The simulator then
    /// rejects a follow-up that does not carry it back, as the real APIs do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// With `reasoning`: Anthropic adds a `redacted_thinking` block after the thinking block (its
    /// `data` opaque, to be sent back unchanged like the signed block).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted_reasoning: bool,
    /// OpenAI Responses only: the answer's message item carries `phase`, `commentary` on text
    /// written before calls and `final_answer` on an answer without calls (class 32). Other
    /// APIs have no such field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub phase: bool,
    /// OpenAI Responses and Anthropic only: the answer that calls starts with a compaction item
    /// (Responses `compaction` with `encrypted_content`, Anthropic `compaction` block with its
    /// summary, streamed as one `compaction_delta`), as when the server compacted the
    /// conversation (class 31); the next round must send it back verbatim.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compaction: bool,
    /// OpenAI Chat Completions only: the upstream is an OpenAI-compatible model server answering
    /// in its own dialect (`reasoning` written as the message's reasoning text, call ids in the
    /// server's style); other APIs answer as they always do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ModelServer>,
    /// How a stream delivers text and arguments (default: small fragments, one call after another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_shape: Option<StreamShape>,
    /// The output-token limit is reached halfway through the last call's arguments (an eager
    /// Anthropic tool's: midway through its last string value).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_tokens_mid_call: bool,
    /// The model refuses (content filter / refusal) with this text instead of answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// A stream that fails after its first half: an error event, or a cut before the terminal event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_fault: Option<StreamFault>,
    /// The answer carries no usage (buffered and streamed, whatever the request asked).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_usage: bool,
    /// Calls made after each round of tool results: `then[0]` answers the first round; once
    /// they run out the model answers in text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<Vec<ScenarioCall>>,
}

impl Scenario {
    /// Compact JSON for the scenario request header, with every non-ASCII character escaped
    /// (`\uXXXX`): header values must be visible ASCII, and case texts are not.
    pub fn header_value(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        let mut out = String::with_capacity(json.len());
        for c in json.chars() {
            if c.is_ascii() {
                out.push(c);
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioCall {
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// The arguments exactly as written on the wire, instead of `arguments`: `""` is an empty
    /// string (OpenAI), an absent `input` / `args` (Anthropic, Gemini); `"{}"` an empty object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
    /// The id the model answers this call with, in an API that takes it (Chat `id`, Responses
    /// `call_id`, Anthropic `tool_use.id`, Gemini `functionCall.id`); elsewhere the API's own.
    /// Two calls may share one (class 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Stream delivery shapes gateways and SDKs have mishandled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamShape {
    /// Each call's arguments in one delta event.
    OneDelta,
    /// No argument deltas: Responses sends them only in `function_call_arguments.done`,
    /// Anthropic only in `content_block_start`'s `input`, Chat in the call's first chunk.
    DoneOnly,
    /// Parallel calls' argument deltas interleaved by index (Chat, Responses).
    Interleaved,
    /// Text and every call in one chunk (Chat: one `delta`; Gemini: one candidate's parts;
    /// Anthropic, Responses: every event in one network write).
    SameChunk,
    /// Chat: parallel calls streamed one after another at one `index` (0), each call's first
    /// delta carrying its own `id`, as some OpenAI-compatible servers send; a client must tell
    /// the calls apart by id. Other formats: the default shape.
    SharedIndex,
}

/// A model server whose OpenAI-compatible Chat dialect the simulator speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelServer {
    /// vLLM: reasoning text in the message's `reasoning` (streamed as `delta.reasoning`; it
    /// was `reasoning_content` before vLLM PR #27752, removed in PR #33402), call ids
    /// `chatcmpl-tool-` and 32 characters.
    Vllm,
    /// llama.cpp's `llama-server`: reasoning text in `reasoning_content` (DeepSeek's name, its
    /// `--reasoning-format deepseek`), call ids of 32 random letters and digits.
    LlamaCpp,
}

impl ModelServer {
    /// The message field that holds the reasoning text.
    pub fn reasoning_field(self) -> &'static str {
        match self {
            ModelServer::Vllm => "reasoning",
            ModelServer::LlamaCpp => "reasoning_content",
        }
    }
}

/// How a stream fails after its first half.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamFault {
    /// The provider's in-stream error event (Anthropic `error`, Chat `{"error":…}` chunk,
    /// Responses `error` + `response.failed`, Gemini `{"error":…}` element).
    ErrorEvent,
    /// The stream ends before its terminal event.
    Cut,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioError {
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Malformed `<tool_call>` forms models write despite the instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Malformed {
    ArrayWrapped,
    CodeFence,
    TrailingGt,
    RepeatedCloseTag,
    ExtraBrace,
    MissingBrace,
    MissingCloseTag,
    ArgumentsObject,
    UnknownTool,
    InvalidJson,
    Truncated,
}

#[cfg(test)]
mod tests;
