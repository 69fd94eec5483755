//! OpenAI Chat Completions (`POST /v1/chat/completions`): request reading and checks, buffered
//! `chat.completion` bodies and `chat.completion.chunk` streams ending in `data: [DONE]`.

use serde_json::{Value, json};

use super::decide::{Ask, FnTool, Turn, WireShape};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::wire;
use crate::model::{AllowedMode, Provider, ToolChoice, empty_parameters};
use crate::scenario::{ModelServer, StreamFault, StreamShape};
use crate::text::json_kind;

/// `model` as OpenAI requires it.
pub(crate) fn require_model(body: &Value) -> Result<&str, Rejection> {
    match body.get("model").and_then(Value::as_str) {
        Some(m) if !m.is_empty() => Ok(m),
        _ => Err(Rejection::bad_request("you must provide a model parameter")),
    }
}

/// `tools` must be an array when present.
pub(crate) fn tools_array(body: &Value) -> Result<&[Value], Rejection> {
    match body.get("tools") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(Rejection::bad_request(format!(
            "Invalid type for 'tools': expected an array, but got {} instead.",
            json_kind(other)
        ))
        .param("tools")
        .code("invalid_type")),
    }
}

/// `tool_choice` / `parallel_tool_calls` are only allowed with tools (the messages from §1.3).
pub(crate) fn check_needs_tools(body: &Value, has_tools: bool) -> Result<(), Rejection> {
    if has_tools {
        return Ok(());
    }
    for field in ["tool_choice", "parallel_tool_calls"] {
        if body.get(field).is_some_and(|v| !v.is_null()) {
            return Err(Rejection::bad_request(format!(
                "Invalid value for '{field}': '{field}' is only allowed when 'tools' are specified."
            ))
            .param(field));
        }
    }
    Ok(())
}

/// A function name inside a choice object: `{"function":{"name"}}` (Chat) or `{"name"}` (Responses).
fn choice_name(v: &Value, flat: bool) -> Option<&str> {
    if flat {
        v.get("name").and_then(Value::as_str)
    } else {
        v.pointer("/function/name").and_then(Value::as_str)
    }
}

fn unknown_tool(name: &str) -> Rejection {
    Rejection::bad_request(format!(
        "Invalid 'tool_choice': function '{name}' was not found in 'tools'."
    ))
    .param("tool_choice")
}

/// OpenAI `tool_choice` (Chat nests names under `function`, Responses is `flat`).
pub(crate) fn parse_choice(raw: &Value, flat: bool, ask: &Ask) -> Result<ToolChoice, Rejection> {
    let invalid = || {
        Rejection::bad_request(format!(
            "Invalid value: {}. Supported values are: 'none', 'auto', and 'required'.",
            wire::compact(raw)
        ))
        .param("tool_choice")
        .code("invalid_value")
    };
    match raw {
        Value::Null => Ok(ToolChoice::Auto),
        Value::String(s) => match s.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            _ => Err(invalid()),
        },
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("function") => {
                let name = choice_name(raw, flat).ok_or_else(invalid)?;
                if !ask.has_tool(name) {
                    return Err(unknown_tool(name));
                }
                Ok(ToolChoice::Forced(name.to_string()))
            }
            Some("allowed_tools") => {
                let spec = if flat { raw } else { &raw["allowed_tools"] };
                let mode = match spec.get("mode").and_then(Value::as_str) {
                    Some("required") => AllowedMode::Required,
                    Some("auto") => AllowedMode::Auto,
                    _ => return Err(invalid()),
                };
                let mut tools = Vec::new();
                for t in spec
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if t.get("type").and_then(Value::as_str) != Some("function") {
                        continue; // hosted entries do not name function tools
                    }
                    let name = choice_name(t, flat).ok_or_else(invalid)?;
                    if !ask.has_tool(name) {
                        return Err(unknown_tool(name));
                    }
                    tools.push(name.to_string());
                }
                Ok(ToolChoice::Allowed { mode, tools })
            }
            // A hosted tool type (Responses): the model must use that hosted tool.
            Some(t)
                if flat
                    && (ask.hosted_types.iter().any(|h| h == t)
                        || t.starts_with("web_search") && ask.search.is_some()) =>
            {
                Ok(ToolChoice::Required)
            }
            Some(t) if flat => Err(Rejection::bad_request(format!(
                "Tool choice '{t}' not found in 'tools' parameter."
            ))
            .param("tool_choice")),
            _ => Err(invalid()),
        },
        _ => Err(invalid()),
    }
}

/// A message's `role` ("" when it has none).
pub(crate) fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("")
}

/// The text of `field` of each of the last `items` that are results, in order.
pub(crate) fn trailing_results(
    items: &[Value],
    is_result: impl Fn(&Value) -> bool,
    field: &str,
) -> Vec<String> {
    let mut out: Vec<String> = items
        .iter()
        .rev()
        .take_while(|m| is_result(m))
        .map(|m| content_text(m.get(field).unwrap_or(&Value::Null)))
        .collect();
    out.reverse();
    out
}

/// Text of a message `content`: a string or an array of text parts.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Value::Null => String::new(),
        other => wire::compact(other),
    }
}

pub(crate) fn parse(body: &Value) -> Result<Ask, Rejection> {
    let model = require_model(body)?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(
            Rejection::bad_request("Missing required parameter: 'messages'.")
                .param("messages")
                .code("missing_required_parameter"),
        );
    };
    let mut ask = Ask::new(model);
    ask.stream = body.get("stream") == Some(&Value::Bool(true));
    for (i, t) in tools_array(body)?.iter().enumerate() {
        if t.get("type").and_then(Value::as_str) != Some("function") {
            continue; // custom (free-text) tools are not simulated
        }
        let Some(name) = t.pointer("/function/name").and_then(Value::as_str) else {
            return Err(Rejection::bad_request(format!(
                "Missing required parameter: 'tools[{i}].function.name'."
            ))
            .param(&format!("tools[{i}].function.name"))
            .code("missing_required_parameter"));
        };
        let schema = t
            .pointer("/function/parameters")
            .cloned()
            .unwrap_or_else(empty_parameters);
        ask.tools.push(FnTool {
            name: name.to_string(),
            schema,
            strict: t.pointer("/function/strict") == Some(&Value::Bool(true)),
        });
    }
    check_needs_tools(body, !ask.tools.is_empty())?;
    ask.raw_choice = body.get("tool_choice").cloned().unwrap_or(Value::Null);
    ask.choice = parse_choice(&ask.raw_choice, false, &ask)?;
    ask.parallel = body.get("parallel_tool_calls") != Some(&Value::Bool(false));
    ask.set_tool_results(trailing_results(messages, |m| role(m) == "tool", "content"));
    ask.rounds_done = runs(messages.iter().map(|m| role(m) == "tool"));
    if let Some(u) = messages.iter().rev().find(|m| role(m) == "user") {
        ask.user_text = content_text(u.get("content").unwrap_or(&Value::Null));
    }
    Ok(ask)
}

/// How many runs of consecutive `true` the sequence holds (rounds of tool results).
pub(crate) fn runs(flags: impl Iterator<Item = bool>) -> usize {
    let mut count = 0;
    let mut inside = false;
    for f in flags {
        if f && !inside {
            count += 1;
        }
        inside = f;
    }
    count
}

/// A Chat answer, however it was decided (the text protocol writes content only).
pub(crate) struct ChatOut {
    pub content: Option<String>,
    /// `(id, name, arguments JSON string)`.
    pub calls: Vec<(String, String, String)>,
    pub finish: &'static str,
    pub refusal: Option<String>,
    /// A model server's reasoning text: `(field, text)`, written before the content.
    pub reasoning: Option<(&'static str, String)>,
    pub wire: WireShape,
}

pub(crate) fn render(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) -> SimResponse {
    let last = turn.calls.len().saturating_sub(1);
    let server = turn.wire.server;
    let ids = super::decide::call_ids(Provider::OpenaiChat, &turn.calls, |i| {
        Some(match server {
            None => wire::id("call_", ctx.seed, "call", i, 24),
            Some(ModelServer::Vllm) => wire::id("chatcmpl-tool-", ctx.seed, "call", i, 32),
            Some(ModelServer::LlamaCpp) => wire::id("", ctx.seed, "call", i, 32),
        })
    });
    let calls: Vec<(String, String, String)> = turn
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let args = c.arguments_json();
            let args = if turn.wire.cut_last_call && i == last {
                wire::half(&args).to_string()
            } else {
                args
            };
            (ids[i].clone().unwrap_or_default(), c.name.clone(), args)
        })
        .collect();
    let finish = if turn.wire.refusal.is_some() {
        "content_filter"
    } else if turn.wire.cut_last_call {
        "length"
    } else if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let out = ChatOut {
        content: turn.has_text().then(|| turn.text()),
        finish,
        calls,
        refusal: turn.wire.refusal.clone(),
        reasoning: server
            .zip(turn.wire.reasoning.clone())
            .map(|(s, r)| (s.reasoning_field(), r)),
        wire: turn.wire.clone(),
    };
    render_out(ctx, ask, &out)
}

fn usage(ctx: &Ctx<'_>, out: &ChatOut) -> Value {
    let written = out.content.as_ref().map_or(0, String::len)
        + out
            .calls
            .iter()
            .map(|c| c.1.len() + c.2.len())
            .sum::<usize>();
    let completion = wire::tokens(written);
    json!({"prompt_tokens": ctx.input_tokens, "completion_tokens": completion,
           "total_tokens": ctx.input_tokens + completion})
}

pub(crate) fn render_out(ctx: &Ctx<'_>, ask: &Ask, out: &ChatOut) -> SimResponse {
    let id = wire::id("chatcmpl-", ctx.seed, "chatcmpl", 0, 29);
    let fingerprint = wire::id("fp_", ctx.seed, "fingerprint", 0, 10);
    if !ask.stream {
        return buffered(ctx, ask, out, &id, &fingerprint);
    }
    let include_usage = out.wire.usage
        && ctx.body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
    let frame = Frame {
        id: &id,
        fingerprint: &fingerprint,
        model: &ask.model,
        include_usage,
    };
    let first_content = if out.content.is_some() {
        json!("")
    } else {
        Value::Null
    };
    let mut chunks = vec![frame.delta(
        &json!({"role": "assistant", "content": first_content, "refusal": null}),
        &Value::Null,
    )];
    if let Some((field, text)) = &out.reasoning {
        for f in wire::fragments(text, ctx.seed) {
            chunks.push(frame.delta(&json!({ *field: f }), &Value::Null));
        }
    }
    text_chunks(ctx, &frame, out, &mut chunks);
    call_chunks(ctx, &frame, out, &mut chunks);
    chunks.push(frame.delta(&json!({}), &json!(out.finish)));
    if include_usage {
        chunks.push(frame.chunk(json!([]), Some(usage(ctx, out))));
    }
    chunks.push(b"data: [DONE]\n\n".to_vec());
    wire::stream_response("text/event-stream; charset=utf-8", faulted(out, chunks))
}

/// The buffered `chat.completion` body: the message with its calls, usage unless the wire drops it.
fn buffered(ctx: &Ctx<'_>, ask: &Ask, out: &ChatOut, id: &str, fingerprint: &str) -> SimResponse {
    let mut message = json!({"role": "assistant", "content": out.content, "refusal": out.refusal, "annotations": []});
    if let Some((field, text)) = &out.reasoning {
        message[*field] = json!(text);
    }
    if !out.calls.is_empty() {
        message["tool_calls"] = out
            .calls
            .iter()
            .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
            .collect();
    }
    let body = json!({
        "id": id, "object": "chat.completion", "created": wire::CREATED, "model": ask.model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": out.finish}],
        "usage": usage(ctx, out), "service_tier": "default", "system_fingerprint": fingerprint,
    });
    let mut body = body;
    if !out.wire.usage
        && let Some(o) = body.as_object_mut()
    {
        o.remove("usage");
    }
    wire::json_response(200, &body, true)
}

/// What every `chat.completion.chunk` of one stream repeats.
struct Frame<'f> {
    id: &'f str,
    fingerprint: &'f str,
    model: &'f str,
    include_usage: bool,
}

impl Frame<'_> {
    /// One chunk holding `choices`, with `usage` (or null) when the stream includes usage.
    fn chunk(&self, choices: Value, usage: Option<Value>) -> Vec<u8> {
        let mut c = json!({"id": self.id, "object": "chat.completion.chunk", "created": wire::CREATED,
                           "model": self.model, "service_tier": "default", "system_fingerprint": self.fingerprint});
        if self.include_usage {
            c["usage"] = usage.unwrap_or(Value::Null);
        }
        c["choices"] = choices;
        wire::sse(None, &c)
    }

    /// One chunk whose only choice carries delta `d` and `finish`.
    fn delta(&self, d: &Value, finish: &Value) -> Vec<u8> {
        self.chunk(
            json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": finish}]),
            None,
        )
    }
}

/// The text and refusal deltas (under `SameChunk`, the text and every whole call in one delta).
fn text_chunks(ctx: &Ctx<'_>, frame: &Frame<'_>, out: &ChatOut, chunks: &mut Vec<Vec<u8>>) {
    if out.wire.stream_shape == Some(StreamShape::SameChunk) {
        // Text and every call (whole) in one delta.
        let calls: Vec<Value> = out.calls.iter().enumerate().map(|(i, (call_id, name, args))| {
            json!({"index": i, "id": call_id, "type": "function", "function": {"name": name, "arguments": args}})
        }).collect();
        let mut d = json!({"content": out.content, "tool_calls": calls});
        if out.calls.is_empty() {
            d = json!({ "content": out.content });
        }
        chunks.push(frame.delta(&d, &Value::Null));
    } else if let Some(text) = &out.content {
        for f in wire::fragments(text, ctx.seed) {
            chunks.push(frame.delta(&json!({"content": f}), &Value::Null));
        }
    }
    if let Some(refusal) = &out.refusal {
        for f in wire::fragments(refusal, ctx.seed) {
            chunks.push(frame.delta(&json!({"refusal": f}), &Value::Null));
        }
    }
}

/// A call's first delta: its index, id and name, with `args` (whole, or empty before fragments).
fn call_head(i: usize, call_id: &str, name: &str, args: &str) -> Value {
    json!({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                           "function": {"name": name, "arguments": args}}]})
}

/// A delta carrying one fragment `f` of call `i`'s arguments.
fn arg_delta(i: usize, f: &str) -> Value {
    json!({"tool_calls": [{"index": i, "function": {"arguments": f}}]})
}

/// Call `i`'s arguments as the stream shape splits them: whole under `OneDelta`, else fragments.
fn arg_pieces<'s>(
    ctx: &Ctx<'_>,
    shape: Option<StreamShape>,
    i: usize,
    args: &'s str,
) -> Vec<&'s str> {
    match shape {
        Some(StreamShape::OneDelta) => vec![args],
        _ => wire::fragments(args, ctx.seed.wrapping_add(i as u64)),
    }
}

/// The calls' deltas in the order the stream shape gives them.
fn call_chunks(ctx: &Ctx<'_>, frame: &Frame<'_>, out: &ChatOut, chunks: &mut Vec<Vec<u8>>) {
    let shape = out.wire.stream_shape;
    match shape {
        Some(StreamShape::SameChunk) => {}
        Some(StreamShape::DoneOnly) => {
            // Each call whole in its first chunk.
            for (i, (call_id, name, args)) in out.calls.iter().enumerate() {
                chunks.push(frame.delta(&call_head(i, call_id, name, args), &Value::Null));
            }
        }
        Some(StreamShape::Interleaved) => {
            for (i, (call_id, name, _)) in out.calls.iter().enumerate() {
                chunks.push(frame.delta(&call_head(i, call_id, name, ""), &Value::Null));
            }
            let all: Vec<Vec<&str>> = out
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| arg_pieces(ctx, shape, i, &c.2))
                .collect();
            let longest = all.iter().map(Vec::len).max().unwrap_or(0);
            for k in 0..longest {
                for (i, p) in all.iter().enumerate() {
                    if let Some(f) = p.get(k) {
                        chunks.push(frame.delta(&arg_delta(i, f), &Value::Null));
                    }
                }
            }
        }
        _ => {
            for (i, (call_id, name, args)) in out.calls.iter().enumerate() {
                // SharedIndex: every call at index 0, told apart by the id of its first delta.
                let at = if shape == Some(StreamShape::SharedIndex) {
                    0
                } else {
                    i
                };
                chunks.push(frame.delta(&call_head(at, call_id, name, ""), &Value::Null));
                for f in arg_pieces(ctx, shape, i, args)
                    .into_iter()
                    .filter(|f| !f.is_empty())
                {
                    chunks.push(frame.delta(&arg_delta(at, f), &Value::Null));
                }
            }
        }
    }
}

/// The stream as the wire's fault leaves it: an error event midway, cut midway, or whole.
fn faulted(out: &ChatOut, chunks: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    match out.wire.fault {
        Some(StreamFault::ErrorEvent) => wire::fail_midway(
            chunks,
            wire::sse(
                None,
                &json!({"error": {"message": "The server had an error while processing your request. Sorry about that!",
                                  "type": "server_error", "param": null, "code": null}}),
            ),
        ),
        Some(StreamFault::Cut) => wire::cut_midway(chunks),
        None => chunks,
    }
}
