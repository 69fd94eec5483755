//! The five providers as a closed enum, and dispatch to their pure `encode` / `decode` functions.
//!
//! Each provider module is sans-IO: `encode(&ChatRequest) -> Encoded`, `decode(&ChatRequest,
//! &HttpResponse) -> Outcome` for buffered bodies, and a push-based `Stream` decoder for streamed
//! bodies that gives the same outcome for any chunking of the same bytes.

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod text_protocol;

#[cfg(test)]
pub(crate) mod testkit;

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, Outcome};

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

/// Builds the provider request for one exchange.
pub fn encode(provider: Provider, req: &ChatRequest) -> Result<Encoded, EncodeError> {
    // Hosted-tool policy first: a REQUIRED search the provider cannot guarantee is never sent.
    crate::policy::check(provider, req)?;
    match provider {
        Provider::OpenaiChat => openai_chat::encode(req),
        Provider::OpenaiResponses => openai_responses::encode(req),
        Provider::Anthropic => anthropic::encode(req),
        Provider::Gemini => gemini::encode(req),
        Provider::TextProtocol => text_protocol::encode(req),
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

    /// Ends the stream. A stream cut off before its terminal event is still decoded, with a
    /// `StreamTruncated` diagnostic (recorders treat that as a failed recording).
    pub fn finish(self) -> Result<Outcome, DecodeError> {
        let (provider, req, outcome) = match self {
            StreamDecoder::OpenaiChat(s) => (Provider::OpenaiChat, s.request(), s.finish()),
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

/// The body key holding the conversation (messages, input items or contents).
pub fn conversation_key(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenaiChat | Provider::Anthropic | Provider::TextProtocol => "messages",
        Provider::OpenaiResponses => "input",
        Provider::Gemini => "contents",
    }
}

/// The parts of a request body a reviewer needs to see in a snapshot: the tools block, the
/// tool choice and parallel switch, and any instructions/system text (where injection lands).
pub fn projection(provider: Provider, body: &Value) -> Value {
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
