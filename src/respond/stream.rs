//! Incremental streams: each delta (text, a tool call's start, an argument fragment) becomes the
//! inbound format's own event as soon as it is known; `finish` closes what is open and ends with
//! the mapped finish, usage and the format's terminal event.

use serde_json::{Value, json};

use super::body::{
    args_text, call_item, chat_usage, finished_calls_marker, gemini_call_part, gemini_usage,
    message_item, response_object,
};
use super::chat_chunk::{
    Arguments, CallArguments, CallStart, CallsDelta, ChatChunk, ChunkChoice, EmptyDelta,
    NameAndArguments, RoleDelta, TextDelta,
};
use super::errors::{Envelope, envelope};
use super::format::{Inbound, Meta, finish_value};
use super::frame::{ResponsesEvents, sse};
use super::server_items;
use crate::model::{Caller, Outcome, ProviderError, ToolCall};

enum Item {
    Text(String),
    Call {
        item_id: String,
        id: String,
        name: String,
        args: String,
    },
}

/// Writes one streamed answer. Every method returns the bytes to send now (possibly none).
pub(crate) struct StreamWriter {
    inbound: Inbound,
    meta: Meta,
    started: bool,
    events: ResponsesEvents,
    /// Responses output items / Anthropic content blocks / Gemini parts, in start order.
    items: Vec<Item>,
    /// Item of the text being written (a new one after a call, for block formats).
    text_item: Option<usize>,
    /// Item of each call, by call number.
    calls: Vec<usize>,
    /// Anthropic: the open content block.
    open_block: Option<usize>,
    /// Gemini: calls are sent whole; the next one to send.
    gemini_sent: usize,
    gemini_chunks: usize,
    /// Total text written (to add what the outcome holds beyond it at the end).
    text_len: usize,
}

impl StreamWriter {
    pub(crate) fn new(inbound: Inbound, meta: Meta) -> StreamWriter {
        StreamWriter {
            inbound,
            meta,
            started: false,
            events: ResponsesEvents::default(),
            items: Vec::new(),
            text_item: None,
            calls: Vec::new(),
            open_block: None,
            gemini_sent: 0,
            gemini_chunks: 0,
            text_len: 0,
        }
    }

    fn chat_chunk(&self, delta: &impl serde::Serialize, finish: Option<&str>) -> Vec<u8> {
        // Serialized from borrowed fields (the hot path of a relayed Chat stream): the same
        // bytes as the `json!` objects, in the same key order, without building them.
        let c = ChatChunk {
            id: &self.meta.id,
            object: "chat.completion.chunk",
            created: self.meta.created,
            model: &self.meta.model,
            choices: [ChunkChoice {
                index: 0,
                delta,
                logprobs: (),
                finish_reason: finish,
            }],
        };
        sse(None, &c)
    }

    fn gemini_chunk(&mut self, candidate: Value, usage: Option<Value>) -> Vec<u8> {
        let mut c = json!({"candidates": [null], "modelVersion": self.meta.model, "responseId": self.meta.id});
        c["candidates"][0] = candidate;
        if let Some(u) = usage {
            c["usageMetadata"] = u;
        }
        self.gemini_frame(&c)
    }

    fn gemini_frame(&mut self, c: &Value) -> Vec<u8> {
        let first = self.gemini_chunks == 0;
        self.gemini_chunks += 1;
        match self.inbound {
            Inbound::Gemini { sse: true } => format!("data: {c}\r\n\r\n").into_bytes(),
            _ => format!("{}{c}", if first { "[" } else { "\n,\r\n" }).into_bytes(),
        }
    }

    fn anthropic_event(kind: &str, data: &Value) -> Vec<u8> {
        sse(Some(kind), data)
    }

    /// The opening events (sent once, before anything else).
    pub(crate) fn start(&mut self) -> Vec<u8> {
        if self.started {
            return Vec::new();
        }
        self.started = true;
        match self.inbound {
            Inbound::Chat => self.chat_chunk(
                &RoleDelta {
                    role: "assistant",
                    content: "",
                    refusal: (),
                },
                None,
            ),
            Inbound::Responses => {
                let snap = response_object(&Outcome::default(), &self.meta, Vec::new(), false);
                self.events
                    .push("response.created", json!({"response": snap}));
                self.events
                    .push("response.in_progress", json!({"response": snap}));
                self.events.take()
            }
            Inbound::Messages => Self::anthropic_event(
                "message_start",
                &json!({"type": "message_start", "message": {"id": self.meta.id, "type": "message",
                    "role": "assistant", "model": self.meta.model, "content": [], "stop_reason": null,
                    "stop_sequence": null, "usage": {"input_tokens": 0, "output_tokens": 0}}}),
            ),
            Inbound::Gemini { .. } => Vec::new(),
        }
    }

    fn close_block(&mut self) -> Vec<u8> {
        match self.open_block.take() {
            Some(i) => Self::anthropic_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": i}),
            ),
            None => Vec::new(),
        }
    }

    /// A text fragment.
    pub(crate) fn text(&mut self, s: &str) -> Vec<u8> {
        if s.is_empty() {
            return Vec::new();
        }
        let mut out = self.start();
        self.text_len += s.len();
        match self.inbound {
            Inbound::Chat => out.extend(self.chat_chunk(&TextDelta { content: s }, None)),
            Inbound::Responses => {
                let index = match self.text_item {
                    Some(i) => i,
                    None => {
                        let i = self.items.len();
                        self.items.push(Item::Text(String::new()));
                        self.text_item = Some(i);
                        let item = message_item(&self.meta, "", false, None);
                        self.events.push(
                            "response.output_item.added",
                            json!({"output_index": i, "item": item}),
                        );
                        self.events.push("response.content_part.added", json!({"item_id": item["id"], "output_index": i,
                            "content_index": 0, "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}}));
                        i
                    }
                };
                if let Some(Item::Text(t)) = self.items.get_mut(index) {
                    t.push_str(s);
                }
                self.events.push(
                    "response.output_text.delta",
                    json!({"item_id": format!("msg_{}", self.meta.id),
                    "output_index": index, "content_index": 0, "delta": s, "logprobs": []}),
                );
                out.extend(self.events.take());
            }
            Inbound::Messages => {
                let index = match self.text_item.filter(|i| self.open_block == Some(*i)) {
                    Some(i) => i,
                    None => {
                        out.extend(self.close_block());
                        let i = self.items.len();
                        self.items.push(Item::Text(String::new()));
                        self.text_item = Some(i);
                        self.open_block = Some(i);
                        out.extend(Self::anthropic_event(
                            "content_block_start",
                            &json!({"type": "content_block_start",
                            "index": i, "content_block": {"type": "text", "text": ""}}),
                        ));
                        i
                    }
                };
                out.extend(Self::anthropic_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta",
                    "index": index, "delta": {"type": "text_delta", "text": s}}),
                ));
            }
            Inbound::Gemini { .. } => {
                let c = json!({"content": {"parts": [{"text": s}], "role": "model"}, "index": 0});
                out.extend(self.gemini_chunk(c, None));
            }
        }
        out
    }

    /// Call number `self.calls_started()` begins, with its id, name and the code that made it.
    pub(crate) fn call_start(&mut self, id: &str, name: &str, caller: Option<&Caller>) -> Vec<u8> {
        let mut out = self.start();
        let k = self.calls.len();
        let index = self.items.len();
        let item_id = format!("fc_{}_{k}", self.meta.id);
        self.items.push(Item::Call {
            item_id: item_id.clone(),
            id: id.to_string(),
            name: name.to_string(),
            args: String::new(),
        });
        self.calls.push(index);
        match self.inbound {
            Inbound::Chat => out.extend(self.chat_chunk(
                &CallsDelta {
                    tool_calls: [CallStart {
                        index: k,
                        id,
                        kind: "function",
                        function: NameAndArguments {
                            name,
                            arguments: "",
                        },
                    }],
                },
                None,
            )),
            Inbound::Responses => {
                let item = call_item(&item_id, id, name, "", "in_progress");
                let item = server_items::with_caller(item, caller);
                self.events.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": item}),
                );
                out.extend(self.events.take());
            }
            Inbound::Messages => {
                out.extend(self.close_block());
                self.open_block = Some(index);
                let block = server_items::with_caller(
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    caller,
                );
                out.extend(Self::anthropic_event(
                    "content_block_start",
                    &json!({"type": "content_block_start",
                    "index": index, "content_block": block}),
                ));
            }
            Inbound::Gemini { .. } => out.extend(self.gemini_flush_started(k)),
        }
        out
    }

    /// Gemini: sends the started calls before call `upto` whole, from their own arguments
    /// (complete once a later call has started).
    fn gemini_flush_started(&mut self, upto: usize) -> Vec<u8> {
        let calls: Vec<ToolCall> = self.calls[..upto.min(self.calls.len())]
            .iter()
            .filter_map(|&i| match &self.items[i] {
                Item::Call { id, name, args, .. } => Some(ToolCall::unsigned(
                    id.clone(),
                    name.clone(),
                    serde_json::from_str(args).unwrap_or_else(|_| json!({})),
                )),
                Item::Text(_) => None,
            })
            .collect();
        self.gemini_flush(&calls, upto)
    }

    /// An argument fragment of call `k` (already started).
    pub(crate) fn call_args(&mut self, k: usize, fragment: &str) -> Vec<u8> {
        let Some(&index) = self.calls.get(k) else {
            return Vec::new();
        };
        if fragment.is_empty() {
            return Vec::new();
        }
        // Borrowed, not cloned: only the Responses event names the item.
        let item_id = match &mut self.items[index] {
            Item::Call { args, item_id, .. } => {
                args.push_str(fragment);
                &*item_id
            }
            Item::Text(_) => return Vec::new(),
        };
        match self.inbound {
            Inbound::Chat => self.chat_chunk(
                &CallsDelta {
                    tool_calls: [CallArguments {
                        index: k,
                        function: Arguments {
                            arguments: fragment,
                        },
                    }],
                },
                None,
            ),
            Inbound::Responses => {
                self.events.push(
                    "response.function_call_arguments.delta",
                    json!({"item_id": item_id, "output_index": index, "delta": fragment}),
                );
                self.events.take()
            }
            Inbound::Messages => Self::anthropic_event(
                "content_block_delta",
                &json!({"type": "content_block_delta",
                "index": index, "delta": {"type": "input_json_delta", "partial_json": fragment}}),
            ),
            Inbound::Gemini { .. } => Vec::new(),
        }
    }

    /// Gemini: sends calls `gemini_sent..upto` whole (their arguments must be complete).
    pub(crate) fn gemini_flush(&mut self, calls: &[ToolCall], upto: usize) -> Vec<u8> {
        let mut out = Vec::new();
        if !matches!(self.inbound, Inbound::Gemini { .. }) {
            return out;
        }
        while self.gemini_sent < upto.min(calls.len()) {
            let part = gemini_call_part(&calls[self.gemini_sent]);
            self.gemini_sent += 1;
            let c = json!({"content": {"parts": [part], "role": "model"}, "index": 0});
            out.extend(self.gemini_chunk(c, None));
        }
        out
    }

    /// Adds what the outcome holds beyond what was streamed, closes what is open, and ends the
    /// stream with the mapped finish and usage.
    pub(crate) fn finish(&mut self, o: &Outcome) -> Vec<u8> {
        let mut out = self.start();
        if let Some(t) = o.text.as_deref()
            && let Some(rest) = t.get(self.text_len..)
        {
            let rest = rest.to_string();
            out.extend(self.text(&rest));
        }
        for c in o.tool_calls.iter().skip(self.calls.len()) {
            out.extend(self.call_start(&c.id, &c.name, c.caller.as_ref()));
            let k = self.calls.len() - 1;
            out.extend(self.call_args(k, &args_text(c)));
        }
        // The cut call goes last, as in a buffered answer (usually its fragments already went
        // out); Gemini sends calls whole and never sends a cut one.
        let cut_call = o.truncated_call.as_ref().map(|_| o.tool_calls.len());
        if let Some(cut) = &o.truncated_call
            && self.calls.len() == o.tool_calls.len()
            && !matches!(self.inbound, Inbound::Gemini { .. })
        {
            out.extend(self.call_start(&cut.id, &cut.name, None));
            let k = self.calls.len() - 1;
            out.extend(self.call_args(k, &cut.arguments));
        }
        let cut_item = cut_call.and_then(|k| self.calls.get(k).copied());
        match self.inbound {
            Inbound::Chat => out.extend(self.chat_end(o)),
            Inbound::Responses => out.extend(self.responses_end(o, cut_item)),
            Inbound::Messages => out.extend(self.messages_end(o)),
            Inbound::Gemini { sse: is_sse } => out.extend(self.gemini_end(o, is_sse)),
        }
        out
    }

    /// Chat's end: a model server's reasoning text (one delta; the stream relayed its text and
    /// calls), the finish chunk, the usage chunk when asked for, then `[DONE]`.
    fn chat_end(&mut self, o: &Outcome) -> Vec<u8> {
        let mut out = Vec::new();
        let mut reasoning = serde_json::Map::new();
        if crate::providers::openai_chat::reasoning::write(&mut reasoning, &o.opaque) > 0 {
            out.extend(self.chat_chunk(&reasoning, None));
        }
        let finish = finish_value(Inbound::Chat, o.finish);
        out.extend(self.chat_chunk(&EmptyDelta {}, Some(finish)));
        if self.meta.usage_chunk {
            let usage = json!({"id": self.meta.id, "object": "chat.completion.chunk", "created": self.meta.created,
                "model": self.meta.model, "choices": [], "usage": chat_usage(o.usage.as_ref())});
            out.extend(sse(None, &usage));
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
        out
    }

    /// Responses' end: each item's `.done` events (`cut_item` incomplete), then the terminal
    /// response.
    fn responses_end(&mut self, o: &Outcome, cut_item: Option<usize>) -> Vec<u8> {
        let mut out = Vec::new();
        let mut output = Vec::new();
        let mut call = 0;
        for (index, item) in self.items.iter().enumerate() {
            match item {
                Item::Text(t) => {
                    let done = message_item(&self.meta, t, true, o.phase);
                    let at =
                        json!({"item_id": done["id"], "output_index": index, "content_index": 0});
                    let mut ev = at.clone();
                    ev["text"] = json!(t);
                    ev["logprobs"] = json!([]);
                    self.events.push("response.output_text.done", ev);
                    let mut ev = at;
                    ev["part"] = done["content"][0].clone();
                    self.events.push("response.content_part.done", ev);
                    self.events.push(
                        "response.output_item.done",
                        json!({"output_index": index, "item": done}),
                    );
                    output.push(done);
                }
                Item::Call {
                    item_id,
                    id,
                    name,
                    args,
                } => {
                    self.events.push("response.function_call_arguments.done",
                        json!({"item_id": item_id, "output_index": index, "name": name, "arguments": args}));
                    let status = if cut_item == Some(index) {
                        "incomplete"
                    } else {
                        "completed"
                    };
                    let made = o.tool_calls.get(call);
                    call += 1;
                    let done = server_items::with_namespace(
                        call_item(item_id, id, name, args, status),
                        made.and_then(|c| c.namespace.as_deref()),
                    );
                    let done =
                        server_items::with_caller(done, made.and_then(|c| c.caller.as_ref()));
                    self.events.push(
                        "response.output_item.done",
                        json!({"output_index": index, "item": done}),
                    );
                    output.push(done);
                }
            }
        }
        // The tool search the upstream ran, whole, after what was streamed (the stream decoders
        // report it at the end).
        for item in server_items::responses_items(o, &self.meta) {
            let index = output.len();
            for kind in ["response.output_item.added", "response.output_item.done"] {
                (self.events).push(kind, json!({"output_index": index, "item": item}));
            }
            output.push(item);
        }
        let snap = response_object(o, &self.meta, output, true);
        let kind = if snap["status"] == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        self.events.push(kind, json!({"response": snap}));
        out.extend(self.events.take());
        out
    }

    /// Messages' end: the open block closed, the finished-calls marker block when the last item
    /// is a call, then `message_delta` with the stop reason and usage, and `message_stop`.
    fn messages_end(&mut self, o: &Outcome) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.close_block());
        // The tool search the upstream ran, as whole blocks after what was streamed.
        for block in server_items::anthropic_blocks(o, &self.meta) {
            let i = self.items.len();
            self.items.push(Item::Text(String::new()));
            out.extend(Self::anthropic_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": i, "content_block": block}),
            ));
            out.extend(Self::anthropic_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": i}),
            ));
        }
        if let Some(marker) = finished_calls_marker(o)
            && matches!(self.items.last(), Some(Item::Call { .. }))
        {
            let i = self.items.len();
            self.items.push(Item::Text(String::new()));
            out.extend(Self::anthropic_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": i, "content_block": marker}),
            ));
            out.extend(Self::anthropic_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": i}),
            ));
        }
        let output_tokens = o.usage.as_ref().and_then(|u| u.output_tokens).unwrap_or(0);
        let input_tokens = o.usage.as_ref().and_then(|u| u.input_tokens).unwrap_or(0);
        let mut delta = json!({"stop_reason": finish_value(Inbound::Messages, o.finish), "stop_sequence": null});
        if let Some(c) = &o.container {
            delta["container"] = server_items::container(c);
        }
        out.extend(Self::anthropic_event(
            "message_delta",
            &json!({"type": "message_delta",
            "delta": delta,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}),
        ));
        out.extend(Self::anthropic_event(
            "message_stop",
            &json!({"type": "message_stop"}),
        ));
        out
    }

    /// Gemini's end: the calls not yet sent, the finish chunk with usage, and the array's `]`
    /// when the stream is not SSE.
    fn gemini_end(&mut self, o: &Outcome, is_sse: bool) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.gemini_flush(&o.tool_calls, o.tool_calls.len()));
        let c = json!({"content": {"parts": [], "role": "model"},
                       "finishReason": finish_value(self.inbound, o.finish), "index": 0});
        out.extend(self.gemini_chunk(c, Some(gemini_usage(o.usage.as_ref()))));
        if !is_sse {
            out.push(b']');
        }
        out
    }

    /// An error after the stream started: the format's in-stream error event, then its end.
    pub(crate) fn error(&mut self, e: &ProviderError) -> Vec<u8> {
        let env = Envelope {
            status: e.status,
            message: &e.message,
            code: e.code.as_deref(),
            kind: e.kind.as_deref(),
            ..Envelope::default()
        };
        match self.inbound {
            Inbound::Chat => {
                let mut out = sse(None, &envelope(self.inbound.family(), &env));
                out.extend_from_slice(b"data: [DONE]\n\n");
                out
            }
            Inbound::Responses => {
                let body = envelope(self.inbound.family(), &env);
                let err = &body["error"];
                self.events.push(
                    "error",
                    json!({"code": err["code"], "message": err["message"], "param": null}),
                );
                self.events.take()
            }
            Inbound::Messages => {
                let mut out = self.close_block();
                out.extend(Self::anthropic_event(
                    "error",
                    &envelope(self.inbound.family(), &env),
                ));
                out
            }
            Inbound::Gemini { sse: is_sse } => {
                let body = envelope(self.inbound.family(), &env);
                let mut out = self.gemini_frame(&body);
                if !is_sse {
                    out.push(b']');
                }
                out
            }
        }
    }
}
