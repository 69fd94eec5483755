//! OpenAI Responses (`POST /v1/responses`): request reading, `response` objects with
//! `function_call`, `message` and `web_search_call` items, and the typed SSE event stream.

use serde_json::{Value, json};

use super::decide::{Ask, FnTool, Turn};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::openai_chat::{
    check_needs_tools, content_text, parse_choice, require_model, tools_array,
};
use super::wire;
use crate::model::empty_parameters;
use crate::respond::ResponsesEvents as Events;

fn is_search_type(t: &str) -> bool {
    t.starts_with("web_search")
}

pub(crate) fn parse(body: &Value) -> Result<Ask, Rejection> {
    let model = require_model(body)?;
    let mut ask = Ask::new(model);
    ask.stream = body.get("stream") == Some(&Value::Bool(true));
    for (i, t) in tools_array(body)?.iter().enumerate() {
        match t.get("type").and_then(Value::as_str) {
            Some("function") => {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    return Err(Rejection::bad_request(format!(
                        "Missing required parameter: 'tools[{i}].name'."
                    ))
                    .param(&format!("tools[{i}].name"))
                    .code("missing_required_parameter"));
                };
                let schema = match t.get("parameters") {
                    None | Some(Value::Null) => empty_parameters(),
                    Some(s) => s.clone(),
                };
                ask.tools.push(FnTool {
                    name: name.to_string(),
                    schema,
                    strict: t.get("strict") == Some(&Value::Bool(true)),
                });
            }
            Some(hosted) => {
                if is_search_type(hosted) && ask.search.is_none() {
                    ask.search = Some(hosted.to_string());
                }
                ask.hosted_types.push(hosted.to_string());
            }
            None => {
                return Err(Rejection::bad_request(format!(
                    "Missing required parameter: 'tools[{i}].type'."
                ))
                .param(&format!("tools[{i}].type"))
                .code("missing_required_parameter"));
            }
        }
    }
    check_needs_tools(body, !ask.tools.is_empty() || !ask.hosted_types.is_empty())?;
    ask.raw_choice = body.get("tool_choice").cloned().unwrap_or(Value::Null);
    ask.choice = parse_choice(&ask.raw_choice, true, &ask)?;
    ask.parallel = body.get("parallel_tool_calls") != Some(&Value::Bool(false));
    match body.get("input") {
        Some(Value::String(s)) => ask.user_text = s.clone(),
        Some(Value::Array(items)) => read_items(items, &mut ask),
        _ => {}
    }
    Ok(ask)
}

fn read_items(items: &[Value], ask: &mut Ask) {
    let kind = |m: &Value| {
        m.get("type")
            .and_then(Value::as_str)
            .unwrap_or("message")
            .to_string()
    };
    let trailing: Vec<String> = items
        .iter()
        .rev()
        .take_while(|m| kind(m).ends_with("call_output"))
        .map(|m| content_text(m.get("output").unwrap_or(&Value::Null)))
        .collect();
    if !trailing.is_empty() {
        ask.tool_results = Some(trailing.into_iter().rev().collect());
    }
    let is_user = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("user");
    if let Some(u) = items.iter().rev().find(is_user) {
        ask.user_text = content_text(u.get("content").unwrap_or(&Value::Null));
    }
}

/// Output items of the answer, completed.
fn items(ctx: &Ctx<'_>, turn: &Turn) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(search) = &turn.search {
        out.push(json!({"id": wire::id("ws_", ctx.seed, "ws", 0, 48), "type": "web_search_call",
                        "status": "completed", "action": {"type": "search", "query": search.query}}));
    }
    if turn.has_text() {
        let mut annotations = Vec::new();
        let mut at = 0usize;
        for seg in &turn.segments {
            let len = seg.text.chars().count();
            if let (Some(i), Some(search)) = (seg.cites, &turn.search)
                && let Some(hit) = search.hits.get(i)
            {
                annotations.push(
                    json!({"type": "url_citation", "start_index": at, "end_index": at + len,
                                        "url": hit.url, "title": hit.title}),
                );
            }
            at += len;
        }
        out.push(
            json!({"id": wire::id("msg_", ctx.seed, "msg", 0, 48), "type": "message",
            "status": "completed", "content": [{"type": "output_text", "annotations": annotations,
            "logprobs": [], "text": turn.text()}], "role": "assistant"}),
        );
    }
    for (i, c) in turn.calls.iter().enumerate() {
        out.push(
            json!({"id": wire::id("fc_", ctx.seed, "fc", i, 48), "type": "function_call",
            "status": "completed", "arguments": c.arguments_json(),
            "call_id": wire::id("call_", ctx.seed, "call", i, 24), "name": c.name}),
        );
    }
    out
}

fn snapshot(ctx: &Ctx<'_>, ask: &Ask, output: &[Value], completed: bool) -> Value {
    let b = ctx.body;
    let written: usize = output.iter().map(|i| i.to_string().len()).sum();
    let out_tokens = wire::tokens(written / 2);
    let usage = completed.then(|| {
        json!({"input_tokens": ctx.input_tokens, "input_tokens_details": {"cached_tokens": 0},
               "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
               "total_tokens": ctx.input_tokens + out_tokens})
    });
    json!({
        "id": wire::id("resp_", ctx.seed, "resp", 0, 48), "object": "response",
        "created_at": wire::CREATED, "status": if completed { "completed" } else { "in_progress" },
        "completed_at": completed.then_some(wire::CREATED + 1),
        "background": false, "error": null, "incomplete_details": null,
        "instructions": b.get("instructions").cloned().unwrap_or(Value::Null),
        "max_output_tokens": b.get("max_output_tokens").cloned().unwrap_or(Value::Null),
        "model": ask.model, "output": output, "parallel_tool_calls": ask.parallel,
        "previous_response_id": b.get("previous_response_id").cloned().unwrap_or(Value::Null),
        "reasoning": {"effort": null, "summary": null}, "store": b.get("store").cloned().unwrap_or(json!(true)),
        "temperature": 1.0, "text": {"format": {"type": "text"}},
        "tool_choice": if ask.raw_choice.is_null() { json!("auto") } else { ask.raw_choice.clone() },
        "tools": b.get("tools").cloned().unwrap_or(json!([])),
        "top_p": 1.0, "truncation": "disabled", "usage": usage, "user": null, "metadata": {},
    })
}

pub(crate) fn render(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) -> SimResponse {
    let output = items(ctx, turn);
    if !ask.stream {
        return wire::json_response(200, &snapshot(ctx, ask, &output, true), true);
    }
    let mut ev = Events::default();
    ev.push(
        "response.created",
        json!({"response": snapshot(ctx, ask, &[], false)}),
    );
    ev.push(
        "response.in_progress",
        json!({"response": snapshot(ctx, ask, &[], false)}),
    );
    for (index, item) in output.iter().enumerate() {
        let item_id = item["id"].clone();
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        match item["type"].as_str() {
            Some("function_call") => {
                added["arguments"] = json!("");
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                let args = item["arguments"].as_str().unwrap_or("");
                for f in wire::fragments(args, ctx.seed.wrapping_add(index as u64)) {
                    ev.push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": item_id, "output_index": index, "delta": f}),
                    );
                }
                ev.push("response.function_call_arguments.done",
                    json!({"item_id": item_id, "output_index": index, "name": item["name"], "arguments": args}));
            }
            Some("message") => {
                added["content"] = json!([]);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                message_events(&mut ev, item, index, ctx.seed);
            }
            _ => {
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                for phase in ["in_progress", "searching", "completed"] {
                    ev.push(
                        &format!("response.web_search_call.{phase}"),
                        json!({"output_index": index, "item_id": item_id}),
                    );
                }
            }
        }
        ev.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    ev.push(
        "response.completed",
        json!({"response": snapshot(ctx, ask, &output, true)}),
    );
    wire::stream_response("text/event-stream; charset=utf-8", ev.chunks)
}

fn message_events(ev: &mut Events, item: &Value, index: usize, seed: u64) {
    let item_id = &item["id"];
    let part = &item["content"][0];
    let text = part["text"].as_str().unwrap_or("");
    let at = |extra: Value| {
        let mut v = json!({"item_id": item_id, "output_index": index, "content_index": 0});
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v
    };
    ev.push(
        "response.content_part.added",
        at(json!({"part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}})),
    );
    for f in wire::fragments(text, seed) {
        ev.push(
            "response.output_text.delta",
            at(json!({"delta": f, "logprobs": []})),
        );
    }
    for (i, a) in part["annotations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        ev.push(
            "response.output_text.annotation.added",
            at(json!({"annotation_index": i, "annotation": a})),
        );
    }
    ev.push(
        "response.output_text.done",
        at(json!({"text": text, "logprobs": []})),
    );
    ev.push("response.content_part.done", at(json!({"part": part})));
}
