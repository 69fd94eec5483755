//! The five providers as a closed enum, and dispatch to their pure `encode` / `decode` functions.
//!
//! Each provider module is sans-IO: `encode(&ChatRequest) -> Encoded`, `decode(&ChatRequest,
//! &HttpResponse) -> Outcome` for buffered bodies, and a push-based `Stream` decoder for streamed
//! bodies that gives the same outcome for any chunking of the same bytes. The inverse of
//! `encode` is `decode_request`: an HTTP request of one of the four native formats back to the
//! neutral request (each format's `request.rs`), with what the neutral model cannot carry.

pub mod anthropic;
pub(crate) mod call_ids;
pub(crate) mod compaction;
mod constraints;
mod decoded;
pub mod gemini;
pub(crate) mod opaque;
pub mod openai_chat;
pub mod openai_responses;
pub(crate) mod phase;
pub(crate) mod programmatic;
mod rejection;
mod result_parts;
mod route;
pub mod text_protocol;
mod tool_names;
mod tool_rejection;
mod tool_results;
pub(crate) mod tool_search;

#[cfg(test)]
pub(crate) mod testkit;

use serde_json::{Map, Value};

use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, EncodeError, Encoded, Outcome, Provider};
pub use decoded::{DecodedRequest, Extra, ExtraKind, sent_tools};
pub(crate) use rejection::{
    Rejection, openai_reasons, reasoning_rejection, request_rejection, responses_no_call,
    result_part_rejection, tool_rejection, unlinked_result,
};
pub use result_parts::joined_text;
pub(crate) use result_parts::result_part_kind;
pub use route::{Framing, WireRoute, route};
pub(crate) use tool_names::problem as tool_name_problem;
pub(crate) use tool_rejection::wire_rejection;
pub(crate) use tool_results::in_call_order;

/// Builds the provider request for one exchange.
pub fn encode(provider: Provider, req: &ChatRequest) -> Result<Encoded, EncodeError> {
    // Hosted-tool policy first: a REQUIRED search the provider cannot guarantee is never sent.
    crate::capability::check(provider, req)?;
    // A tool result part the target cannot express is never dropped nor turned into text.
    result_parts::check(provider, req)?;
    // A deferred tool, a tool search or a namespace the target cannot express is refused.
    tool_search::check(provider, req)?;
    // A runner, a tool only code may call, or a call code made, the target cannot express.
    programmatic::check(provider, req)?;
    // A constraint the target has no switch for (the parallel one) is refused, never dropped.
    constraints::check(provider, req)?;
    // A compaction setting or item the target cannot take is refused, never dropped.
    compaction::check(provider, req)?;
    let mut encoded = match provider {
        Provider::OpenaiChat => openai_chat::encode(req),
        Provider::OpenaiResponses => openai_responses::encode(req),
        Provider::Anthropic => anthropic::encode(req),
        Provider::Gemini => gemini::encode(req),
        Provider::TextProtocol => text_protocol::encode(req),
    }?;
    encoded.notes.extend(eager_dropped(provider, req));
    encoded.notes.extend(phase::dropped(provider, req));
    compaction::write(provider, req, &mut encoded);
    Ok(encoded)
}

/// Only Anthropic's API can stream a tool's arguments eagerly (`eager_input_streaming`): for
/// another provider the switch is dropped, with a note naming the tools.
fn eager_dropped(provider: Provider, req: &ChatRequest) -> Option<String> {
    let eager: Vec<&str> = (req.tools.iter())
        .filter(|t| t.eager_input_streaming)
        .map(|t| t.name.as_str())
        .collect();
    (provider != Provider::Anthropic && !eager.is_empty()).then(|| {
        format!(
            "eager_input_streaming dropped for {}: its stream has no such switch ({})",
            provider.slug(),
            eager.join(", ")
        )
    })
}

/// Decodes a request of `provider`'s wire format (method, path with query, JSON body) back to
/// the neutral request, with the wire facts it cannot carry beside it ([`DecodedRequest`]).
///
/// `text-protocol` requests are Chat Completions requests and are decoded as such: their tools
/// and tool choice travel only as prose inside the injected first system message (which is
/// returned as that system message, with the conversation's own system and developer text
/// folded into it), earlier calls as `<tool_call>` assistant text and results as
/// `<tool_result>` user text. None of that is turned back into tools, calls or results.
pub fn decode_request(
    provider: Provider,
    req: &HttpRequest,
) -> Result<DecodedRequest, DecodeError> {
    match provider {
        Provider::OpenaiChat | Provider::TextProtocol => openai_chat::decode_request(req),
        Provider::OpenaiResponses => openai_responses::decode_request(req),
        Provider::Anthropic => anthropic::decode_request(req),
        Provider::Gemini => gemini::decode_request(req),
    }
}

/// Decodes a whole response: buffered JSON, an error envelope, or (when the request streamed and
/// the status is 2xx) a complete stream body.
pub fn decode(
    provider: Provider,
    req: &ChatRequest,
    resp: &HttpResponse,
) -> Result<Outcome, DecodeError> {
    if req.stream && resp.is_success() {
        let mut s = StreamDecoder::new(provider, req);
        s.push(&resp.body)?;
        return s.finish();
    }
    let mut outcome = match provider {
        Provider::OpenaiChat => openai_chat::decode(req, resp),
        Provider::OpenaiResponses => openai_responses::decode(req, resp),
        Provider::Anthropic => anthropic::decode(req, resp),
        Provider::Gemini => gemini::decode(req, resp),
        Provider::TextProtocol => text_protocol::decode(req, resp),
    }?;
    crate::schema::restore_optional(provider, req, &mut outcome);
    Ok(outcome)
}

/// A push-based stream decoder: feed bytes as they arrive, then `finish`.
pub enum StreamDecoder {
    OpenaiChat(openai_chat::Stream),
    OpenaiResponses(openai_responses::Stream),
    Anthropic(anthropic::Stream),
    Gemini(gemini::Stream),
    TextProtocol(text_protocol::Stream),
}

impl StreamDecoder {
    pub fn new(provider: Provider, req: &ChatRequest) -> StreamDecoder {
        match provider {
            Provider::OpenaiChat => StreamDecoder::OpenaiChat(openai_chat::Stream::new(req)),
            Provider::OpenaiResponses => {
                StreamDecoder::OpenaiResponses(openai_responses::Stream::new(req))
            }
            Provider::Anthropic => StreamDecoder::Anthropic(anthropic::Stream::new(req)),
            Provider::Gemini => StreamDecoder::Gemini(gemini::Stream::new(req)),
            Provider::TextProtocol => StreamDecoder::TextProtocol(text_protocol::Stream::new(req)),
        }
    }

    pub fn provider(&self) -> Provider {
        match self {
            StreamDecoder::OpenaiChat(_) => Provider::OpenaiChat,
            StreamDecoder::OpenaiResponses(_) => Provider::OpenaiResponses,
            StreamDecoder::Anthropic(_) => Provider::Anthropic,
            StreamDecoder::Gemini(_) => Provider::Gemini,
            StreamDecoder::TextProtocol(_) => Provider::TextProtocol,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        match self {
            StreamDecoder::OpenaiChat(s) => s.push(bytes),
            StreamDecoder::OpenaiResponses(s) => s.push(bytes),
            StreamDecoder::Anthropic(s) => s.push(bytes),
            StreamDecoder::Gemini(s) => s.push(bytes),
            StreamDecoder::TextProtocol(s) => s.push(bytes),
        }
    }

    /// What has been decoded so far (text and tool calls, possibly partial), for forwarding
    /// deltas while the stream is still arriving. Costs nothing unless called: `push` is unchanged.
    pub fn progress(&self) -> Progress<'_> {
        match self {
            StreamDecoder::OpenaiChat(s) => s.progress(),
            StreamDecoder::OpenaiResponses(s) => s.progress(),
            StreamDecoder::Anthropic(s) => s.progress(),
            StreamDecoder::Gemini(s) => s.progress(),
            StreamDecoder::TextProtocol(s) => s.progress(),
        }
    }

    /// Ends the stream. A stream cut off before its terminal event is still decoded, with a
    /// `StreamTruncated` diagnostic (recorders treat that as a failed recording).
    pub fn finish(self) -> Result<Outcome, DecodeError> {
        let (provider, req, outcome) = match self {
            StreamDecoder::OpenaiChat(s) => {
                let (req, outcome) = s.finish_with_request();
                (Provider::OpenaiChat, req, outcome)
            }
            StreamDecoder::OpenaiResponses(s) => {
                (Provider::OpenaiResponses, s.request(), s.finish())
            }
            StreamDecoder::Anthropic(s) => (Provider::Anthropic, s.request(), s.finish()),
            StreamDecoder::Gemini(s) => (Provider::Gemini, s.request(), s.finish()),
            StreamDecoder::TextProtocol(s) => (Provider::TextProtocol, s.request(), s.finish()),
        };
        let mut outcome = outcome?;
        crate::schema::restore_optional(provider, &req, &mut outcome);
        Ok(outcome)
    }
}

/// A stream decoder's view of what it has decoded so far. Text pieces and calls only grow:
/// a later view extends every piece and call of an earlier one, and may add new ones.
#[derive(Debug, Default)]
pub struct Progress<'a> {
    /// Assistant text, in pieces (one per text item or block), in arrival order.
    pub text: Vec<&'a str>,
    /// Tool calls in emission order; `arguments` is the JSON text received so far.
    pub calls: Vec<CallProgress<'a>>,
}

/// One tool call as far as it has arrived.
#[derive(Debug)]
pub struct CallProgress<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub arguments: std::borrow::Cow<'a, str>,
    /// The code that made the call (class 30), known from the call's start.
    pub caller: Option<&'a crate::model::Caller>,
}

impl CallProgress<'_> {
    /// A call that arrived whole, its arguments as compact JSON.
    pub(crate) fn whole(c: &crate::model::ToolCall) -> CallProgress<'_> {
        CallProgress {
            caller: c.caller.as_ref(),
            id: &c.id,
            name: &c.name,
            arguments: std::borrow::Cow::Owned(c.arguments.to_string()),
        }
    }
}

/// The body key holding the conversation (messages, input items or contents).
pub(crate) fn conversation_key(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenaiChat | Provider::Anthropic | Provider::TextProtocol => "messages",
        Provider::OpenaiResponses => "input",
        Provider::Gemini => "contents",
    }
}

/// The parts of a request body a reviewer needs to see in a snapshot: the tools block, the
/// tool choice and parallel switch, and any instructions/system text (where injection lands).
pub(crate) fn projection(provider: Provider, body: &Value) -> Value {
    let keys: &[&str] = match provider {
        Provider::OpenaiChat => &[
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "stream_options",
        ],
        Provider::OpenaiResponses => &[
            "instructions",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
        ],
        Provider::Anthropic => &["system", "tools", "tool_choice", "thinking"],
        Provider::Gemini => &["systemInstruction", "tools", "toolConfig"],
        Provider::TextProtocol => &["tools", "tool_choice"],
    };
    let mut out = Map::new();
    for k in keys {
        if let Some(v) = body.get(*k) {
            out.insert((*k).to_string(), v.clone());
        }
    }
    if provider == Provider::TextProtocol {
        // The injected developer instructions are the first system message.
        if let Some(first) = body.pointer("/messages/0")
            && first.get("role").and_then(Value::as_str) == Some("system")
        {
            out.insert(
                "injected".into(),
                first.get("content").cloned().unwrap_or(Value::Null),
            );
        }
    }
    Value::Object(out)
}
