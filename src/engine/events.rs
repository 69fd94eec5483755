//! The shape of a raw stream, read from its bytes rather than its decoded outcome: per tool
//! call its slot (index or output index), its id and name on its first delta, how many argument
//! fragments arrived and whether they came before the finish; finish signals and the terminal
//! event. Both ends of the gateway are read with it, so "as upstream sent them" is measurable.

use serde_json::Value;

use crate::model::Provider;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct CallShape {
    /// `index` (Chat), `index` of the content block (Messages), `output_index` (Responses),
    /// position (Gemini).
    pub slot: u64,
    pub id: Option<String>,
    pub name: Option<String>,
    /// The first delta for this slot carried an id and a name.
    pub opened_with_identity: bool,
    /// A later delta at this slot named a different tool without an id of its own (a second
    /// call merged into it).
    pub reused_by: Option<String>,
    /// This call opened at a slot an earlier call had, told apart only by its own id (Chat
    /// streams of some servers put every parallel call at index 0).
    pub shared: bool,
    pub fragments: usize,
    /// Argument fragments that arrived before the event carrying the finish.
    pub fragments_before_finish: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct StreamRead {
    pub events: usize,
    pub calls: Vec<CallShape>,
    pub finishes: usize,
    /// Terminal events that end the stream as failed (Responses `response.failed`): the
    /// documented end of a stream after an error, never a finish.
    pub failures: usize,
    pub terminal: bool,
    /// Data that is not JSON, or an error event.
    pub problems: Vec<String>,
    /// Chat only: how usage was framed, in stream order (`stream_options.include_usage`).
    pub usage_chunks: Vec<UsageChunk>,
}

/// A Chat chunk carrying a `usage` object, or carrying no choice at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct UsageChunk {
    /// Its `choices` array is empty (the documented usage chunk).
    pub no_choices: bool,
    /// It carries a non-null `usage`.
    pub usage: bool,
    /// A finish reason came in an earlier chunk (or this one).
    pub after_finish: bool,
}

impl StreamRead {
    /// The latest call at `slot`.
    fn slot(&mut self, slot: u64) -> Option<&mut CallShape> {
        self.calls.iter_mut().rev().find(|c| c.slot == slot)
    }

    fn open(&mut self, slot: u64, id: Option<String>, name: Option<String>) {
        // An empty id or name (`"id": null`, `"name": ""` on a continuation delta) names no
        // other call: a client appending it keeps the call it has.
        let id = id.filter(|s| !s.is_empty());
        let name = name.filter(|s| !s.is_empty());
        let identity = id.as_deref().is_some_and(|s| !s.is_empty())
            && name.as_deref().is_some_and(|s| !s.is_empty());
        let mut shared = false;
        if let Some(existing) = self.slot(slot) {
            let other_id = id.is_some() && existing.id.is_some() && id != existing.id;
            let other_name = name.is_some() && existing.name.is_some() && name != existing.name;
            if !other_id {
                if other_name && existing.reused_by.is_none() {
                    existing.reused_by = Some(format!(
                        "{} {}",
                        id.as_deref().unwrap_or("?"),
                        name.as_deref().unwrap_or("?")
                    ));
                }
                return;
            }
            // Another call at the same slot, told apart by its id: a call of its own.
            shared = true;
        }
        self.calls.push(CallShape {
            slot,
            id,
            name,
            opened_with_identity: identity,
            shared,
            ..CallShape::default()
        });
    }

    fn fragment(&mut self, slot: u64, finished: bool) {
        if self.slot(slot).is_none() {
            self.open(slot, None, None);
        }
        if let Some(c) = self.slot(slot) {
            c.fragments += 1;
            if !finished {
                c.fragments_before_finish += 1;
            }
        }
    }
}

/// The JSON data of each event (SSE `data:` lines; Gemini's JSON array elements).
fn payloads(provider: Provider, body: &[u8], problems: &mut Vec<String>) -> (Vec<Value>, bool) {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim_start();
    if provider == Provider::Gemini && trimmed.starts_with('[') {
        return match serde_json::from_str::<Vec<Value>>(trimmed) {
            Ok(v) => (v, false),
            Err(e) => {
                problems.push(format!("stream is not a JSON array: {e}"));
                (Vec::new(), false)
            }
        };
    }
    let mut out = Vec::new();
    let mut done = false;
    for ev in crate::sse::split_events(&text) {
        let data: Vec<&str> = ev
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        let joined = data.join("\n");
        if joined.trim() == "[DONE]" {
            done = true;
            continue;
        }
        match serde_json::from_str(&joined) {
            Ok(v) => out.push(v),
            Err(e) => problems.push(format!("event data is not JSON ({e}): {}", clip(&joined))),
        }
    }
    (out, done)
}

fn clip(s: &str) -> String {
    s.chars().take(120).collect()
}

fn str_of(v: &Value, p: &str) -> Option<String> {
    v.pointer(p).and_then(Value::as_str).map(str::to_string)
}

/// Reads the stream `body` of `provider`'s format.
pub(super) fn shape(provider: Provider, body: &[u8]) -> StreamRead {
    let mut shape = StreamRead::default();
    let mut problems = Vec::new();
    let (events, done) = payloads(provider, body, &mut problems);
    shape.problems = problems;
    shape.events = events.len();
    match provider {
        Provider::OpenaiChat | Provider::TextProtocol => {
            shape.terminal = done;
            chat(&mut shape, &events);
        }
        Provider::Anthropic => anthropic(&mut shape, &events),
        Provider::OpenaiResponses => responses(&mut shape, &events),
        Provider::Gemini => gemini(&mut shape, &events),
    }
    shape
}

/// Chat Completions chunks: tool-call deltas by index, finish reasons, error chunks.
fn chat(shape: &mut StreamRead, events: &[Value]) {
    for ev in events {
        if ev.get("error").is_some() {
            shape
                .problems
                .push(format!("error event: {}", clip(&ev.to_string())));
        }
        let choices = ev.get("choices").and_then(Value::as_array);
        let usage = ev.get("usage").is_some_and(|u| !u.is_null());
        let no_choices = choices.is_none_or(|c| c.is_empty());
        if usage || (no_choices && ev.get("error").is_none()) {
            shape.usage_chunks.push(UsageChunk {
                no_choices,
                usage,
                after_finish: shape.finishes > 0
                    || choices
                        .into_iter()
                        .flatten()
                        .any(|c| c.get("finish_reason").is_some_and(|f| !f.is_null())),
            });
        }
        for choice in choices.into_iter().flatten() {
            let finished = choice.get("finish_reason").is_some_and(|f| !f.is_null());
            for tc in choice
                .pointer("/delta/tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let slot = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
                let id = str_of(tc, "/id");
                let name = str_of(tc, "/function/name");
                shape.open(slot, id, name);
                if tc
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .is_some_and(|a| !a.is_empty())
                {
                    shape.fragment(slot, finished);
                }
            }
            if finished {
                shape.finishes += 1;
            }
        }
    }
}

/// Anthropic events: `tool_use` blocks, their `input_json_delta`s, the stop and `message_stop`.
fn anthropic(shape: &mut StreamRead, events: &[Value]) {
    for ev in events {
        match ev.get("type").and_then(Value::as_str) {
            Some("content_block_start")
                if ev.pointer("/content_block/type").and_then(Value::as_str)
                    == Some("tool_use") =>
            {
                let slot = ev.get("index").and_then(Value::as_u64).unwrap_or(0);
                shape.open(
                    slot,
                    str_of(ev, "/content_block/id"),
                    str_of(ev, "/content_block/name"),
                );
            }
            Some("content_block_delta")
                if ev.pointer("/delta/type").and_then(Value::as_str)
                    == Some("input_json_delta") =>
            {
                let slot = ev.get("index").and_then(Value::as_u64).unwrap_or(0);
                // Only client tool_use blocks (server_tool_use input is the provider's own).
                if shape.calls.iter().any(|c| c.slot == slot)
                    && ev
                        .pointer("/delta/partial_json")
                        .and_then(Value::as_str)
                        .is_some_and(|a| !a.is_empty())
                {
                    shape.fragment(slot, shape.finishes > 0);
                }
            }
            Some("message_delta")
                if ev
                    .pointer("/delta/stop_reason")
                    .is_some_and(|v| !v.is_null()) =>
            {
                shape.finishes += 1
            }
            Some("message_stop") => shape.terminal = true,
            Some("error") => shape
                .problems
                .push(format!("error event: {}", clip(&ev.to_string()))),
            _ => {}
        }
    }
}

/// Responses events: `function_call` items, argument deltas, the terminal response event.
fn responses(shape: &mut StreamRead, events: &[Value]) {
    for ev in events {
        match ev.get("type").and_then(Value::as_str) {
            Some("response.output_item.added")
                if ev.pointer("/item/type").and_then(Value::as_str) == Some("function_call") =>
            {
                let slot = ev.get("output_index").and_then(Value::as_u64).unwrap_or(0);
                shape.open(slot, str_of(ev, "/item/call_id"), str_of(ev, "/item/name"));
            }
            Some("response.function_call_arguments.delta") => {
                let slot = ev.get("output_index").and_then(Value::as_u64).unwrap_or(0);
                if ev
                    .get("delta")
                    .and_then(Value::as_str)
                    .is_some_and(|a| !a.is_empty())
                {
                    shape.fragment(slot, shape.finishes > 0);
                }
            }
            Some("response.completed" | "response.incomplete") => {
                shape.finishes += 1;
                shape.terminal = true;
            }
            Some("response.failed") => {
                shape.failures += 1;
                shape.terminal = true;
            }
            Some("error") => shape
                .problems
                .push(format!("error event: {}", clip(&ev.to_string()))),
            _ => {}
        }
    }
}

/// Gemini chunks: each `functionCall` part whole, finish reasons, error elements.
fn gemini(shape: &mut StreamRead, events: &[Value]) {
    let mut n = 0u64;
    for ev in events {
        let finished = ev
            .pointer("/candidates/0/finishReason")
            .is_some_and(|v| !v.is_null());
        for p in ev
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(fc) = p.get("functionCall") {
                shape.open(
                    n,
                    str_of(fc, "/id").or_else(|| Some(format!("#{n}"))),
                    str_of(fc, "/name"),
                );
                shape.fragment(n, false);
                n += 1;
            }
        }
        if finished {
            shape.finishes += 1;
        }
        if ev.get("error").is_some() {
            shape
                .problems
                .push(format!("error event: {}", clip(&ev.to_string())));
        }
    }
    // Gemini has no terminal event: the stream's end is the body's end.
    shape.terminal = true;
}
