//! The wire-level bugs of the reference driver's mutants that need more than a line: ids
//! rewritten in an encoded body, names cut in the neutral request, usage read from one chunk,
//! a hosted tool's refusal swallowed.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::client::protocol::DriverResult;
use crate::engine::{HandedCall, HandedChunk};
use crate::model::{ChatRequest, Message, Provider, ToolChoice};

/// The length OpenAI and Anthropic allow a tool name, which a library may cut every name to.
const CUT: usize = 64;

/// Every `tool_use` id of an Anthropic body, and the `tool_result`s answering it, rewritten in
/// Kimi K2's style: `functions.NAME:IDX`, IDX counting the conversation's calls.
pub(super) fn kimi_ids(body: &mut Value) {
    let mut kimi: BTreeMap<String, String> = BTreeMap::new();
    for_blocks(body, |b| {
        if b["type"] == "tool_use"
            && let (Some(id), Some(name)) = (b["id"].as_str(), b["name"].as_str())
        {
            let n = kimi.len();
            let new = format!("functions.{name}:{n}");
            kimi.entry(id.to_string()).or_insert(new);
        }
    });
    for_blocks(body, |b| {
        let key = match b["type"].as_str() {
            Some("tool_use") => "id",
            Some("tool_result") => "tool_use_id",
            _ => return,
        };
        if let Some(new) = b[key].as_str().and_then(|id| kimi.get(id)) {
            b[key] = json!(new);
        }
    });
}

/// Calls `f` on every content block of every message of an Anthropic body.
fn for_blocks(body: &mut Value, mut f: impl FnMut(&mut Value)) {
    let messages = body.get_mut("messages").and_then(Value::as_array_mut);
    for m in messages.into_iter().flatten() {
        for b in m
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            f(b);
        }
    }
}

/// Every name over 64 characters cut to its first 64: declared, forced, allowed, and in the
/// calls of the conversation so far.
pub(super) fn truncate_names(req: &mut ChatRequest) {
    let cut = |n: &mut String| {
        if let Some((at, _)) = n.char_indices().nth(CUT) {
            n.truncate(at);
        }
    };
    req.tools.iter_mut().for_each(|t| cut(&mut t.name));
    match &mut req.tool_choice {
        Some(ToolChoice::Forced(n)) => cut(n),
        Some(ToolChoice::Allowed { tools, .. }) => tools.iter_mut().for_each(cut),
        _ => {}
    }
    for m in &mut req.messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter_mut().for_each(|c| cut(&mut c.name));
            }
            Message::Tool { name, .. } => cut(name),
            _ => {}
        }
    }
}

/// Whether a Chat stream's chunk carrying the finish also carries the usage: the only usage a
/// library reading the finish chunk alone hands over.
pub(super) fn usage_on_finish(body: &[u8]) -> bool {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|c| {
            c.pointer("/choices/0/finish_reason")
                .is_some_and(Value::is_string)
        })
        .is_some_and(|c| c["usage"].is_object())
}

/// The reasoning state another API made, put into each assistant turn of `req` as `api`'s own:
/// a signature, redacted data or encrypted content of another provider's as Gemini calls'
/// thoughtSignature, an Anthropic thinking block's signature or a Responses reasoning item's
/// encrypted_content (the API then verifies what it did not make).
pub(super) fn forge_reasoning(api: Provider, req: &mut ChatRequest) {
    for m in &mut req.messages {
        let Message::Assistant {
            tool_calls, opaque, ..
        } = m
        else {
            continue;
        };
        let foreign = |v: &&Value| crate::providers::opaque::owner(v).is_some_and(|p| p != api);
        let sealed = (opaque.iter().filter(foreign))
            .flat_map(|v| ["signature", "data", "encrypted_content"].map(|k| v.get(k)))
            .flatten()
            .filter_map(Value::as_str)
            .chain(
                (tool_calls.iter())
                    .filter(|_| api != Provider::Gemini)
                    .filter_map(|c| c.thought_signature.as_deref()),
            )
            .next()
            .map(str::to_string);
        let Some(sealed) = sealed else { continue };
        match api {
            Provider::Gemini => {
                for c in tool_calls.iter_mut() {
                    c.thought_signature = Some(sealed.clone());
                }
            }
            Provider::Anthropic => opaque.insert(
                0,
                json!({"type": "thinking", "thinking": "", "signature": sealed}),
            ),
            Provider::OpenaiResponses => opaque.insert(
                0,
                json!({"type": "reasoning", "id": "rs_forged", "summary": [], "encrypted_content": sealed}),
            ),
            _ => {}
        }
    }
}

/// The caller's `tools` (in the API's wire form) appended to an encoded body's tools; with
/// `as_function`, each custom tool as a function of its name taking one string (the mutant).
pub(super) fn add_caller_tools(tools: &[Value], as_function: bool, body: &mut Value) {
    if tools.is_empty() {
        return;
    }
    let sent = tools.iter().map(|t| match (as_function, t.get("custom")) {
        (false, _) => t.clone(),
        // Chat: `{type: custom, custom: {name, description, format}}`.
        (true, Some(c)) => json!({"type": "function", "function": function_of(c)}),
        // Responses: `{type: custom, name, description, format}`.
        (true, None) => {
            let mut f = function_of(t);
            f["type"] = json!("function");
            f
        }
    });
    let sent: Vec<Value> = sent.collect();
    match body.get_mut("tools").and_then(Value::as_array_mut) {
        Some(list) => list.extend(sent),
        None => body["tools"] = Value::Array(sent),
    }
}

/// A custom tool's name and description as a function's, with one string argument.
fn function_of(custom: &Value) -> Value {
    json!({
        "name": custom["name"],
        "description": custom.get("description").cloned().unwrap_or(Value::Null),
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]},
    })
}

/// A 400 saying a tool is not supported, handed to the caller as an empty answer that finished
/// normally (streamed: one chunk with the finish), with no error.
pub(super) fn swallow_unsupported(r: &mut DriverResult, stream: bool) {
    let refused = r.error.as_ref().is_some_and(|e| {
        e.status == Some(400) && e.message.to_ascii_lowercase().contains("not supported")
    });
    if !refused {
        return;
    }
    let finish = Some("stop".to_string());
    *r = DriverResult {
        chunks: stream.then(|| {
            vec![HandedChunk {
                finish: finish.clone(),
                ..Default::default()
            }]
        }),
        finish,
        ..Default::default()
    };
}

/// `SearchAsCall`: the upstream's tool search as a call the caller gets (named as the search
/// tool, its arguments the tools it loaded).
pub(super) fn search_as_call(search: &crate::model::ToolSearchActivity) -> HandedCall {
    let name = search.tool.clone().unwrap_or_else(|| "tool_search".into());
    HandedCall {
        index: None,
        id: Some("srvtoolu_search_as_call".into()),
        name: Some(name),
        arguments: Some(Value::String(json!({"loaded": search.loaded}).to_string())),
    }
}
