//! OpenAI Responses (`POST /v1/responses`): request reading, `response` objects with
//! `function_call`, `message` and `web_search_call` items, and the typed SSE event stream.

use serde_json::{Value, json};

use super::decide::{Ask, FnTool, Turn};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::openai_chat::{
    check_needs_tools, content_text, parse_choice, require_model, runs, tools_array,
    trailing_results,
};
use super::wire;
use crate::model::{Provider, empty_parameters};
use crate::respond::ResponsesEvents as Events;
use crate::scenario::{StreamFault, StreamShape};

fn is_search_type(t: &str) -> bool {
    t.starts_with("web_search")
}

pub(crate) fn parse(body: &Value) -> Result<Ask, Rejection> {
    let model = require_model(body)?;
    let mut ask = Ask::new(model);
    ask.stream = body.get("stream") == Some(&Value::Bool(true));
    for (i, t) in tools_array(body)?.iter().enumerate() {
        match t.get("type").and_then(Value::as_str) {
            Some("function") => read_function(&mut ask, t, &format!("tools[{i}]"), None)?,
            // A namespace groups functions; each one's calls carry the namespace's name.
            Some("namespace") => {
                let space = t.get("name").and_then(Value::as_str).unwrap_or_default();
                let members = t.get("tools").and_then(Value::as_array);
                for (k, f) in members.into_iter().flatten().enumerate() {
                    read_function(&mut ask, f, &format!("tools[{i}].tools[{k}]"), Some(space))?;
                }
                ask.hosted_types.push("namespace".to_string());
            }
            Some(hosted) => {
                if is_search_type(hosted) && ask.search.is_none() {
                    ask.search = Some(hosted.to_string());
                }
                if hosted == super::tool_search::RESPONSES_TYPE {
                    ask.tool_search = Some(hosted.to_string());
                }
                if hosted == super::programmatic::RESPONSES_TYPE {
                    ask.programmatic = Some(hosted.to_string());
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
    super::programmatic::check_runner(&ask)?;
    if let Some(Value::Array(items)) = body.get("input") {
        let loaded = super::tool_search::responses_history(items, &ask)?;
        super::decide::load(&mut ask, &loaded);
        ask.program = super::programmatic::responses_history(items, &ask)?;
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

/// One function (top-level, or a namespace's): callable, or deferred until a tool search loads
/// it (`defer_loading: true` beside a `tool_search`); its calls' namespace recorded.
fn read_function(ask: &mut Ask, t: &Value, at: &str, space: Option<&str>) -> Result<(), Rejection> {
    let Some(name) = t.get("name").and_then(Value::as_str) else {
        return Err(
            Rejection::bad_request(format!("Missing required parameter: '{at}.name'."))
                .param(&format!("{at}.name"))
                .code("missing_required_parameter"),
        );
    };
    let schema = match t.get("parameters") {
        None | Some(Value::Null) => empty_parameters(),
        Some(s) => s.clone(),
    };
    let tool = FnTool {
        name: name.to_string(),
        schema,
        strict: t.get("strict") == Some(&Value::Bool(true)),
    };
    let deferred = t.get("defer_loading") == Some(&Value::Bool(true));
    super::programmatic::read_tool(ask, name, t);
    // A deferred top-level function's calls carry its own name as their namespace.
    match space {
        Some(space) => (ask.namespaces).push((name.to_string(), space.to_string())),
        None if deferred => (ask.namespaces).push((name.to_string(), name.to_string())),
        None => {}
    }
    if deferred {
        ask.deferred.push(tool);
    } else {
        ask.tools.push(tool);
    }
    Ok(())
}

fn read_items(items: &[Value], ask: &mut Ask) {
    let kind = |m: &Value| {
        m.get("type")
            .and_then(Value::as_str)
            .unwrap_or("message")
            .to_string()
    };
    ask.set_tool_results(trailing_results(
        items,
        |m| kind(m).ends_with("call_output"),
        "output",
    ));
    ask.rounds_done = runs(items.iter().map(|m| kind(m).ends_with("call_output")));
    let is_user = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("user");
    if let Some(u) = items.iter().rev().find(is_user) {
        ask.user_text = content_text(u.get("content").unwrap_or(&Value::Null));
    }
}

/// A `function_call` input item with no `reasoning` item before it in its run of output items:
/// the 400 OpenAI answers for a reasoning model's calls sent back without their reasoning. An
/// `item_reference` is read as the stored item it names (`store::resolved`, before this rule):
/// a reasoning item referred to is the reasoning sent back.
pub(crate) fn missing_reasoning(body: &Value) -> Option<String> {
    let items = body.get("input")?.as_array()?;
    let mut reasoned = false;
    for item in items {
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => reasoned = true,
            Some("function_call") if !reasoned => {
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                return Some(format!(
                    "Item '{id}' of type 'function_call' was provided without its required 'reasoning' item."
                ));
            }
            Some("function_call") => {}
            _ => reasoned = false,
        }
    }
    None
}

/// An input message item whose `phase` is neither `commentary` nor `final_answer`: OpenAI's
/// 400 for a value outside an enum (its usual `invalid_value` wording; for `phase`
/// UNCONFIRMED, docs/wire-formats.md). A message sent back without its phase is accepted, as
/// OpenAI accepts it (the docs say dropping it degrades the model's answers): the judge's
/// phase check, not a 400, is what flags that (class 32).
pub(crate) fn phase_rejection(body: &Value) -> Option<Rejection> {
    let items = body.get("input")?.as_array()?;
    items.iter().enumerate().find_map(|(i, item)| {
        let v = item.get("phase").filter(|v| !v.is_null())?;
        if matches!(v.as_str(), Some("commentary" | "final_answer")) {
            return None;
        }
        Some(
            Rejection::bad_request(format!(
                "Invalid value: {v}. Supported values are: 'commentary' and 'final_answer'."
            ))
            .param(&format!("input[{i}].phase"))
            .code("invalid_value"),
        )
    })
}

/// Output items of the answer, completed (a cut last call is `incomplete` with half its arguments).
fn items(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(refusal) = &turn.wire.refusal {
        out.push(json!({"id": wire::id("msg_", ctx.seed, "msg", 0, 48), "type": "message",
            "status": "incomplete", "content": [{"type": "refusal", "refusal": refusal}], "role": "assistant"}));
    }
    // The server compacted the conversation: the sealed summary comes first (class 31).
    // Its content depends on the calls only, so buffered and streamed answers agree.
    if turn.wire.compaction && !turn.calls.is_empty() {
        let seed = super::decide::calls_seed(&turn.calls);
        out.push(
            json!({"id": wire::id("cmp_", seed, "cmp", 0, 48), "type": "compaction",
            "encrypted_content": wire::id("gAAAAB", seed, "encrypted-compaction", 0, 120)}),
        );
    }
    if let Some(search) = &turn.search {
        out.push(json!({"id": wire::id("ws_", ctx.seed, "ws", 0, 48), "type": "web_search_call",
                        "status": "completed", "action": {"type": "search", "query": search.query}}));
    }
    if let Some(found) = &turn.tool_search {
        out.extend(super::tool_search::responses_items(ask, ctx.seed, found));
    }
    if let (Some(program), Some(results), true) =
        (&ask.program, &ask.tool_results, turn.calls.is_empty())
    {
        // The program ran to its end once its calls were answered (class 30).
        out.push(super::programmatic::responses_output(program, results));
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
        let mut message = json!({"id": wire::id("msg_", ctx.seed, "msg", 0, 48), "type": "message",
            "status": "completed", "content": [{"type": "output_text", "annotations": annotations,
            "logprobs": [], "text": turn.text()}], "role": "assistant"});
        // Commentary before calls, the final answer without them (class 32); the stream's
        // `output_item.added` and `.done` carry it too (both copy the item).
        if turn.wire.phase {
            let phase = if turn.calls.is_empty() {
                "final_answer"
            } else {
                "commentary"
            };
            message["phase"] = json!(phase);
        }
        out.push(message);
    }
    let last = turn.calls.len().saturating_sub(1);
    let ids = super::decide::call_ids(Provider::OpenaiResponses, &turn.calls, |i| {
        Some(wire::id("call_", ctx.seed, "call", i, 24))
    });
    let coded = super::programmatic::by_program(&turn.calls);
    let program = (ask.programmatic.is_some() && !coded.is_empty()).then(|| {
        // Ids from the calls only, so buffered and streamed answers agree.
        let seed = super::decide::calls_seed(&turn.calls);
        let (item, call_id) = super::programmatic::responses_program(seed, &coded);
        out.push(item);
        super::programmatic::responses_caller(&call_id)
    });
    for (i, c) in turn.calls.iter().enumerate() {
        if let Some(r) = &turn.wire.reasoning {
            // A reasoning item before each call: reasoning interleaved between function calls.
            // Its content depends on the reasoning only, so buffered and streamed answers agree.
            let seed = crate::fnv::fnv1a(r.as_bytes());
            out.push(json!({"id": wire::id("rs_", seed, "rs", i, 48), "type": "reasoning",
                "summary": [], "encrypted_content": wire::id("gAAAAAB", seed, "encrypted-reasoning", i, 120)}));
        }
        let cut = turn.wire.cut_last_call && i == last;
        let args = c.arguments_json();
        let (status, args) = if cut {
            ("incomplete", wire::half(&args).to_string())
        } else {
            ("completed", args)
        };
        let mut call = json!({"id": wire::id("fc_", ctx.seed, "fc", i, 48), "type": "function_call",
            "status": status, "arguments": args, "call_id": ids[i], "name": c.name});
        if let Some(space) = &c.namespace {
            call["namespace"] = json!(space);
        }
        if let Some(caller) = program.as_ref().filter(|_| c.by_program) {
            call["caller"] = caller.clone();
        }
        out.push(call);
    }
    out
}

/// The response's id and its output items: what a stored response keeps.
pub(crate) fn answered(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) -> (String, Vec<Value>) {
    (response_id(ctx), items(ctx, ask, turn))
}

fn response_id(ctx: &Ctx<'_>) -> String {
    wire::id("resp_", ctx.seed, "resp", 0, 48)
}

/// `completed`, or `incomplete` with its reason (output-token limit, content filter).
fn final_status(turn: &Turn) -> (&'static str, Value) {
    if turn.wire.cut_last_call {
        ("incomplete", json!({"reason": "max_output_tokens"}))
    } else if turn.wire.refusal.is_some() {
        ("incomplete", json!({"reason": "content_filter"}))
    } else {
        ("completed", Value::Null)
    }
}

fn snapshot(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn, output: &[Value], completed: bool) -> Value {
    let b = ctx.body;
    let written: usize = output.iter().map(|i| i.to_string().len()).sum();
    let out_tokens = wire::tokens(written / 2);
    let usage = completed.then(|| {
        json!({"input_tokens": ctx.input_tokens, "input_tokens_details": {"cached_tokens": 0},
               "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
               "total_tokens": ctx.input_tokens + out_tokens})
    });
    let (status, incomplete) = if completed {
        final_status(turn)
    } else {
        ("in_progress", Value::Null)
    };
    json!({
        "id": response_id(ctx), "object": "response",
        "created_at": wire::CREATED, "status": status,
        "completed_at": (status == "completed").then_some(wire::CREATED + 1),
        "background": false, "error": null, "incomplete_details": incomplete,
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
    let output = items(ctx, ask, turn);
    if !ask.stream {
        return wire::json_response(200, &snapshot(ctx, ask, turn, &output, true), true);
    }
    let mut ev = Events::default();
    ev.push(
        "response.created",
        json!({"response": snapshot(ctx, ask, turn, &[], false)}),
    );
    ev.push(
        "response.in_progress",
        json!({"response": snapshot(ctx, ask, turn, &[], false)}),
    );
    if turn.wire.is(StreamShape::Interleaved) {
        interleaved_calls(&mut ev, ctx, &output);
    }
    for (index, item) in output.iter().enumerate() {
        item_events(&mut ev, ctx, turn, item, index);
        ev.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    let last = snapshot(ctx, ask, turn, &output, true);
    let terminal = format!(
        "response.{}",
        last["status"].as_str().unwrap_or("completed")
    );
    ev.push(&terminal, json!({ "response": last }));
    fault_events(&mut ev, ctx, ask, turn);
    let chunks = if turn.wire.is(StreamShape::SameChunk) {
        vec![ev.chunks.concat()]
    } else {
        ev.chunks
    };
    wire::stream_response("text/event-stream; charset=utf-8", chunks)
}

/// Interleaved: every call's item is added first, then the calls' argument deltas alternate (the
/// items finish later, in order).
fn interleaved_calls(ev: &mut Events, ctx: &Ctx<'_>, output: &[Value]) {
    let calls: Vec<usize> = (0..output.len())
        .filter(|&i| output[i]["type"] == "function_call")
        .collect();
    for &index in &calls {
        ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added(&output[index])}),
        );
    }
    let pieces: Vec<Vec<&str>> = calls
        .iter()
        .map(|&i| {
            wire::fragments(
                output[i]["arguments"].as_str().unwrap_or(""),
                ctx.seed.wrapping_add(i as u64),
            )
        })
        .collect();
    let longest = pieces.iter().map(Vec::len).max().unwrap_or(0);
    for k in 0..longest {
        for (n, &index) in calls.iter().enumerate() {
            if let Some(f) = pieces[n].get(k) {
                ev.push(
                    "response.function_call_arguments.delta",
                    json!({"item_id": output[index]["id"], "output_index": index, "delta": f}),
                );
            }
        }
    }
}

/// One output item's events from its `added` up to (not including) its `done`, by item type.
fn item_events(ev: &mut Events, ctx: &Ctx<'_>, turn: &Turn, item: &Value, index: usize) {
    match item["type"].as_str() {
        Some("function_call") => call_events(ev, ctx, turn, item, index),
        Some("message") => {
            let mut a = added(item);
            a["content"] = json!([]);
            ev.push(
                "response.output_item.added",
                json!({"output_index": index, "item": a}),
            );
            if item["content"][0]["type"] == "refusal" {
                refusal_events(ev, item, index, ctx.seed);
            } else {
                message_events(ev, item, index, ctx.seed);
            }
        }
        // A tool search's items come whole (UNCONFIRMED: docs/wire-formats.md).
        Some("tool_search_call" | "tool_search_output") => ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added(item)}),
        ),
        // A program and its output come whole, as compaction does (UNCONFIRMED:
        // docs/wire-formats.md).
        Some("compaction" | "program" | "program_output") => ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        ),
        Some("reasoning") => {
            let mut a = item.clone();
            if let Some(o) = a.as_object_mut() {
                o.remove("encrypted_content");
            }
            ev.push(
                "response.output_item.added",
                json!({"output_index": index, "item": a}),
            );
        }
        _ => {
            let item_id = item["id"].clone();
            ev.push(
                "response.output_item.added",
                json!({"output_index": index, "item": added(item)}),
            );
            for phase in ["in_progress", "searching", "completed"] {
                ev.push(
                    &format!("response.web_search_call.{phase}"),
                    json!({"output_index": index, "item_id": item_id}),
                );
            }
        }
    }
}

/// A function call's events: added and its argument deltas (unless interleaved, sent earlier),
/// then its arguments' `.done` when the call completed.
fn call_events(ev: &mut Events, ctx: &Ctx<'_>, turn: &Turn, item: &Value, index: usize) {
    let item_id = item["id"].clone();
    let args = item["arguments"].as_str().unwrap_or("");
    if !turn.wire.is(StreamShape::Interleaved) {
        ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added(item)}),
        );
        let pieces = match turn.wire.stream_shape {
            Some(StreamShape::DoneOnly) => Vec::new(),
            Some(StreamShape::OneDelta) => vec![args],
            _ => wire::fragments(args, ctx.seed.wrapping_add(index as u64)),
        };
        for f in pieces.into_iter().filter(|f| !f.is_empty()) {
            ev.push(
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": f}),
            );
        }
    }
    // A call cut by the token limit never gets its arguments' `.done`.
    if item["status"] == "completed" {
        ev.push("response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "name": item["name"], "arguments": args}));
    }
}

/// The stream's fault: half the events then an `error` and `response.failed`, or cut midway.
fn fault_events(ev: &mut Events, ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) {
    match turn.wire.fault {
        Some(StreamFault::ErrorEvent) => {
            ev.chunks.truncate((ev.chunks.len() / 2).max(1));
            ev.push("error", json!({"error": {"type": "server_error", "code": "server_error",
                "message": "The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error.",
                "param": null}}));
            let mut failed = snapshot(ctx, ask, turn, &[], false);
            failed["status"] = json!("failed");
            failed["error"] = json!({"code": "server_error", "message": "The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error."});
            ev.push("response.failed", json!({ "response": failed }));
        }
        Some(StreamFault::Cut) => ev.chunks = wire::cut_midway(std::mem::take(&mut ev.chunks)),
        None => {}
    }
}

/// The item as `output_item.added` shows it: in progress, no arguments yet.
fn added(item: &Value) -> Value {
    let mut a = item.clone();
    a["status"] = json!("in_progress");
    if item["type"] == "function_call" {
        a["arguments"] = json!("");
    }
    a
}

/// A content-part event's fields: the item, its output index, content index 0, then `extra`.
fn content_part_event(item_id: &Value, index: usize, extra: Value) -> Value {
    let mut v = json!({"item_id": item_id, "output_index": index, "content_index": 0});
    if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
    v
}

fn refusal_events(ev: &mut Events, item: &Value, index: usize, seed: u64) {
    let item_id = &item["id"];
    let refusal = item["content"][0]["refusal"].as_str().unwrap_or("");
    let at = |extra: Value| content_part_event(item_id, index, extra);
    ev.push(
        "response.content_part.added",
        at(json!({"part": {"type": "refusal", "refusal": ""}})),
    );
    for f in wire::fragments(refusal, seed) {
        ev.push("response.refusal.delta", at(json!({ "delta": f })));
    }
    ev.push("response.refusal.done", at(json!({ "refusal": refusal })));
    ev.push(
        "response.content_part.done",
        at(json!({"part": item["content"][0]})),
    );
}

fn message_events(ev: &mut Events, item: &Value, index: usize, seed: u64) {
    let item_id = &item["id"];
    let part = &item["content"][0];
    let text = part["text"].as_str().unwrap_or("");
    let at = |extra: Value| content_part_event(item_id, index, extra);
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
