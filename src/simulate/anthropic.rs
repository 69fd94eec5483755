//! Anthropic Messages (`POST /v1/messages`): request reading and checks, `message` bodies with
//! `text` / `tool_use` / `server_tool_use` / `web_search_tool_result` blocks, and the SSE stream.

use serde_json::{Value, json};

use super::decide::{Ask, FnTool, Turn};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::openai_chat::content_text;
use super::wire;
use crate::model::{Provider, ToolChoice};
use crate::scenario::{StreamFault, StreamShape};

fn field_required(path: &str) -> Rejection {
    Rejection::bad_request(format!("{path}: Field required"))
}

/// Reads a Messages request; `betas` is its `anthropic-beta` header.
pub(crate) fn parse(body: &Value, betas: Option<&str>) -> Result<Ask, Rejection> {
    let model = match body.get("model").and_then(Value::as_str) {
        Some(m) if !m.is_empty() => m,
        _ => return Err(field_required("model")),
    };
    if !body.get("max_tokens").is_some_and(Value::is_u64) {
        return Err(field_required("max_tokens"));
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(field_required("messages"));
    };
    let mut ask = Ask::new(model);
    ask.stream = body.get("stream") == Some(&Value::Bool(true));
    let tools = match body.get("tools") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(Rejection::bad_request(
                "tools: Input should be a valid list",
            ));
        }
    };
    let mut deferred = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        match t.get("type").and_then(Value::as_str) {
            None | Some("custom") => {
                let name = t.get("name").and_then(Value::as_str);
                let schema = t.get("input_schema");
                let (Some(name), Some(schema)) = (name, schema) else {
                    let missing = if name.is_none() {
                        "name"
                    } else {
                        "input_schema"
                    };
                    return Err(field_required(&format!("tools.{i}.custom.{missing}")));
                };
                let tool = FnTool {
                    name: name.to_string(),
                    schema: schema.clone(),
                    strict: t.get("strict") == Some(&Value::Bool(true)),
                };
                if t.get("eager_input_streaming") == Some(&Value::Bool(true)) {
                    ask.eager.push(name.to_string());
                }
                super::programmatic::read_tool(&mut ask, name, t);
                if t.get("defer_loading") == Some(&Value::Bool(true)) {
                    deferred.push(tool);
                } else {
                    ask.tools.push(tool);
                }
            }
            Some(server) => {
                if server.starts_with("web_search_") && ask.search.is_none() {
                    ask.search = Some(server.to_string());
                }
                if super::tool_search::is_anthropic_search(server) {
                    ask.tool_search = Some(server.to_string());
                }
                if server.starts_with(super::programmatic::ANTHROPIC_PREFIX) {
                    ask.programmatic = Some(server.to_string());
                }
                ask.hosted_types.push(server.to_string());
            }
        }
    }
    super::tool_changes::apply(messages, &mut ask.tools, &mut deferred, betas)?;
    super::programmatic::check_runner(&ask)?;
    ask.program = super::programmatic::anthropic_history(body, messages, &ask)?;
    if ask.tool_search.is_some() {
        // Deferred tools a search can load (class 28); without a search, class 26's reading.
        ask.deferred = deferred;
        let loaded = super::tool_search::anthropic_history(messages, &ask)?;
        super::decide::load(&mut ask, &loaded);
    }
    read_choice(body, &mut ask)?;
    read_messages(messages, &mut ask);
    Ok(ask)
}

fn read_choice(body: &Value, ask: &mut Ask) -> Result<(), Rejection> {
    ask.raw_choice = body.get("tool_choice").cloned().unwrap_or(Value::Null);
    let raw = &ask.raw_choice;
    if raw.is_null() {
        return Ok(());
    }
    if tools_absent(body) {
        return Err(Rejection::bad_request(
            "tool_choice may only be specified while providing tools.",
        ));
    }
    ask.choice = match raw.get("type").and_then(Value::as_str) {
        Some("auto") => ToolChoice::Auto,
        Some("any") => ToolChoice::Required,
        Some("none") => ToolChoice::None,
        Some("tool") => {
            let Some(name) = raw.get("name").and_then(Value::as_str) else {
                return Err(field_required("tool_choice.tool.name"));
            };
            // Naming the web search server tool forces the model to search.
            if name == "web_search" && ask.search.is_some() && !ask.has_tool(name) {
                ask.choice = ToolChoice::Required;
                return Ok(());
            }
            if !ask.has_tool(name) {
                return Err(Rejection::bad_request(format!(
                    "tool_choice.name: Tool '{name}' not found in provided tools"
                )));
            }
            ToolChoice::Forced(name.to_string())
        }
        _ => {
            return Err(Rejection::bad_request(
                "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
            ));
        }
    };
    ask.parallel = raw.get("disable_parallel_tool_use") != Some(&Value::Bool(true));
    let thinking = body.pointer("/thinking/type").and_then(Value::as_str);
    let forcing = matches!(ask.choice, ToolChoice::Required | ToolChoice::Forced(_));
    if forcing && matches!(thinking, Some("enabled" | "adaptive")) {
        return Err(Rejection::bad_request(
            "Thinking may not be enabled when tool_choice forces tool use.",
        ));
    }
    Ok(())
}

fn tools_absent(body: &Value) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

fn read_messages(messages: &[Value], ask: &mut Ask) {
    let Some(last) = messages.last() else {
        return;
    };
    if last.get("role").and_then(Value::as_str) == Some("user")
        && let Some(blocks) = last.get("content").and_then(Value::as_array)
    {
        let results: Vec<String> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|b| content_text(b.get("content").unwrap_or(&Value::Null)))
            .collect();
        ask.set_tool_results(results);
    }
    ask.rounds_done = messages
        .iter()
        .filter(|m| {
            m.get("content")
                .and_then(Value::as_array)
                .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"))
        })
        .count();
    let is_user = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("user");
    if let Some(u) = messages.iter().rev().find(is_user) {
        ask.user_text = content_text(u.get("content").unwrap_or(&Value::Null));
    }
}

/// The answer's content blocks, complete (a cut last call keeps `input: {}`: its JSON never closed).
fn blocks(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) -> Vec<Value> {
    let mut out = Vec::new();
    // The server compacted the conversation: the summary comes first (class 31).
    // Its summary depends on the calls only, so buffered and streamed answers agree.
    if turn.wire.compaction && !turn.calls.is_empty() {
        let seed = super::decide::calls_seed(&turn.calls);
        out.push(json!({"type": "compaction", "content": format!(
            "<summary>The user asked: {}</summary>", wire::id("", seed, "compaction", 0, 16))}));
    }
    if let Some(r) = &turn.wire.reasoning {
        out.push(json!({"type": "thinking", "thinking": r,
                        "signature": wire::id("Eq", ctx.seed, "thinking-signature", 0, 88)}));
        if turn.wire.redacted {
            out.push(json!({"type": "redacted_thinking",
                            "data": wire::id("EmwK", ctx.seed, "redacted-thinking", 0, 120)}));
        }
    }
    if let Some(refusal) = &turn.wire.refusal {
        out.push(json!({"type": "text", "text": refusal}));
    }
    if let Some(search) = &turn.search {
        let id = wire::id("srvtoolu_", ctx.seed, "srvtoolu", 0, 24);
        out.push(
            json!({"type": "server_tool_use", "id": id, "name": "web_search",
                        "input": {"query": search.query}}),
        );
        let results: Vec<Value> = search
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                json!({
            "type": "web_search_result", "title": h.title, "url": h.url,
            "encrypted_content": wire::id("Eq", ctx.seed, "encrypted", i, 40), "page_age": null})
            })
            .collect();
        out.push(json!({"type": "web_search_tool_result", "tool_use_id": id, "content": results}));
        for (i, seg) in turn.segments.iter().enumerate() {
            let mut block = json!({"type": "text", "text": seg.text});
            if let Some(hit) = seg.cites.and_then(|c| search.hits.get(c)) {
                block["citations"] = json!([{"type": "web_search_result_location", "cited_text": hit.snippet,
                    "url": hit.url, "title": hit.title, "encrypted_index": wire::id("Eo", ctx.seed, "index", i, 24)}]);
            }
            out.push(block);
        }
    } else if turn.has_text() {
        if let (Some(runner), Some(results)) = (&ask.program, &ask.tool_results) {
            // The program ran to its end once its calls were answered (class 30).
            out.push(super::programmatic::anthropic_output(runner, results));
        }
        out.push(json!({"type": "text", "text": turn.text()}));
    }
    if let (Some(found), Some(variant)) = (&turn.tool_search, &ask.tool_search) {
        out.extend(super::tool_search::anthropic_blocks(
            variant, ctx.seed, found,
        ));
    }
    let last = turn.calls.len().saturating_sub(1);
    let ids = super::decide::call_ids(Provider::Anthropic, &turn.calls, |i| {
        Some(wire::id("toolu_", ctx.seed, "toolu", i, 24))
    });
    let coded = super::programmatic::by_program(&turn.calls);
    let runner = (ask.programmatic.as_deref())
        .filter(|_| !coded.is_empty())
        .map(|variant| {
            // Ids from the calls only, so buffered and streamed answers agree.
            let seed = super::decide::calls_seed(&turn.calls);
            let (block, id) = super::programmatic::anthropic_runner(seed, &coded);
            out.push(block);
            super::programmatic::anthropic_caller(variant, &id)
        });
    for (i, c) in turn.calls.iter().enumerate() {
        let input = if turn.wire.cut_last_call && i == last {
            json!({})
        } else {
            c.arguments.clone()
        };
        let mut block = json!({"type": "tool_use", "id": ids[i], "name": c.name, "input": input});
        if let Some(caller) = runner.as_ref().filter(|_| c.by_program) {
            block["caller"] = caller.clone();
        }
        out.push(block);
    }
    out
}

/// The container the answer's programmatic calls run in (class 30), when it has any.
fn container(turn: &Turn) -> Option<Value> {
    let seed = super::decide::calls_seed(&turn.calls);
    (turn.calls.iter())
        .any(|c| c.by_program)
        .then(|| super::programmatic::container(seed))
}

fn usage(ctx: &Ctx<'_>, turn: &Turn, output_tokens: u64) -> Value {
    let mut u = json!({"input_tokens": ctx.input_tokens, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 0, "output_tokens": output_tokens});
    if turn.search.is_some() {
        u["server_tool_use"] = json!({"web_search_requests": 1});
    }
    u["service_tier"] = json!("standard");
    u
}

fn stop_reason(turn: &Turn) -> &'static str {
    if turn.wire.refusal.is_some() {
        "refusal"
    } else if turn.wire.cut_last_call {
        "max_tokens"
    } else if turn.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

/// The arguments JSON text a streamed `tool_use` block sends (half of it when cut; an eager
/// tool's cut midway through a parameter's value).
fn streamed_arguments(ask: &Ask, turn: &Turn, call: usize) -> String {
    let Some(c) = turn.calls.get(call) else {
        return String::new();
    };
    let json = c.arguments_json();
    if !(turn.wire.cut_last_call && call + 1 == turn.calls.len()) {
        json
    } else if ask.eager.contains(&c.name) {
        super::eager::cut(&json).to_string()
    } else {
        wire::half(&json).to_string()
    }
}

/// The `input_json_delta` fragments of a streamed block's arguments: one delta
/// (`StreamShape::OneDelta`), an eager tool's fragments, or the default small ones.
fn argument_pieces<'a>(
    ask: &Ask,
    turn: &Turn,
    block: &Value,
    args: &'a str,
    seed: u64,
) -> Vec<&'a str> {
    let eager = block["type"] == "tool_use"
        && (block["name"].as_str()).is_some_and(|n| ask.eager.iter().any(|e| e == n));
    if turn.wire.is(StreamShape::OneDelta) {
        vec![args]
    } else if eager {
        super::eager::fragments(args, seed)
    } else {
        wire::fragments(args, seed)
    }
}

pub(crate) fn render(ctx: &Ctx<'_>, ask: &Ask, turn: &Turn) -> SimResponse {
    let content = blocks(ctx, ask, turn);
    let stop = stop_reason(turn);
    let written: usize = content.iter().map(|b| b.to_string().len()).sum();
    let out_tokens = wire::tokens(written / 2);
    let id = wire::id("msg_", ctx.seed, "msg", 0, 24);
    if !ask.stream {
        let mut body = json!({"model": ask.model, "id": id, "type": "message", "role": "assistant",
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": usage(ctx, turn, out_tokens)});
        if let Some(c) = container(turn) {
            body["container"] = c;
        }
        return wire::json_response(200, &body, false);
    }
    let mut s = BlockStream {
        ask,
        turn,
        chunks: Vec::new(),
        call: 0,
    };
    s.push(
        "message_start",
        &json!({"type": "message_start", "message": {"model": ask.model, "id": id,
        "type": "message", "role": "assistant", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": usage(ctx, turn, 1)}}),
    );
    for (index, block) in content.iter().enumerate() {
        s.block(index, block, ctx.seed.wrapping_add(index as u64));
        s.push(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
        if index == 0 {
            s.push("ping", &json!({"type": "ping"}));
        }
    }
    let mut delta = json!({"stop_reason": stop, "stop_sequence": null});
    if let Some(c) = container(turn) {
        delta["container"] = c;
    }
    s.push(
        "message_delta",
        &json!({"type": "message_delta", "delta": delta, "usage": {"output_tokens": out_tokens}}),
    );
    s.push("message_stop", &json!({"type": "message_stop"}));
    let chunks = match turn.wire.fault {
        Some(StreamFault::ErrorEvent) => wire::fail_midway(
            s.chunks,
            wire::sse(
                Some("error"),
                &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
        ),
        Some(StreamFault::Cut) => wire::cut_midway(s.chunks),
        None => s.chunks,
    };
    let chunks = if turn.wire.is(StreamShape::SameChunk) {
        vec![chunks.concat()]
    } else {
        chunks
    };
    wire::stream_response("text/event-stream; charset=utf-8", chunks)
}

/// A streamed message's events so far, and how many `tool_use` blocks it has streamed.
struct BlockStream<'s> {
    ask: &'s Ask,
    turn: &'s Turn,
    chunks: Vec<Vec<u8>>,
    call: usize,
}

/// A `content_block_delta` event's data for the block at `index`.
fn block_delta(index: usize, d: &Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": d})
}

impl BlockStream<'_> {
    /// Appends one event named `kind`.
    fn push(&mut self, kind: &str, data: &Value) {
        self.chunks.push(wire::sse(Some(kind), data));
    }

    /// One content block's start and deltas (its stop is the caller's), by block type.
    fn block(&mut self, index: usize, block: &Value, seed: u64) {
        match block["type"].as_str() {
            Some("thinking") => self.thinking(index, block, seed),
            // A null start, then the whole summary in one `compaction_delta`.
            Some("compaction") => {
                self.push(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "compaction", "content": null}}),
                );
                self.push(
                    "content_block_delta",
                    &block_delta(
                        index,
                        &json!({"type": "compaction_delta", "content": block["content"]}),
                    ),
                );
            }
            Some("text") => self.text(index, block, seed),
            Some("tool_use") if self.turn.wire.is(StreamShape::DoneOnly) => {
                // The whole input in the block's start, no deltas.
                self.push(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index, "content_block": block}),
                );
                self.call += 1;
            }
            Some(kind @ ("tool_use" | "server_tool_use")) => self.tool(kind, index, block, seed),
            _ => self.push(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index,
                    "content_block": block}),
            ),
        }
    }

    /// A thinking block: empty start, the thinking in fragments, then its signature.
    fn thinking(&mut self, index: usize, block: &Value, seed: u64) {
        self.push(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        );
        for f in wire::fragments(block["thinking"].as_str().unwrap_or(""), seed) {
            self.push(
                "content_block_delta",
                &block_delta(index, &json!({"type": "thinking_delta", "thinking": f})),
            );
        }
        self.push(
            "content_block_delta",
            &block_delta(
                index,
                &json!({"type": "signature_delta", "signature": block["signature"]}),
            ),
        );
    }

    /// A text block: empty start, its citations, then the text in fragments.
    fn text(&mut self, index: usize, block: &Value, seed: u64) {
        self.push(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}}),
        );
        for c in block["citations"].as_array().into_iter().flatten() {
            self.push(
                "content_block_delta",
                &block_delta(index, &json!({"type": "citations_delta", "citation": c})),
            );
        }
        for f in wire::fragments(block["text"].as_str().unwrap_or(""), seed) {
            self.push(
                "content_block_delta",
                &block_delta(index, &json!({"type": "text_delta", "text": f})),
            );
        }
    }

    /// A `tool_use` or `server_tool_use` block: start with empty input, an empty delta, then
    /// the arguments in pieces.
    fn tool(&mut self, kind: &str, index: usize, block: &Value, seed: u64) {
        // The start carries all but the input, a programmatic call's caller too (class 30).
        let mut start =
            json!({"type": kind, "id": block["id"], "name": block["name"], "input": {}});
        if let Some(c) = block.get("caller") {
            start["caller"] = c.clone();
        }
        self.push(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        self.push(
            "content_block_delta",
            &block_delta(
                index,
                &json!({"type": "input_json_delta", "partial_json": ""}),
            ),
        );
        let args = if kind == "tool_use" {
            self.call += 1;
            streamed_arguments(self.ask, self.turn, self.call - 1)
        } else {
            wire::compact(&block["input"])
        };
        let pieces = argument_pieces(self.ask, self.turn, block, &args, seed);
        for f in pieces.into_iter().filter(|f| !f.is_empty()) {
            self.push(
                "content_block_delta",
                &block_delta(
                    index,
                    &json!({"type": "input_json_delta", "partial_json": f}),
                ),
            );
        }
    }
}

/// With thinking on, an assistant turn that called tools must start with its thinking block
/// (sent back unchanged): the message Anthropic answers when it does not.
pub(crate) fn missing_thinking(body: &Value) -> Option<String> {
    if body.pointer("/thinking/type").and_then(Value::as_str) != Some("enabled") {
        return None;
    }
    let messages = body.get("messages")?.as_array()?;
    for (i, m) in messages.iter().enumerate() {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let blocks = m.get("content").and_then(Value::as_array)?;
        let calls = blocks.iter().any(|b| b["type"] == "tool_use");
        let first = blocks
            .first()
            .and_then(|b| b["type"].as_str())
            .unwrap_or("");
        if calls && first != "thinking" && first != "redacted_thinking" {
            return Some(format!(
                "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            ));
        }
    }
    None
}
