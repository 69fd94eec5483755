//! What the upstream checks compare: a request read as a `RequestView` (tools, choice, parallel
//! switch, hosted search, calls and results), its schemas read by meaning (local `$ref`s
//! inlined, spellings that change no constraint made one), and the text protocol's calls and
//! results read from its prose.

use serde_json::Value;

use crate::model::{ChatRequest, HostedTool, Message, Tool, ToolChoice};

/// What the upstream checks compare, taken from a request decoded by the project's request
/// decoders (`providers::decode_request`): tools, the choice's meaning, the parallel switch,
/// hosted search, the calls of the conversation and the results that answer them.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RequestView {
    pub tools: Vec<Tool>,
    /// `None`: omitted (the provider's default, auto).
    pub choice: Option<ToolChoice>,
    /// `Some(false)`: parallel calls switched off.
    pub parallel: Option<bool>,
    pub hosted_search: bool,
    /// `(call id, tool name)` of every tool call in the conversation.
    pub calls: Vec<(String, String)>,
    /// `(call id, tool name)` of every tool result.
    pub results: Vec<(String, String)>,
    /// The text of each tool result, in the order of `results` (empty when the wire's reader
    /// does not carry it, as for the text protocol's prose).
    pub result_texts: Vec<String>,
}

impl RequestView {
    pub(crate) fn of(r: &ChatRequest) -> RequestView {
        let mut view = RequestView {
            tools: r.tools.clone(),
            choice: r.tool_choice.clone(),
            parallel: r.parallel_tool_calls,
            hosted_search: r
                .hosted
                .iter()
                .any(|h| matches!(h, HostedTool::WebSearch { .. })),
            ..RequestView::default()
        };
        for m in &r.messages {
            match m {
                Message::Assistant { tool_calls, .. } => view
                    .calls
                    .extend(tool_calls.iter().map(|c| (c.id.clone(), c.name.clone()))),
                Message::Tool {
                    call_id,
                    name,
                    content,
                    ..
                } => {
                    view.results.push((call_id.clone(), name.clone()));
                    view.result_texts.push(content.clone());
                }
                _ => {}
            }
        }
        view
    }
}

impl RequestView {
    /// The view with each tool's schema in one spelling of its meaning (`schema::by_meaning`).
    pub(crate) fn by_meaning(mut self) -> RequestView {
        for t in &mut self.tools {
            t.parameters = crate::schema::by_meaning(&t.parameters);
        }
        self
    }
}

/// The calls and results of a text-protocol request body (a Chat Completions body without
/// tools), read from its prose: each `<tool_call>{"name":…}</tool_call>` of an assistant message
/// and each `<tool_result name="…" call_id="…">` opening of a user message. Calls carry no id
/// on this wire, so results are linked by name: their ids are left empty, as for Gemini.
pub(crate) fn text_protocol_view(body: &Value) -> RequestView {
    let mut view = RequestView::default();
    let messages = body.get("messages").and_then(Value::as_array);
    for m in messages.into_iter().flatten() {
        let Some(content) = m.get("content").and_then(Value::as_str) else {
            continue;
        };
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => view.calls.extend(
                tagged(content, "<tool_call>", "</tool_call>")
                    .filter_map(|json| serde_json::from_str::<Value>(json).ok())
                    .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                    .map(|name| (String::new(), name)),
            ),
            Some("user") => view.results.extend(
                content
                    .split("<tool_result ")
                    .skip(1)
                    .filter_map(|tag| xml_attr_value(tag, "name"))
                    .map(|name| (String::new(), name)),
            ),
            _ => {}
        }
    }
    view
}

/// The text between each `open` and the next `close` in `s`.
fn tagged<'a>(s: &'a str, open: &'a str, close: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    s.split(open)
        .skip(1)
        .filter_map(move |rest| rest.split_once(close).map(|(inner, _)| inner))
}

/// The value of attribute `key` of the opening tag `s` starts with (its attributes, up to `>`),
/// unescaped as the text protocol's encoder escapes values (`&amp;`, `&quot;`, `&lt;`): a value
/// ends at the next `"`, so a `>` inside one is read as text.
fn xml_attr_value(s: &str, key: &str) -> Option<String> {
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        let (k, after) = rest.split_once("=\"")?;
        if k.is_empty() || k.contains(['>', ' ', '"']) {
            return None;
        }
        let (raw, after) = after.split_once('"')?;
        if k == key {
            return Some(
                raw.replace("&lt;", "<")
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&"),
            );
        }
        rest = after;
    }
}
