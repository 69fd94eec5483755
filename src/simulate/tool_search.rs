//! Deferred tools and tool search as the simulated model answers them (class 28), and
//! Responses namespaces (class 29): which deferred tools a search loads, the server blocks and
//! items that report it (Anthropic `server_tool_use` + `tool_search_tool_result`, Responses
//! `tool_search_call` + `tool_search_output`), and the next round checked as the APIs do: a
//! server call sent back as a client call or result, a deferred tool called that no search
//! loaded, a namespaced call replayed without its `namespace`. The simulator's own reading: it
//! shares no codec with `providers/` (sources and UNCONFIRMED wordings: docs/wire-formats.md).

use serde_json::{Value, json};

use super::decide::Ask;
use super::errors::Rejection;
use super::wire;

/// The prefix of Anthropic's tool-search server tool types and names.
const ANTHROPIC_PREFIX: &str = "tool_search_tool_";

/// Responses' hosted tool-search type.
pub(super) const RESPONSES_TYPE: &str = "tool_search";

/// Whether `ty` is a tool-search server tool type of Anthropic's.
pub(super) fn is_anthropic_search(ty: &str) -> bool {
    ty.starts_with(ANTHROPIC_PREFIX)
}

/// The search's input: the regex variant a Python `re.search()` `pattern` (the found tools'
/// names as one alternation), the BM25 one a natural-language `query` (vercel/ai's recorded
/// `anthropic-tool-search-regex.1.json`, `…-bm25.1.json`).
fn search_input(variant: &str, found: &[String]) -> Value {
    if variant.contains("regex") {
        json!({"pattern": found.join("|")})
    } else {
        json!({"query": found.join(" ")})
    }
}

/// Anthropic's search blocks: the `server_tool_use` of the tool-search tool and its
/// `tool_search_tool_result` with one `tool_reference` per tool found.
pub(super) fn anthropic_blocks(variant: &str, seed: u64, found: &[String]) -> Vec<Value> {
    let id = wire::id("srvtoolu_", seed, "tool-search", 0, 24);
    let name = match variant.rsplit_once('_') {
        Some((name, date)) if date.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => variant,
    };
    let refs: Vec<Value> = (found.iter())
        .map(|t| json!({"type": "tool_reference", "tool_name": t}))
        .collect();
    vec![
        json!({"type": "server_tool_use", "id": id, "name": name, "input": search_input(variant, found)}),
        json!({"type": "tool_search_tool_result", "tool_use_id": id,
               "content": {"type": "tool_search_tool_search_result", "tool_references": refs}}),
    ]
}

/// Responses' search items: a server `tool_search_call` and its `tool_search_output`, which
/// carries the loaded functions' definitions (a namespace's inside their namespace).
pub(super) fn responses_items(ask: &Ask, seed: u64, found: &[String]) -> Vec<Value> {
    let mut tools: Vec<Value> = Vec::new();
    for name in found {
        // The loaded function's definition: it was deferred when the request came.
        let Some(t) = (ask.deferred.iter().chain(&ask.tools)).find(|t| &t.name == name) else {
            continue;
        };
        let f = json!({"type": "function", "name": t.name, "parameters": t.schema,
                       "strict": t.strict, "defer_loading": true});
        match ask.namespace_of(name) {
            Some(space) if space != name => {
                let at = tools.iter().position(|n| n["name"] == space);
                match at {
                    Some(i) => tools[i]["tools"].as_array_mut().into_iter().for_each(|a| {
                        a.push(f.clone());
                    }),
                    None => tools.push(json!({"type": "namespace", "name": space, "tools": [f]})),
                }
            }
            _ => tools.push(f),
        }
    }
    vec![
        json!({"id": wire::id("tsc_", seed, "tsc", 0, 48), "type": "tool_search_call",
               "execution": "server", "call_id": null, "status": "completed",
               "arguments": {"paths": found}}),
        json!({"id": wire::id("tso_", seed, "tso", 0, 48), "type": "tool_search_output",
               "execution": "server", "call_id": null, "status": "completed", "tools": tools}),
    ]
}

/// An Anthropic request's history checked as the API does, and the deferred tools its searches
/// loaded: a `tool_use` of a tool-search server tool (the server call handed to the client as
/// its own) or a `tool_result` answering a `server_tool_use` is refused; so is a `tool_use` of
/// a deferred tool no earlier `tool_search_tool_result` referenced.
pub(super) fn anthropic_history(messages: &[Value], ask: &Ask) -> Result<Vec<String>, Rejection> {
    // What the searches loaded, wherever in the conversation their results stand.
    let blocks = (messages.iter())
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten();
    let loaded: Vec<String> = blocks
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_search_tool_result"))
        .flat_map(references)
        .collect();
    let mut server_ids: Vec<&str> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let blocks = m.get("content").and_then(Value::as_array);
        for (k, b) in blocks.into_iter().flatten().enumerate() {
            let at = format!("messages.{i}.content.{k}");
            let name = b.get("name").and_then(Value::as_str).unwrap_or_default();
            match b.get("type").and_then(Value::as_str).unwrap_or_default() {
                "server_tool_use" => server_ids.extend(b.get("id").and_then(Value::as_str)),
                "tool_use" if is_anthropic_search(name) => {
                    return Err(Rejection::bad_request(format!(
                        "{at}: `{name}` is a server tool: its call is a `server_tool_use` block, not a `tool_use` block"
                    )));
                }
                "tool_use"
                    if ask.deferred.iter().any(|t| t.name == name)
                        && !loaded.iter().any(|l| l == name) =>
                {
                    return Err(Rejection::bad_request(format!(
                        "{at}: tool '{name}' is deferred (defer_loading: true) and no tool search loaded it"
                    )));
                }
                "tool_result" => {
                    let id = b.get("tool_use_id").and_then(Value::as_str);
                    if let Some(id) = id.filter(|id| server_ids.contains(id)) {
                        return Err(Rejection::bad_request(format!(
                            "{at}: tool_result answers `{id}`, a server_tool_use block: server tool results are the server's"
                        )));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(loaded)
}

/// The tool names a `tool_search_tool_result` references (a list, or a
/// `tool_search_tool_search_result`'s `tool_references`).
fn references(block: &Value) -> Vec<String> {
    let content = block.get("content");
    let refs =
        (content.and_then(Value::as_array)).or_else(|| content?.get("tool_references")?.as_array());
    (refs.into_iter().flatten())
        .filter_map(|r| r.get("tool_name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// A Responses request's input items checked as the API does, and the deferred functions its
/// searches loaded: a `function_call` of a namespaced function without its `namespace` is
/// OpenAI's `400 Missing namespace for function_call`; a `function_call` named `tool_search`, or
/// a `function_call_output` answering a `tool_search_call`, hands the server's search to the
/// client and is refused; a deferred function called that no search loaded is refused.
pub(super) fn responses_history(items: &[Value], ask: &Ask) -> Result<Vec<String>, Rejection> {
    let loaded: Vec<String> = (items.iter())
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("tool_search_output"))
        .flat_map(crate::providers::openai_responses::search_loaded)
        .collect();
    let mut search_ids: Vec<&str> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
        match item.get("type").and_then(Value::as_str).unwrap_or_default() {
            "tool_search_call" => search_ids.extend(item.get("call_id").and_then(Value::as_str)),
            "function_call" if name == RESPONSES_TYPE && ask.tool_search.is_some() => {
                return Err(Rejection::bad_request(format!(
                    "input[{i}]: `tool_search` is a hosted tool: its call is a `tool_search_call` item, not a `function_call`"
                ))
                .param(&format!("input[{i}]")));
            }
            "function_call" => {
                let space = item.get("namespace").and_then(Value::as_str);
                if ask.namespace_of(name).is_some_and(|_| space.is_none()) {
                    return Err(
                        Rejection::bad_request("Missing namespace for function_call")
                            .param(&format!("input[{i}].namespace")),
                    );
                }
                let deferred = ask.deferred.iter().any(|t| t.name == name);
                if deferred && !loaded.iter().any(|l| l == name) {
                    return Err(Rejection::bad_request(format!(
                        "input[{i}]: function '{name}' is deferred (defer_loading: true) and no tool search loaded it"
                    ))
                    .param(&format!("input[{i}]")));
                }
            }
            "function_call_output" => {
                let id = item.get("call_id").and_then(Value::as_str);
                if let Some(id) = id.filter(|id| search_ids.contains(id)) {
                    return Err(Rejection::bad_request(format!(
                        "input[{i}]: function_call_output answers `{id}`, a tool_search_call"
                    ))
                    .param(&format!("input[{i}].call_id")));
                }
            }
            _ => {}
        }
    }
    Ok(loaded)
}

#[cfg(test)]
#[path = "tests/tool_search.rs"]
mod tests;
