//! Gemini decoding shared by buffered bodies and streams: `GenerateContentResponse` chunks →
//! outcome (`Accum`), `finishReason` mapping, and the Google RPC error envelope.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::HttpResponse;
use crate::model::DecodeError;
use crate::model::{
    ChatRequest, Diagnostic, DiagnosticKind, Finish, HostedActivity, Outcome, ProviderError,
    ToolCall, Usage,
};
use crate::providers::openai_chat::wire::BStr;

/// Prefix of the ids the decoder synthesizes for calls without a provider `id`; the encoder
/// leaves such ids out of `functionResponse` (Gemini matches results by name and order).
pub const SYNTHETIC_ID_PREFIX: &str = "gemini-call-";

/// One `GenerateContentResponse` (a whole body, or one chunk of a stream), typed with borrowed
/// strings so that text parts do not allocate unless they contain escapes (`BStr`: serde derive
/// never borrows through `Option<Cow<str>>`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Chunk<'a> {
    #[serde(default, borrow)]
    candidates: Vec<Candidate<'a>>,
    usage_metadata: Option<UsageMeta>,
    #[serde(borrow)]
    model_version: Option<BStr<'a>>,
    prompt_feedback: Option<PromptFeedback>,
    pub error: Option<WireError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(borrow)]
    content: Option<Content<'a>>,
    #[serde(borrow)]
    finish_reason: Option<BStr<'a>>,
    grounding_metadata: Option<GroundingMeta>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    parts: Vec<Part<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(borrow)]
    text: Option<BStr<'a>>,
    #[serde(default)]
    thought: bool,
    function_call: Option<FunctionCall>,
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct FunctionCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMeta {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroundingMeta {
    #[serde(default)]
    web_search_queries: Vec<String>,
    #[serde(default)]
    grounding_chunks: Vec<GroundingChunk>,
}

#[derive(Deserialize)]
struct GroundingChunk {
    web: Option<WebChunk>,
}

#[derive(Deserialize)]
struct WebChunk {
    uri: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireError {
    code: Option<Value>,
    #[serde(default)]
    message: String,
    status: Option<String>,
    #[serde(default)]
    details: Vec<Value>,
}

/// The body of an error answer: the envelope, or (streamed JSON array) the envelope in an array.
#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorBody {
    One { error: WireError },
    Array(Vec<ErrorBody>),
}

/// Accumulates chunks: parts are appended across chunks, the last `finishReason` wins.
#[derive(Default)]
pub(super) struct Accum {
    pub outcome: Outcome,
    pub saw_finish: bool,
    /// How many chunks were applied.
    pub chunks: usize,
    /// A chunk held candidates, prompt feedback or an error.
    pub answered: bool,
    /// Grounding of the last chunk that had any (each carries the response's grounding so far;
    /// UNCONFIRMED whether streams ever split it across chunks).
    hosted: Option<HostedActivity>,
}

impl Accum {
    /// Applies one chunk; `status` is the HTTP status (200 inside streams).
    pub(super) fn chunk(&mut self, c: Chunk<'_>, status: u16) {
        self.chunks += 1;
        self.answered |=
            !c.candidates.is_empty() || c.prompt_feedback.is_some() || c.error.is_some();
        if let Some(e) = &c.error {
            // UNCONFIRMED (§8.7): mid-stream errors are assumed to use the non-stream envelope.
            self.outcome.error = Some(provider_error(status, e));
        }
        // Every chunk repeats the model: copied only when it changes.
        if let Some(m) = c.model_version
            && self.outcome.model.as_deref() != Some(m.as_str())
        {
            self.outcome.model = Some(m.0.into_owned());
        }
        if let Some(u) = &c.usage_metadata {
            // Cumulative: the last chunk's figures are the final ones. Thought tokens are billed
            // as output, as Anthropic's output_tokens include thinking.
            let output = match (u.candidates_token_count, u.thoughts_token_count) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            };
            self.outcome.usage = Some(Usage {
                input_tokens: u.prompt_token_count,
                output_tokens: output,
            });
        }
        let Some(cand) = c.candidates.into_iter().next() else {
            if let Some(reason) = c.prompt_feedback.and_then(|p| p.block_reason) {
                self.outcome.finish = Finish::ContentFilter;
                self.outcome.raw_finish = Some(reason);
                self.saw_finish = true;
            }
            return;
        };
        for part in cand.content.map(|c| c.parts).unwrap_or_default() {
            if let Some(fc) = part.function_call {
                self.call(fc, part.thought_signature);
            } else if let Some(t) = part.text.filter(|t| !part.thought && !t.0.is_empty()) {
                self.outcome.push_text(t.as_str());
            }
        }
        if let Some(r) = cand.finish_reason {
            self.outcome.finish = finish_for(r.as_str());
            self.outcome.raw_finish = Some(r.0.into_owned());
            self.saw_finish = true;
        }
        if let Some(g) = cand.grounding_metadata {
            let citations: Vec<String> = g
                .grounding_chunks
                .iter()
                .filter_map(|c| c.web.as_ref()?.uri.clone())
                .collect();
            self.hosted = Some(HostedActivity {
                search_calls: g.web_search_queries.len() as u32,
                search_results: g.grounding_chunks.len() as u32,
                citations,
                tool_type: Some("google_search".into()),
            });
        }
    }

    fn call(&mut self, fc: FunctionCall, thought_signature: Option<String>) {
        let index = self.outcome.tool_calls.len();
        let Some(name) = fc.name else {
            // Vertex streamFunctionCallArguments continuations (`partialArgs`) have no name;
            // that mode is not requested by the encoder and not decoded.
            self.outcome.diagnostics.push(Diagnostic {
                kind: DiagnosticKind::UnknownStreamEvent,
                message: "functionCall part without a name ignored".into(),
                offset: None,
                call_index: None,
                recovered: false,
            });
            return;
        };
        // Ids are usually absent: synthesize one from position and name only, so any chunking
        // of the same body gives the same ids.
        let id = fc
            .id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("{SYNTHETIC_ID_PREFIX}{index}-{name}"));
        self.outcome.tool_calls.push(ToolCall {
            caller: None,
            id,
            name,
            arguments: fc.args.unwrap_or_else(|| json!({})),
            thought_signature,
            namespace: None,
        });
    }

    pub(super) fn into_outcome(mut self) -> Outcome {
        self.outcome.normalize_finish_for_calls();
        self.outcome.hosted = self.hosted;
        self.outcome
    }
}

pub(super) fn finish_for(reason: &str) -> Finish {
    match reason {
        "STOP" => Finish::Stop,
        "MAX_TOKENS" => Finish::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" => {
            Finish::ContentFilter
        }
        // MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, LANGUAGE, OTHER, ...
        _ => Finish::Other,
    }
}

pub(super) fn provider_error(status: u16, e: &WireError) -> ProviderError {
    let code = match &e.code {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    ProviderError {
        status,
        kind: e.status.clone(),
        code,
        message: e.message.clone(),
        retry_after_ms: e.details.iter().find_map(retry_delay_ms),
    }
}

/// `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}` → 34400.
fn retry_delay_ms(detail: &Value) -> Option<u64> {
    let ty = detail.get("@type")?.as_str()?;
    if !ty.ends_with("google.rpc.RetryInfo") {
        return None;
    }
    let secs: f64 = detail
        .get("retryDelay")?
        .as_str()?
        .trim()
        .strip_suffix('s')?
        .parse()
        .ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as u64)
}

/// Decodes a buffered body (an object, or a whole streamed array) or an error envelope.
pub fn decode(_req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    if !resp.is_success() {
        let mut err = match serde_json::from_slice::<ErrorBody>(&resp.body) {
            Ok(body) => first_error(body).map(|e| provider_error(resp.status, &e)),
            Err(_) => None,
        }
        .unwrap_or_else(|| ProviderError::unparsed(resp.status, &resp.body));
        if err.retry_after_ms.is_none() {
            // UNCONFIRMED (§8.7) whether Gemini ever sends Retry-After; honoured when present.
            err.retry_after_ms = resp
                .header("retry-after")
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|s| s.saturating_mul(1000));
        }
        return Ok(Outcome::from_error(err));
    }
    let mut acc = Accum::default();
    let first = resp.body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let chunks: Vec<Chunk<'_>> = serde_json::from_slice(&resp.body)
            .map_err(|e| DecodeError::json("gemini response array", &e, 1))?;
        for c in chunks {
            acc.chunk(c, resp.status);
        }
    } else {
        let c: Chunk<'_> = serde_json::from_slice(&resp.body)
            .map_err(|e| DecodeError::json("gemini response body", &e, 1))?;
        acc.chunk(c, resp.status);
    }
    if !acc.answered {
        return Err(DecodeError::new(
            "gemini response body: missing required field `candidates` (or `promptFeedback`): not a generateContent response",
        ));
    }
    Ok(acc.into_outcome())
}

fn first_error(body: ErrorBody) -> Option<WireError> {
    match body {
        ErrorBody::One { error } => Some(error),
        ErrorBody::Array(items) => items.into_iter().find_map(first_error),
    }
}
