//! Buffered answers: a neutral outcome as a Chat `chat.completion`, a Responses `response`, an
//! Anthropic `message` or a Gemini `GenerateContentResponse`.
//!
//! A call the output-token limit cut (`Outcome::truncated_call`) is written as the last call in
//! each format's own way, because a length finish says, in every format, that the last call was
//! the one being written: Chat a `tool_calls` entry with the partial text, Responses a
//! `function_call` item with `status: "incomplete"`, Anthropic the last `tool_use` block, and
//! Gemini nothing (it sends calls whole and drops a cut one).

use serde_json::{Value, json};

use super::format::{Inbound, Meta, finish_value};
use super::server_items;
use crate::model::{Finish, Outcome, Phase, ToolCall, Usage};

/// The whole answer body for `outcome` (its `error`, when set, is the caller's to answer).
pub(crate) fn body(inbound: Inbound, outcome: &Outcome, meta: &Meta) -> Value {
    match inbound {
        Inbound::Chat => chat(outcome, meta),
        Inbound::Responses => responses(
            outcome,
            meta,
            &call_item_ids(
                meta,
                outcome.tool_calls.len() + usize::from(outcome.truncated_call.is_some()),
            ),
        ),
        Inbound::Messages => anthropic(outcome, meta),
        Inbound::Gemini { .. } => gemini(outcome, meta),
    }
}

pub(super) fn args_text(call: &ToolCall) -> String {
    call.arguments.to_string()
}

pub(super) fn call_item_ids(meta: &Meta, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("fc_{}_{i}", meta.id)).collect()
}

fn tokens(u: Option<&Usage>) -> (u64, u64) {
    let u = u.cloned().unwrap_or_default();
    (u.input_tokens.unwrap_or(0), u.output_tokens.unwrap_or(0))
}

pub(super) fn chat_usage(u: Option<&Usage>) -> Value {
    let (i, o) = tokens(u);
    json!({"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o})
}

pub(super) fn responses_usage(u: Option<&Usage>) -> Value {
    let (i, o) = tokens(u);
    json!({"input_tokens": i, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": o,
           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": i + o})
}

pub(super) fn gemini_usage(u: Option<&Usage>) -> Value {
    let (i, o) = tokens(u);
    json!({"promptTokenCount": i, "candidatesTokenCount": o, "totalTokenCount": i + o})
}

/// A Chat `tool_calls` entry.
pub(super) fn chat_call(id: &str, name: &str, args: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
}

fn chat(o: &Outcome, meta: &Meta) -> Value {
    let mut message = json!({"role": "assistant", "content": o.text, "refusal": null});
    let mut calls: Vec<Value> = o
        .tool_calls
        .iter()
        .map(|c| chat_call(&c.id, &c.name, &args_text(c)))
        .collect();
    // The cut call last, its arguments the partial text: under `length` a Chat client withdraws
    // a last call whose arguments do not parse.
    if let Some(cut) = &o.truncated_call {
        calls.push(chat_call(&cut.id, &cut.name, &cut.arguments));
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    if let Some(m) = message.as_object_mut() {
        crate::providers::openai_chat::reasoning::write(m, &o.opaque);
    }
    json!({
        "id": meta.id, "object": "chat.completion", "created": meta.created, "model": meta.model,
        "choices": [{"index": 0, "message": message, "logprobs": null,
                     "finish_reason": finish_value(Inbound::Chat, o.finish)}],
        "usage": chat_usage(o.usage.as_ref()),
    })
}

/// A Responses `response` object; `output` given (the stream writer passes what it streamed).
pub(super) fn response_object(o: &Outcome, meta: &Meta, output: Vec<Value>, done: bool) -> Value {
    let status = if done {
        finish_value(Inbound::Responses, o.finish)
    } else {
        "in_progress"
    };
    // Responses says why an answer is incomplete: the output-token limit or the content filter.
    let incomplete = (status == "incomplete").then(|| {
        let reason = if o.finish == Finish::ContentFilter {
            "content_filter"
        } else {
            "max_output_tokens"
        };
        json!({"reason": reason})
    });
    let mut r = json!({
        "id": meta.id, "object": "response", "created_at": meta.created, "status": status,
        "error": null, "incomplete_details": incomplete, "instructions": null, "model": meta.model,
        "output": null, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "text": {"format": {"type": "text"}}, "metadata": {},
        "usage": if done { responses_usage(o.usage.as_ref()) } else { Value::Null },
    });
    r["output"] = Value::Array(output);
    r
}

/// A Responses assistant `message` item, with the answer's `phase` when it had one (class 32).
pub(super) fn message_item(meta: &Meta, text: &str, done: bool, phase: Option<Phase>) -> Value {
    let mut item = json!({"id": format!("msg_{}", meta.id), "type": "message", "status": if done { "completed" } else { "in_progress" },
           "role": "assistant",
           "content": if done { json!([{"type": "output_text", "annotations": [], "logprobs": [], "text": text}]) } else { json!([]) }});
    if let Some(p) = phase {
        item["phase"] = json!(p.wire());
    }
    item
}

/// A Responses `function_call` item; `status` is `in_progress`, `completed` or `incomplete`
/// (a call the output-token limit cut).
pub(super) fn call_item(
    item_id: &str,
    call_id: &str,
    name: &str,
    args: &str,
    status: &str,
) -> Value {
    json!({"id": item_id, "type": "function_call", "status": status,
           "arguments": args, "call_id": call_id, "name": name})
}

fn responses(o: &Outcome, meta: &Meta, item_ids: &[String]) -> Value {
    let mut output = server_items::responses_items(o, meta);
    if let Some(t) = &o.text {
        output.push(message_item(meta, t, true, o.phase));
    }
    for (c, item_id) in o.tool_calls.iter().zip(item_ids) {
        let item = call_item(item_id, &c.id, &c.name, &args_text(c), "completed");
        let item = server_items::with_namespace(item, c.namespace.as_deref());
        output.push(server_items::with_caller(item, c.caller.as_ref()));
    }
    if let (Some(cut), Some(item_id)) = (&o.truncated_call, item_ids.get(o.tool_calls.len())) {
        output.push(call_item(
            item_id,
            &cut.id,
            &cut.name,
            &cut.arguments,
            "incomplete",
        ));
    }
    response_object(o, meta, output, true)
}

fn anthropic(o: &Outcome, meta: &Meta) -> Value {
    let mut content = server_items::anthropic_blocks(o, meta);
    if let Some(t) = &o.text {
        content.push(json!({"type": "text", "text": t}));
    }
    for c in &o.tool_calls {
        let block = json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments});
        content.push(server_items::with_caller(block, c.caller.as_ref()));
    }
    match &o.truncated_call {
        // The cut call is the last `tool_use` block. `input` must be an object and the partial
        // text is not one: an object parsed from a prefix would present invented-complete
        // arguments, so `input` is `{}`, as the API itself sends an object for a block the limit
        // cut (providers.md §3.5: with `max_tokens` a trailing `tool_use` may be incomplete).
        // `stop_reason: max_tokens` with this block last is what says it is cut.
        Some(cut) => content.push(json!({"type": "tool_use", "id": cut.id, "name": cut.name,
                                         "input": cut_input(&cut.arguments)})),
        None => content.extend(finished_calls_marker(o)),
    }
    let (i, out) = tokens(o.usage.as_ref());
    let mut body = json!({
        "id": meta.id, "type": "message", "role": "assistant", "model": meta.model,
        "content": content, "stop_reason": finish_value(Inbound::Messages, o.finish),
        "stop_sequence": null, "usage": {"input_tokens": i, "output_tokens": out},
    });
    // The container the programmatic calls run in: the client names it to continue them.
    if let Some(c) = &o.container {
        body["container"] = server_items::container(c);
    }
    body
}

/// A cut call's `input`: its text when that is a whole object (a format that sent the call
/// finished), else `{}`.
fn cut_input(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

/// Under `max_tokens` an Anthropic client withdraws a `tool_use` block that comes last. When
/// the limit cut the turn but every call is finished (a Gemini `MAX_TOKENS` answer: Gemini
/// sends calls whole), an empty text block after them says the model was writing something
/// else when the limit hit, so the finished calls are not read as cut.
pub(super) fn finished_calls_marker(o: &Outcome) -> Option<Value> {
    (o.finish == Finish::Length && !o.tool_calls.is_empty() && o.truncated_call.is_none())
        .then(|| json!({"type": "text", "text": ""}))
}

pub(super) fn gemini_call_part(c: &ToolCall) -> Value {
    let mut p = json!({"functionCall": {"name": c.name, "args": c.arguments}});
    if let Some(sig) = &c.thought_signature {
        p["thoughtSignature"] = json!(sig);
    }
    p
}

/// A call the limit cut is not written: Gemini sends every `functionCall` whole (providers.md
/// §4.6), so a `MAX_TOKENS` answer holds the finished calls only, and a Gemini client keeps them.
fn gemini(o: &Outcome, meta: &Meta) -> Value {
    let mut parts = Vec::new();
    if let Some(t) = &o.text {
        parts.push(json!({"text": t}));
    }
    parts.extend(o.tool_calls.iter().map(gemini_call_part));
    json!({
        "candidates": [{"content": {"parts": parts, "role": "model"},
                        "finishReason": finish_value(Inbound::Gemini { sse: false }, o.finish), "index": 0}],
        "usageMetadata": gemini_usage(o.usage.as_ref()), "modelVersion": meta.model,
        "responseId": meta.id,
    })
}
