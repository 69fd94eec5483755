//! Responses stream decoding: typed `response.*` events → output items keyed by `output_index`,
//! terminal status, in-stream errors; plus the synthetic stream for tests and `cargo bench`.
//!
//! Which source wins: the accumulated events. Argument and text deltas are the answer; the
//! per-item `.done` events and the terminal `response.completed` snapshot are redundant copies
//! (they agree in real traffic) used only to fill what the deltas did not deliver (a gateway that
//! sends whole items, or only the snapshot). Why: a stream cut before its terminal event then
//! decodes to the same calls and text it showed a live consumer, and the terminal snapshot (which
//! repeats every argument) is needed only for status, usage, model and error.

use serde::Deserialize;
use serde_json::Value;

use super::decode::{Head, Items, Origin, ResponseWire};
use crate::model::DecodeError;
use crate::model::{ChatRequest, Diagnostic, Outcome, ProviderError};
use crate::providers::openai_chat::error_from_value;
use crate::providers::openai_chat::wire::{ArgsWire, MaybeStr};
use crate::sse::{SseDecoder, SseEvent};

/// Push-based stream decoder: the same outcome for any chunking of the same bytes.
pub struct Stream {
    req: ChatRequest,
    sse: SseDecoder,
    st: State,
}

#[derive(Default)]
struct State {
    items: Vec<StreamItem>,
    /// Position of the item the previous event touched: the usual next target.
    last: usize,
    head: Head,
    error: Option<ProviderError>,
    terminal: bool,
    /// `response.created` (or `.in_progress`) opened the stream.
    opened: bool,
    /// `output[]` of the terminal snapshot, kept only when no event announced an item.
    snapshot_output: Vec<Value>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Call,
    Message,
    Other,
}

struct StreamItem {
    output_index: Option<u64>,
    item_id: String,
    kind: Kind,
    call_id: String,
    name: String,
    /// A call's `namespace` (Responses tool search) and `caller` (its program), from its item.
    from: Origin,
    /// Accumulated argument or text deltas.
    deltas: String,
    /// Full arguments from `.done` / `output_item.done` (fallback when no delta came).
    final_args: Option<String>,
    /// The finished item (messages and other items: text fallback, citations, reasoning).
    done: Option<Value>,
}

#[derive(Deserialize)]
struct EventWire<'a> {
    #[serde(default, rename = "type", borrow)]
    kind: MaybeStr<'a>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default, borrow)]
    item_id: MaybeStr<'a>,
    #[serde(default, borrow)]
    delta: MaybeStr<'a>,
    #[serde(default, borrow)]
    arguments: Option<ArgsWire<'a>>,
    #[serde(default, borrow)]
    item: Option<ItemWire<'a>>,
    #[serde(default, borrow)]
    response: Option<ResponseWire<'a>>,
    /// The flat error event's fields (`{"type":"error","code","message","param"}`).
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
    /// The nested error event's object (recorded OpenAI form).
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ItemWire<'a> {
    #[serde(default, rename = "type", borrow)]
    kind: MaybeStr<'a>,
    #[serde(default, borrow)]
    id: MaybeStr<'a>,
    #[serde(default, borrow)]
    call_id: MaybeStr<'a>,
    #[serde(default, borrow)]
    name: MaybeStr<'a>,
    #[serde(default, borrow)]
    namespace: MaybeStr<'a>,
    /// The program that made the call (class 30).
    #[serde(default)]
    caller: Option<Value>,
    #[serde(default, borrow)]
    arguments: Option<ArgsWire<'a>>,
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

    /// What has been decoded so far: message deltas and function calls, in arrival order.
    pub fn progress(&self) -> crate::providers::Progress<'_> {
        let mut p = crate::providers::Progress::default();
        for it in &self.st.items {
            match it.kind {
                Kind::Message if !it.deltas.is_empty() => p.text.push(&it.deltas),
                Kind::Call => p.calls.push(crate::providers::CallProgress {
                    caller: it.from.caller.as_ref(),
                    id: if it.call_id.is_empty() {
                        &it.item_id
                    } else {
                        &it.call_id
                    },
                    name: &it.name,
                    arguments: std::borrow::Cow::Borrowed(if it.deltas.is_empty() {
                        it.final_args.as_deref().unwrap_or("")
                    } else {
                        &it.deltas
                    }),
                }),
                Kind::Message | Kind::Other => {}
            }
        }
        p
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
        if !st.opened && !st.terminal && st.error.is_none() {
            return Err(DecodeError::new(
                "not a Responses stream: no `response.created` or terminal `response.completed` event",
            ));
        }
        Ok(st.into_outcome())
    }
}

impl State {
    fn on_event(&mut self, ev: SseEvent<'_>) -> Result<(), DecodeError> {
        let data = ev.data.trim_ascii();
        // Gateways may append `data: [DONE]` (reference §2.6, UNCONFIRMED for OpenAI): accepted,
        // and not taken as proof of completeness (only a terminal `response.*` event is).
        if data.is_empty() || data.starts_with("[DONE]") {
            return Ok(());
        }
        let e: EventWire<'_> = serde_json::from_str(data)
            .map_err(|err| DecodeError::json("openai-responses stream event", &err, ev.line))?;
        let kind = e.kind.as_str().unwrap_or(ev.event);
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                let Some(item) = &e.item else { return Ok(()) };
                let k = match item.kind.as_str() {
                    Some("function_call") => Kind::Call,
                    Some("message") => Kind::Message,
                    _ => Kind::Other,
                };
                let pos = self.locate(e.output_index, item.id.as_str(), k);
                let it = &mut self.items[pos];
                if it.call_id.is_empty()
                    && let Some(c) = item.call_id.as_str()
                {
                    it.call_id = c.to_string();
                }
                if it.name.is_empty()
                    && let Some(n) = item.name.as_str()
                {
                    it.name = n.to_string();
                }
                if let Some(n) = item.namespace.as_str().filter(|n| !n.is_empty()) {
                    it.from.namespace = Some(n.to_string());
                }
                if let Some(c) = crate::providers::programmatic::read_caller(item.caller.as_ref()) {
                    it.from.caller = Some(c);
                }
                let added = kind == "response.output_item.added";
                match (k, &item.arguments) {
                    // A gateway may announce a call with its whole arguments: that is a delta.
                    (Kind::Call, Some(a)) if added => a.append_to(&mut it.deltas),
                    (Kind::Call, Some(a)) => it.final_args = Some(arg_string(a)),
                    (Kind::Call, None) => {}
                    (_, _) if !added => it.done = item_value(data),
                    _ => {}
                }
            }
            "response.function_call_arguments.delta" => {
                let pos = self.locate(e.output_index, e.item_id.as_str(), Kind::Call);
                if let Some(d) = e.delta.as_str() {
                    self.items[pos].deltas.push_str(d);
                }
            }
            "response.function_call_arguments.done" => {
                let pos = self.locate(e.output_index, e.item_id.as_str(), Kind::Call);
                if let Some(a) = &e.arguments {
                    self.items[pos].final_args = Some(arg_string(a));
                }
            }
            // A refusal is the text the model answered with (as in the Chat decoder).
            "response.output_text.delta" | "response.refusal.delta" => {
                let pos = self.locate(e.output_index, e.item_id.as_str(), Kind::Message);
                if let Some(d) = e.delta.as_str() {
                    self.items[pos].deltas.push_str(d);
                }
            }
            "response.created" | "response.in_progress" => {
                self.opened = true;
                if let Some(r) = &e.response
                    && !self.terminal
                {
                    self.head = Head::from_wire(r);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.terminal = true;
                if let Some(r) = &e.response {
                    self.head = Head::from_wire(r);
                }
                if self.items.is_empty() {
                    self.snapshot_output = serde_json::from_str::<Value>(data)
                        .ok()
                        .and_then(|mut v| v.pointer_mut("/response/output").map(Value::take))
                        .and_then(|v| match v {
                            Value::Array(a) => Some(a),
                            _ => None,
                        })
                        .unwrap_or_default();
                }
            }
            "error" => {
                self.terminal = true;
                if self.error.is_none() {
                    self.error = Some(stream_error(&e));
                }
            }
            _ => {} // other event types carry nothing the outcome needs
        }
        Ok(())
    }

    /// The item an event belongs to: by `output_index`, else by item id; created when new.
    fn locate(&mut self, output_index: Option<u64>, item_id: Option<&str>, kind: Kind) -> usize {
        let same = |it: &StreamItem| match (output_index, item_id) {
            (Some(i), _) => it.output_index == Some(i),
            (None, Some(id)) => it.item_id == id,
            (None, None) => false,
        };
        if let Some(it) = self.items.get(self.last)
            && same(it)
        {
            return self.last;
        }
        let pos = self.items.iter().position(same).unwrap_or_else(|| {
            self.items.push(StreamItem {
                output_index,
                item_id: item_id.unwrap_or("").to_string(),
                kind,
                call_id: String::new(),
                name: String::new(),
                from: Origin::default(),
                deltas: String::new(),
                final_args: None,
                done: None,
            });
            self.items.len() - 1
        });
        self.last = pos;
        pos
    }

    fn into_outcome(mut self) -> Outcome {
        let mut items = Items::default();
        for v in &self.snapshot_output {
            items.apply(v, true);
        }
        // Output order is `output_index` order (items without one keep their arrival order).
        self.items
            .sort_by_key(|it| it.output_index.unwrap_or(u64::MAX));
        for it in self.items {
            match it.kind {
                Kind::Call => {
                    let args = if it.deltas.is_empty() {
                        it.final_args.unwrap_or_default()
                    } else {
                        it.deltas
                    };
                    let id = if it.call_id.is_empty() {
                        it.item_id
                    } else {
                        it.call_id
                    };
                    items.call(id, it.name, args, it.from);
                }
                Kind::Message if !it.deltas.is_empty() => {
                    items.push_text(&it.deltas);
                    if let Some(d) = &it.done {
                        items.apply(d, false);
                    }
                }
                Kind::Message | Kind::Other => {
                    if let Some(d) = &it.done {
                        items.apply(d, true);
                    }
                }
            }
        }
        let mut out = Outcome {
            error: self.error,
            ..Outcome::default()
        };
        let last = items.finish_into(&mut out, self.head.search_tool.clone());
        self.head.apply(&mut out, 200, &last);
        if !self.terminal {
            out.diagnostics.push(Diagnostic::stream_truncated(
                "stream ended without response.completed, .incomplete, .failed or error",
            ));
        }
        out
    }
}

fn arg_string(a: &ArgsWire<'_>) -> String {
    let mut s = String::new();
    a.append_to(&mut s);
    s
}

/// The whole `item` of an `output_item.done` event (rare: messages, reasoning, hosted calls).
fn item_value(data: &str) -> Option<Value> {
    let mut v: Value = serde_json::from_str(data).ok()?;
    v.get_mut("item").map(Value::take)
}

/// An `error` event, nested (`{"error":{type,code,message}}`, recorded) or flat (spec).
fn stream_error(e: &EventWire<'_>) -> ProviderError {
    if let Some(nested) = e.error.as_ref().filter(|v| v.is_object())
        && let Some(err) = error_from_value(&serde_json::json!({ "error": nested }), 200)
    {
        return err;
    }
    let code = match &e.code {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let message = match &e.message {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    ProviderError {
        status: 200,
        kind: None,
        code,
        message,
        retry_after_ms: None,
    }
}

/// A large Responses stream shaped like OpenAI's: created, then `calls` function calls whose
/// arguments arrive in `fragment_len`-char deltas, `.done` events, and the completed snapshot.
#[doc(hidden)]
pub fn synthetic_stream(calls: usize, fragment_len: usize) -> String {
    let mut out = String::new();
    let mut seq = 0usize;
    let mut event = |name: &str, data: &str| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
        seq += 1;
    };
    let resp = |status: &str, output: &str| {
        format!(
            r#"{{"id":"resp_SYNTH","object":"response","created_at":1761175225,"status":"{status}","error":null,"incomplete_details":null,"model":"gpt-4o-2024-08-06","output":[{output}],"parallel_tool_calls":true,"tool_choice":"auto","tools":[{{"type":"function","name":"get_weather","parameters":{{"type":"object","properties":{{"location":{{"type":"string"}}}}}},"strict":false}}],"usage":null}}"#
        )
    };
    event(
        "response.created",
        &format!(
            r#"{{"type":"response.created","sequence_number":0,"response":{}}}"#,
            resp("in_progress", "")
        ),
    );
    let step = fragment_len.max(1);
    let mut finished = Vec::new();
    for i in 0..calls {
        let args = format!(
            r#"{{"location":"City number {i}, Région ü","unit":"celsius","days":{},"note":"fragmented arguments for a bench"}}"#,
            i % 7
        );
        let quoted = serde_json::to_string(&args).unwrap_or_default();
        let id = format!("fc_{i:040}");
        let call_id = format!("call_{i:020}");
        event(
            "response.output_item.added",
            &format!(
                r#"{{"type":"response.output_item.added","sequence_number":1,"output_index":{i},"item":{{"id":"{id}","type":"function_call","status":"in_progress","arguments":"","call_id":"{call_id}","name":"get_weather"}}}}"#
            ),
        );
        let chars: Vec<char> = args.chars().collect();
        for frag in chars.chunks(step) {
            let frag: String = frag.iter().collect();
            let q = serde_json::to_string(&frag).unwrap_or_default();
            event(
                "response.function_call_arguments.delta",
                &format!(
                    r#"{{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"{id}","output_index":{i},"delta":{q}}}"#
                ),
            );
        }
        event(
            "response.function_call_arguments.done",
            &format!(
                r#"{{"type":"response.function_call_arguments.done","sequence_number":3,"item_id":"{id}","output_index":{i},"arguments":{quoted}}}"#
            ),
        );
        let item = format!(
            r#"{{"id":"{id}","type":"function_call","status":"completed","arguments":{quoted},"call_id":"{call_id}","name":"get_weather"}}"#
        );
        event(
            "response.output_item.done",
            &format!(
                r#"{{"type":"response.output_item.done","sequence_number":4,"output_index":{i},"item":{item}}}"#
            ),
        );
        finished.push(item);
    }
    event(
        "response.completed",
        &format!(
            r#"{{"type":"response.completed","sequence_number":5,"response":{}}}"#,
            resp("completed", &finished.join(","))
        ),
    );
    out
}
