//! Chat Completions stream decoding: SSE `data:` chunks → tool-call deltas keyed by `index`, text,
//! finish reason, usage, mid-stream errors; plus the synthetic stream for tests and `cargo bench`.

use super::state::State;
use crate::model::DecodeError;
use crate::model::{ChatRequest, Outcome};
use crate::sse::{SseDecoder, SseEvent};

/// Push-based stream decoder: the same outcome for any chunking of the same bytes.
pub struct Stream {
    req: ChatRequest,
    sse: SseDecoder,
    st: State,
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

    /// What has been decoded so far (see [`crate::providers::Progress`]).
    pub fn progress(&self) -> crate::providers::Progress<'_> {
        self.st.progress()
    }

    /// Inlined so that the SSE framer's fast path for chunks that end no line reaches callers.
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let st = &mut self.st;
        self.sse.push(bytes, &mut |ev| on_event(st, ev))
    }

    pub fn finish(self) -> Result<Outcome, DecodeError> {
        self.finish_with_request().1
    }

    /// The request it decodes for (moved out, not cloned) and the outcome.
    pub(crate) fn finish_with_request(self) -> (ChatRequest, Result<Outcome, DecodeError>) {
        let Stream {
            req,
            mut sse,
            mut st,
        } = self;
        let outcome = (|| {
            sse.finish(&mut |ev| on_event(&mut st, ev))?;
            if st.chunks == 0 && !st.done {
                return Err(DecodeError::new(
                    "not a Chat Completions stream: no `data:` chunk and no `data: [DONE]`",
                ));
            }
            Ok(st.into_outcome())
        })();
        (req, outcome)
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

/// One SSE event into the state: `[DONE]` ends the answer, keep-alives are skipped.
fn on_event(state: &mut State, ev: SseEvent<'_>) -> Result<(), DecodeError> {
    let data = ev.data.trim_ascii();
    // Anything after `[DONE]` is not part of the answer; blank `data:` lines are keep-alives.
    if state.done || data.is_empty() {
        return Ok(());
    }
    if data.starts_with("[DONE]") {
        state.done = true;
        return Ok(());
    }
    state.chunks += 1;
    super::chunk::apply(state, data)
        .map_err(|e| DecodeError::json("openai-chat stream event", &e, ev.line))
}
