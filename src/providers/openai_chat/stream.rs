//! Chat Completions stream decoding: SSE `data:` chunks → tool-call deltas keyed by `index`, text,
//! finish reason, usage, mid-stream errors; plus the synthetic stream for tests and `cargo bench`.

use serde_json::Value;

use super::chunk::CallDeltaWire;
use super::wire::BStr;
use super::{error_from_value, parse_arguments, set_finish};
use crate::model::{
    ChatRequest, Diagnostic, DiagnosticKind, Outcome, ProviderError, ToolCall, Usage,
};
use crate::providers::DecodeError;
use crate::sse::{SseDecoder, SseEvent};

/// Push-based stream decoder: the same outcome for any chunking of the same bytes.
pub struct Stream {
    req: ChatRequest,
    sse: SseDecoder,
    st: State,
}

#[derive(Default)]
pub(super) struct State {
    calls: Vec<PartialCall>,
    /// Position of the call the previous delta touched: the usual next target.
    last: usize,
    /// The highest wire `index` among the calls: a delta with a higher one starts a new call
    /// without a search through them all (which made 8,000 calls cost 32M comparisons).
    max_index: Option<u64>,
    pub(super) text: String,
    pub(super) finish_reason: Option<String>,
    pub(super) usage: Option<Usage>,
    model: Option<String>,
    error: Option<ProviderError>,
    done: bool,
}

struct PartialCall {
    /// The wire `index`; `None` for servers that omit it (Mistral).
    index: Option<u64>,
    id: String,
    name: String,
    args: String,
}

impl Stream {
    pub fn new(req: &ChatRequest) -> Stream {
        Stream {
            req: req.clone(),
            sse: SseDecoder::new(),
            st: State::default(),
        }
    }

    pub fn request(&self) -> ChatRequest {
        self.req.clone()
    }

    /// The assistant text accumulated so far (the text protocol parses it incrementally).
    pub fn text_so_far(&self) -> &str {
        &self.st.text
    }

    /// Inlined so that the SSE framer's fast path for chunks that end no line reaches callers.
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let st = &mut self.st;
        self.sse.push(bytes, &mut |ev| st.on_event(ev))
    }

    pub fn finish(self) -> Result<Outcome, DecodeError> {
        let Stream {
            mut sse, mut st, ..
        } = self;
        sse.finish(&mut |ev| st.on_event(ev))?;
        Ok(st.into_outcome())
    }
}

impl State {
    fn on_event(&mut self, ev: SseEvent<'_>) -> Result<(), DecodeError> {
        let data = ev.data.trim_ascii();
        // Anything after `[DONE]` is not part of the answer; blank `data:` lines are keep-alives.
        if self.done || data.is_empty() {
            return Ok(());
        }
        if data.starts_with("[DONE]") {
            self.done = true;
            return Ok(());
        }
        super::chunk::apply(self, data)
            .map_err(|e| DecodeError::json("openai-chat stream event", &e, ev.line))
    }

    pub(super) fn set_model(&mut self, m: BStr<'_>) {
        if self.model.as_deref() != Some(m.as_str()) {
            self.model = Some(m.0.into_owned());
        }
    }

    /// A mid-stream error arrives after a 200 status line; the first one is kept.
    pub(super) fn set_error(&mut self, err: &Value) {
        if self.error.is_none() && !err.is_null() {
            self.error = error_from_value(&serde_json::json!({ "error": err }), 200);
        }
    }

    pub(super) fn apply_call(&mut self, d: CallDeltaWire<'_>) {
        let pos = self.locate(&d);
        self.last = pos;
        let call = &mut self.calls[pos];
        // id and name come on the first delta; later non-empty values do not overwrite them and
        // empty ones (vLLM's `"name": ""` follow-ups) are ignored.
        if let Some(id) = d.id.filter(|s| !s.0.is_empty())
            && call.id.is_empty()
        {
            call.id = id.0.into_owned();
        }
        if let Some(f) = d.function {
            if let Some(n) = f.name.filter(|s| !s.0.is_empty())
                && call.name.is_empty()
            {
                call.name = n.0.into_owned();
            }
            if let Some(a) = &f.arguments {
                a.append_to(&mut call.args);
            }
        }
    }

    /// The call a delta belongs to, creating it when new. With `index`: the call of that index.
    /// Without (Mistral sends whole calls with no index): a matching `id`, else a new call when the
    /// delta names an id or a function, else (a bare arguments fragment) the previous call.
    fn locate(&mut self, d: &CallDeltaWire<'_>) -> usize {
        let id = d.id.as_ref().map(BStr::as_str).filter(|s| !s.is_empty());
        let found = match d.index {
            Some(i) => match self.calls.get(self.last) {
                Some(c) if c.index == Some(i) => Some(self.last),
                _ if self.max_index.is_none_or(|m| i > m) => None,
                _ => self.calls.iter().position(|c| c.index == Some(i)),
            },
            None => match id {
                Some(id) => self.calls.iter().position(|c| c.id == id),
                None => {
                    let named = d
                        .function
                        .as_ref()
                        .and_then(|f| f.name.as_ref())
                        .is_some_and(|n| !n.0.is_empty());
                    (!named && !self.calls.is_empty()).then_some(self.last)
                }
            },
        };
        found.unwrap_or_else(|| {
            if let Some(i) = d.index {
                self.max_index = Some(self.max_index.map_or(i, |m| m.max(i)));
            }
            self.calls.push(PartialCall {
                index: d.index,
                id: String::new(),
                name: String::new(),
                args: String::new(),
            });
            self.calls.len() - 1
        })
    }

    fn into_outcome(self) -> Outcome {
        let mut out = Outcome {
            usage: self.usage,
            model: self.model,
            error: self.error,
            ..Outcome::default()
        };
        if !self.text.is_empty() {
            out.text = Some(self.text);
        }
        for (i, c) in self.calls.into_iter().enumerate() {
            let arguments = parse_arguments(&c.args, i, &mut out.diagnostics);
            out.tool_calls.push(ToolCall {
                id: c.id,
                name: c.name,
                arguments,
                thought_signature: None,
            });
        }
        let truncated = !self.done && self.finish_reason.is_none() && out.error.is_none();
        set_finish(&mut out, self.finish_reason);
        if truncated {
            out.diagnostics.push(Diagnostic {
                kind: DiagnosticKind::StreamTruncated,
                message: "stream ended without `data: [DONE]` or a finish_reason".into(),
                offset: None,
                call_index: None,
                recovered: true,
            });
        }
        out
    }
}

/// A large Chat stream shaped like OpenAI's: role chunk, then `calls` tool calls whose arguments
/// arrive in `fragment_len`-byte fragments (escaped quotes included), a finish chunk, usage, `[DONE]`.
#[doc(hidden)]
pub fn synthetic_stream(calls: usize, fragment_len: usize) -> String {
    let head = r#"{"id":"chatcmpl-SYNTH0001","object":"chat.completion.chunk","created":1766084439,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_e413f45763","usage":null,"choices":[{"index":0,"delta":"#;
    let tail = r#","logprobs":null,"finish_reason":null}],"obfuscation":"q3"}"#;
    let mut out = String::new();
    let mut event = |delta: &str| {
        out.push_str("data: ");
        out.push_str(head);
        out.push_str(delta);
        out.push_str(tail);
        out.push_str("\n\n");
    };
    event(r#"{"role":"assistant","content":null}"#);
    let step = fragment_len.max(1);
    for i in 0..calls {
        let args = format!(
            r#"{{"location":"City number {i}, Région ü","unit":"celsius","days":{},"note":"fragmented arguments for a bench"}}"#,
            i % 7
        );
        event(&format!(
            r#"{{"tool_calls":[{{"index":{i},"id":"call_{i:020}","type":"function","function":{{"name":"get_weather","arguments":""}}}}]}}"#
        ));
        let chars: Vec<char> = args.chars().collect();
        for frag in chars.chunks(step) {
            let frag: String = frag.iter().collect();
            let quoted = serde_json::to_string(&frag).unwrap_or_default();
            event(&format!(
                r#"{{"tool_calls":[{{"index":{i},"function":{{"arguments":{quoted}}}}}]}}"#
            ));
        }
    }
    out.push_str(r#"data: {"id":"chatcmpl-SYNTH0001","object":"chat.completion.chunk","created":1766084439,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}"#);
    out.push_str("\n\n");
    out.push_str(r#"data: {"id":"chatcmpl-SYNTH0001","object":"chat.completion.chunk","created":1766084439,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":61,"completion_tokens":17,"total_tokens":78}}"#);
    out.push_str("\n\ndata: [DONE]\n\n");
    out
}
