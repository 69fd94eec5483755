//! Anthropic decoding shared by buffered bodies and streams: content blocks → outcome
//! (`Builder`), `stop_reason` mapping, and the error envelope.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::HttpResponse;
use crate::model::DecodeError;
use crate::model::{
    ChatRequest, Diagnostic, Finish, HostedActivity, Outcome, ProviderError, ToolCall,
    ToolSearchActivity, Usage,
};
use crate::providers::openai_chat::wire::BStr;
use crate::providers::programmatic;

#[derive(Deserialize)]
pub(super) struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct WireError {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: String,
}

impl WireError {
    /// An `error` event without its `error` object.
    pub(super) fn unknown() -> WireError {
        WireError {
            kind: None,
            message: "error event without details".into(),
        }
    }
}

/// A buffered body (also the `message` of `message_start`).
#[derive(Deserialize)]
struct WireMessage {
    #[serde(rename = "type")]
    kind: Option<String>,
    model: Option<String>,
    /// Required in a message (absent only in an error envelope).
    content: Option<Vec<Value>>,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
    /// The code-execution container the answer ran in (class 30).
    container: Option<Value>,
}

/// A delta of `content_block_delta` (typed) or `message_delta` (only `stop_reason`).
///
/// `BStr` rather than `Option<Cow<str>>`: serde derive never borrows through an `Option`, so
/// every `partial_json` fragment (the hot path) would be copied into its own `String`.
#[derive(Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<BStr<'a>>,
    #[serde(borrow)]
    pub text: Option<BStr<'a>>,
    #[serde(borrow)]
    pub partial_json: Option<BStr<'a>>,
    #[serde(borrow)]
    pub thinking: Option<BStr<'a>>,
    #[serde(borrow)]
    pub signature: Option<BStr<'a>>,
    /// A `compaction_delta`'s summary.
    #[serde(borrow)]
    pub content: Option<BStr<'a>>,
    pub citation: Option<Value>,
    #[serde(borrow)]
    pub stop_reason: Option<BStr<'a>>,
    /// `message_delta`'s code-execution container (class 30).
    pub container: Option<Value>,
}

/// A content block still receiving deltas, keyed by its `index`.
enum Open {
    Text,
    Tool {
        call: usize,
        json: String,
        has_delta: bool,
    },
    Thinking {
        slot: usize,
        thinking: String,
        signature: String,
        changed: bool,
    },
    /// A compaction block (class 31): its one `compaction_delta` carries the summary.
    Compaction {
        slot: usize,
    },
    /// A server call kept for the next turn (a code-execution runner's, class 30; a tool
    /// search's, class 28): its `input` streams as `input_json_delta`s.
    ServerCall {
        slot: usize,
        json: String,
    },
    /// Server tool blocks, redacted thinking and unknown blocks: their deltas carry nothing.
    Ignored,
}

/// Accumulates content blocks, in order, into an outcome.
#[derive(Default)]
pub(super) struct Builder {
    pub outcome: Outcome,
    open: Vec<(u64, Open)>,
    hosted: HostedActivity,
    saw_hosted: bool,
    tool_search: Option<ToolSearchActivity>,
    /// The last block started, when it is a `tool_use`: its call number, and whether argument
    /// text (`input_json_delta`) came for it.
    last_tool_block: Option<(usize, bool)>,
}

impl Builder {
    /// `content_block_start`, or one block of a buffered `content[]`.
    pub(super) fn start(&mut self, index: u64, block: &Value) {
        if self.open.iter().any(|(i, _)| *i == index) {
            self.stop(index); // a restarted index closes the previous block first
        }
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        self.last_tool_block = None;
        let open = match kind {
            "text" => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    self.text(t);
                }
                for c in block
                    .get("citations")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.citation(c);
                }
                Open::Text
            }
            "tool_use" => {
                let call = self.outcome.tool_calls.len();
                self.last_tool_block = Some((call, false));
                let mut c = ToolCall::unsigned(
                    str_field(block, "id"),
                    str_field(block, "name"),
                    block.get("input").cloned().unwrap_or_else(|| json!({})),
                );
                // Made by the model's code (class 30): the caller goes back with the call.
                c.caller = programmatic::read_caller(block.get("caller"));
                self.outcome.tool_calls.push(c);
                Open::Tool {
                    call,
                    json: String::new(),
                    has_delta: false,
                }
            }
            "thinking" => {
                // Kept verbatim for the next turn; rebuilt at stop only if deltas changed it.
                self.outcome.opaque.push(block.clone());
                Open::Thinking {
                    slot: self.outcome.opaque.len() - 1,
                    thinking: str_field(block, "thinking"),
                    signature: str_field(block, "signature"),
                    changed: false,
                }
            }
            "redacted_thinking" => {
                self.outcome.opaque.push(block.clone());
                Open::Ignored
            }
            // Kept verbatim for the next turn: it stands for the conversation before it.
            "compaction" => {
                self.outcome.opaque.push(block.clone());
                Open::Compaction {
                    slot: self.outcome.opaque.len() - 1,
                }
            }
            // The code programmatic calls come from: kept verbatim for the next turn (class 30).
            "server_tool_use" if programmatic::is_runner_call(block) => self.server_call(block),
            // A tool search is a server tool too, but no web search (docs/wire-formats.md); the
            // search and what it loaded go back on the next turn, which calls what it found.
            "server_tool_use" if is_tool_search(block) => {
                let found = self.tool_search.get_or_insert_default();
                found.searches += 1;
                found.tool = block
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.server_call(block)
            }
            "tool_search_tool_result" => {
                let found = self.tool_search.get_or_insert_default();
                found.loaded.extend(references(block));
                self.outcome.opaque.push(block.clone());
                Open::Ignored
            }
            "server_tool_use" => {
                self.saw_hosted = true;
                self.hosted.search_calls += 1;
                self.hosted.tool_type = block
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Open::Ignored
            }
            "web_search_tool_result" => {
                // `content` is the list of results (empty when the search found nothing) or an
                // error object: count the results, so an empty search is told apart.
                self.saw_hosted = true;
                let n = block
                    .get("content")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                self.hosted.search_results += u32::try_from(n).unwrap_or(u32::MAX);
                Open::Ignored
            }
            _ => Open::Ignored,
        };
        self.open.push((index, open));
    }

    /// Text and calls so far: an open tool block's arguments are its `input_json_delta`s.
    pub(super) fn progress(&self) -> crate::providers::Progress<'_> {
        let calls =
            self.outcome
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let open = self.open.iter().find_map(|(_, o)| match o {
                        Open::Tool {
                            call,
                            json,
                            has_delta: true,
                        } if *call == i => Some(json.as_str()),
                        _ => None,
                    });
                    crate::providers::CallProgress {
                        caller: c.caller.as_ref(),
                        id: &c.id,
                        name: &c.name,
                        arguments: match open {
                            Some(j) => std::borrow::Cow::Borrowed(j),
                            None if self.open.iter().any(
                                |(_, o)| matches!(o, Open::Tool { call, .. } if *call == i),
                            ) =>
                            {
                                std::borrow::Cow::Borrowed("")
                            }
                            None => std::borrow::Cow::Owned(c.arguments.to_string()),
                        },
                    }
                })
                .collect();
        crate::providers::Progress {
            text: self.outcome.text.as_deref().into_iter().collect(),
            calls,
        }
    }

    /// `content_block_delta`. Deltas for an unknown index are dropped.
    pub(super) fn delta(&mut self, index: u64, d: &Delta<'_>) {
        let Some(pos) = self.open.iter().rposition(|(i, _)| *i == index) else {
            return;
        };
        match (d.kind.as_ref().map(BStr::as_str), &mut self.open[pos].1) {
            (Some("text_delta"), Open::Text) => {
                if let Some(t) = &d.text {
                    self.text(t.as_str());
                }
            }
            (
                Some("input_json_delta"),
                Open::Tool {
                    call,
                    json,
                    has_delta,
                },
            ) => {
                if let Some(p) = &d.partial_json {
                    json.push_str(p.as_str());
                }
                *has_delta = true;
                if let Some((last, received)) = &mut self.last_tool_block
                    && *last == *call
                {
                    *received = true;
                }
            }
            (
                Some("thinking_delta"),
                Open::Thinking {
                    thinking, changed, ..
                },
            ) => {
                thinking.push_str(d.thinking.as_ref().map_or("", BStr::as_str));
                *changed = true;
            }
            (
                Some("signature_delta"),
                Open::Thinking {
                    signature, changed, ..
                },
            ) => {
                signature.push_str(d.signature.as_ref().map_or("", BStr::as_str));
                *changed = true;
            }
            (Some("input_json_delta"), Open::ServerCall { json, .. }) => {
                if let Some(p) = &d.partial_json {
                    json.push_str(p.as_str());
                }
            }
            (Some("compaction_delta"), Open::Compaction { slot }) => {
                if let Some(c) = &d.content {
                    self.outcome.opaque[*slot]["content"] = json!(c.as_str());
                }
            }
            (Some("citations_delta"), _) => {
                if let Some(c) = &d.citation {
                    self.citation(c);
                }
            }
            _ => {}
        }
    }

    /// `content_block_stop`: a tool's arguments are parsed here.
    pub(super) fn stop(&mut self, index: u64) {
        let Some(pos) = self.open.iter().rposition(|(i, _)| *i == index) else {
            return;
        };
        match self.open.remove(pos).1 {
            Open::Tool {
                call,
                json,
                has_delta: true,
            } => self.finish_arguments(call, &json),
            Open::Thinking {
                slot,
                thinking,
                signature,
                changed: true,
            } => {
                self.outcome.opaque[slot] =
                    json!({"type": "thinking", "thinking": thinking, "signature": signature});
            }
            Open::ServerCall { slot, json } if !json.trim().is_empty() => {
                if let Ok(input) = serde_json::from_str::<Value>(&json) {
                    self.outcome.opaque[slot]["input"] = input;
                }
            }
            _ => {}
        }
    }

    /// Closes every block still open (a truncated stream), in index order.
    pub(super) fn stop_all(&mut self) {
        while let Some((index, _)) = self.open.first() {
            let index = *index;
            self.stop(index);
        }
    }

    pub(super) fn usage(&mut self, u: &WireUsage) {
        let usage = self.outcome.usage.get_or_insert_with(Usage::default);
        // message_delta usage is cumulative: later values replace earlier ones.
        if u.input_tokens.is_some() {
            usage.input_tokens = u.input_tokens;
        }
        if u.output_tokens.is_some() {
            usage.output_tokens = u.output_tokens;
        }
    }

    /// A server call block kept verbatim for the next turn; its streamed input completes it.
    fn server_call(&mut self, block: &Value) -> Open {
        self.outcome.opaque.push(block.clone());
        Open::ServerCall {
            slot: self.outcome.opaque.len() - 1,
            json: String::new(),
        }
    }

    /// The answer's code-execution `container` (`{"id", "expires_at"}`; an id string read too).
    pub(super) fn container(&mut self, c: Option<&Value>) {
        let id = c.and_then(|c| c.get("id").unwrap_or(c).as_str());
        if let Some(id) = id {
            self.outcome.container = Some(id.to_string());
        }
    }

    pub(super) fn stop_reason(&mut self, reason: &str) {
        self.outcome.finish = finish_for(reason);
        self.outcome.raw_finish = Some(reason.to_string());
    }

    /// Under `max_tokens` the block being written when the limit hit is the last one: a
    /// `tool_use` block last is the cut call and is withdrawn (`Outcome::withdraw_truncated_call`);
    /// calls followed by any other block were finished and stay. A buffered body's `input` is
    /// always an object, so it cannot show the cut (the API sends an object for a cut block too):
    /// the position is the signal. Such an `input` is not argument text received, so the kept
    /// `truncated_call` says none came (empty) rather than passing the object on as if complete.
    pub(super) fn into_outcome(mut self) -> Outcome {
        self.stop_all();
        if let Some((call, received)) = self.last_tool_block
            && call + 1 == self.outcome.tool_calls.len()
        {
            self.outcome.withdraw_truncated_call();
            if !received && let Some(cut) = &mut self.outcome.truncated_call {
                cut.arguments.clear();
            }
        }
        if self.saw_hosted {
            self.outcome.hosted = Some(self.hosted);
        }
        self.outcome.tool_search = self.tool_search;
        self.outcome
    }

    fn text(&mut self, t: &str) {
        if !t.is_empty() {
            self.outcome.push_text(t);
        }
    }

    fn citation(&mut self, c: &Value) {
        if let Some(url) = c.get("url").and_then(Value::as_str) {
            self.saw_hosted = true;
            self.hosted.citations.push(url.to_string());
        }
    }

    /// Concatenated `partial_json`: `""` means no arguments; invalid JSON is kept as a string
    /// with a diagnostic so the call is still visible.
    fn finish_arguments(&mut self, call: usize, raw: &str) {
        let args = if raw.trim().is_empty() {
            Ok(json!({}))
        } else {
            serde_json::from_str::<Value>(raw)
        };
        let arguments = match args {
            Ok(v) => v,
            Err(e) => {
                let message = format!("tool_use input is not valid JSON: {e}");
                let d = Diagnostic::invalid_arguments(call, message, false);
                self.outcome.diagnostics.push(d);
                Value::String(raw.to_string())
            }
        };
        if let Some(c) = self.outcome.tool_calls.get_mut(call) {
            c.arguments = arguments;
        }
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

pub(super) fn finish_for(stop_reason: &str) -> Finish {
    match stop_reason {
        "tool_use" => Finish::ToolCalls,
        "end_turn" | "stop_sequence" => Finish::Stop,
        "max_tokens" => Finish::Length,
        "refusal" => Finish::ContentFilter,
        _ => Finish::Other,
    }
}

pub(super) fn provider_error(status: u16, e: &WireError) -> ProviderError {
    ProviderError {
        status,
        kind: e.kind.clone(),
        code: None,
        message: e.message.clone(),
        retry_after_ms: None,
    }
}

/// `retry-after-ms` (honoured by the SDK) or `retry-after` in seconds; HTTP-date forms are ignored.
fn retry_after_ms(resp: &HttpResponse) -> Option<u64> {
    if let Some(ms) = resp
        .header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return (ms.is_finite() && ms >= 0.0).then_some(ms as u64);
    }
    let secs = resp.header("retry-after")?.trim().parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then_some((secs * 1000.0) as u64)
}

/// Decodes a buffered Messages body or an error envelope (any status).
pub fn decode(_req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    let parsed = serde_json::from_slice::<WireMessage>(&resp.body);
    if !resp.is_success() {
        let mut err = match &parsed {
            Ok(WireMessage { error: Some(e), .. }) => provider_error(resp.status, e),
            _ => ProviderError::unparsed(resp.status, &resp.body),
        };
        err.retry_after_ms = retry_after_ms(resp);
        return Ok(Outcome::from_error(err));
    }
    let msg = parsed.map_err(|e| DecodeError::json("anthropic message body", &e, 1))?;
    if let (Some("error"), Some(e)) = (msg.kind.as_deref(), &msg.error) {
        return Ok(Outcome::from_error(provider_error(resp.status, e)));
    }
    if let Some(kind) = msg.kind.as_deref().filter(|k| *k != "message") {
        return Err(DecodeError::new(format!(
            "anthropic message body: `type` is `{kind}`, not `message`"
        )));
    }
    let Some(content) = &msg.content else {
        return Err(DecodeError::new(
            "anthropic message body: missing required field `content` (not a Messages API response)",
        ));
    };
    let mut b = Builder::default();
    for (i, block) in content.iter().enumerate() {
        b.start(i as u64, block);
        b.stop(i as u64);
    }
    if let Some(r) = &msg.stop_reason {
        b.stop_reason(r);
    }
    if let Some(u) = &msg.usage {
        b.usage(u);
    }
    b.container(msg.container.as_ref());
    b.outcome.model = msg.model;
    Ok(b.into_outcome())
}

/// `message_start`'s `message`: only its model and initial usage matter.
#[derive(Deserialize)]
pub(super) struct MessageHead {
    pub model: Option<String>,
    pub usage: Option<WireUsage>,
    pub container: Option<Value>,
}

/// Whether a `server_tool_use` block is a tool search (`tool_search_tool_regex`, `…_bm25`).
fn is_tool_search(block: &Value) -> bool {
    (block.get("name").and_then(Value::as_str))
        .is_some_and(|n| n.starts_with(crate::providers::tool_search::ANTHROPIC_PREFIX))
}

/// The tool names a `tool_search_tool_result` returns: its content's `tool_reference` blocks,
/// as a list or under a `tool_search_tool_search_result`'s `tool_references` (an error content
/// returns none).
fn references(block: &Value) -> Vec<String> {
    let content = block.get("content");
    let refs = content
        .and_then(Value::as_array)
        .or_else(|| content?.get("tool_references")?.as_array());
    (refs.into_iter().flatten())
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("tool_reference"))
        .filter_map(|r| r.get("tool_name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}
