//! What a library handed its caller, as its driver reports it (the driver protocol's calls and
//! chunks, docs/clients/README.md) and as the judge reads it: the calls after the library's own
//! accumulation, the chunks it yielded while streaming, its finish in its own words, text, usage,
//! the error it raised instead of an answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{Finish, Outcome, ProviderError, ToolCall, Usage};

/// What a library handed its caller for one call, borrowed for the judge.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handed<'a> {
    /// The calls after the library's own accumulation (its final message or response).
    pub calls: &'a [HandedCall],
    /// Streamed: each chunk the library yielded, in order (`None` when buffered).
    pub chunks: Option<&'a [HandedChunk]>,
    pub text: Option<&'a str>,
    /// The library's finish or stop reason, as it spells it.
    pub finish: Option<&'a str>,
    pub usage: Option<&'a Usage>,
    /// The error it raised or returned instead of an answer.
    pub error: Option<&'a HandedError>,
}

impl Handed<'_> {
    /// What the caller got, as an outcome (`downstream_outcome` of the trial record).
    pub fn outcome(&self) -> Outcome {
        Outcome {
            tool_calls: (self.calls.iter().enumerate())
                .map(|(i, c)| ToolCall {
                    id: c.id.clone().unwrap_or_default(),
                    ..c.whole(i)
                })
                .collect(),
            text: self.text.filter(|t| !t.is_empty()).map(str::to_string),
            finish: self.finish.map_or(Finish::Other, finish_of),
            raw_finish: self.finish.map(str::to_string),
            usage: self.usage.cloned(),
            error: self.error.map(|e| ProviderError {
                status: e.status.unwrap_or(0),
                kind: Some(e.kind.clone()),
                message: e.message.clone(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

/// An error the library raised or returned: its type name, message and HTTP status if known.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandedError {
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// A call as a library handed it over. In a chunk every field may be a fragment or absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandedCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// As the library gave them: a JSON string (whole or a fragment) or an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// One chunk the library yielded while streaming, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandedChunk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<HandedCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<String>,
}

impl HandedCall {
    /// The arguments as JSON: an object as given, a string parsed; `Err` with the text when a
    /// string does not parse.
    pub fn parsed_arguments(&self) -> Result<Value, String> {
        match &self.arguments {
            None => Ok(Value::Object(Default::default())),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Default::default())),
            Some(Value::String(s)) => serde_json::from_str(s).map_err(|_| s.clone()),
            Some(v) => Ok(v.clone()),
        }
    }

    /// A whole call (arguments that do not parse are kept as the string).
    pub fn whole(&self, i: usize) -> ToolCall {
        ToolCall::unsigned(
            self.id.clone().unwrap_or_else(|| format!("call_{i}")),
            self.name.clone().unwrap_or_default(),
            self.parsed_arguments().unwrap_or_else(Value::String),
        )
    }
}

/// A library's finish, in the neutral vocabulary: each library spells it its own way.
pub fn finish_of(raw: &str) -> Finish {
    match raw.trim().to_ascii_lowercase().replace('-', "_").as_str() {
        "tool_calls" | "tool_use" | "tool_call" | "function_call" | "tool" => Finish::ToolCalls,
        "stop" | "end_turn" | "stop_sequence" | "completed" | "complete" | "finish_reason_stop" => {
            Finish::Stop
        }
        "length" | "max_tokens" | "max_output_tokens" | "incomplete" => Finish::Length,
        "content_filter" | "refusal" | "safety" => Finish::ContentFilter,
        _ => Finish::Other,
    }
}
