//! The text protocol on `/v1/chat/completions`: a request without `tools` whose first system
//! message holds `Tool calling instructions:`. The model answers with `<tool_call>` blocks in its
//! text, well-formed or in a scenario's malformed form.

use serde_json::{Value, json};

use super::decide::{Ask, Call, FnTool, Turn};
use super::errors::Rejection;
use super::exchange::Ctx;
use super::exchange::SimResponse;
use super::openai_chat::{
    ChatOut, content_text, render_out, require_model, role, trailing_results,
};
use crate::model::{AllowedMode, ToolChoice, empty_parameters};
use crate::scenario::Malformed;

const MARKER: &str = "Tool calling instructions:";
const MANIFEST: &str = "Available tools (schema):";
const CHOICE: &str = "Tool choice is";

fn instructions(body: &Value) -> Option<String> {
    let first_system = body.get("messages")?.as_array()?.iter().find(|m| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("system" | "developer")
        )
    })?;
    let text = content_text(first_system.get("content")?);
    text.trim_start().starts_with(MARKER).then_some(text)
}

/// True for a Chat request that asks for the text protocol (no native `tools`).
pub(crate) fn is_text_protocol(body: &Value) -> bool {
    let no_tools = body
        .get("tools")
        .is_none_or(|t| t.is_null() || t.as_array().is_some_and(Vec::is_empty));
    no_tools && instructions(body).is_some()
}

pub(crate) fn parse(body: &Value) -> Result<Ask, Rejection> {
    let model = require_model(body)?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text = instructions(body).unwrap_or_default();
    let mut ask = Ask::new(model);
    ask.stream = body.get("stream") == Some(&Value::Bool(true));
    ask.tools = manifest(&text);
    let names: Vec<String> = ask.tools.iter().map(|t| t.name.clone()).collect();
    if let Some(line) = text.lines().find_map(|l| l.trim().strip_prefix(CHOICE)) {
        ask.choice = parse_choice(line, &names);
    }
    ask.parallel = !text.to_ascii_lowercase().contains("at most one");
    let results = trailing_results(&messages, |m| role(m) == "tool", "content");
    let last_user_result = messages
        .last()
        .filter(|m| role(m) == "user")
        .map(|m| content_text(m.get("content").unwrap_or(&Value::Null)));
    if !results.is_empty() {
        ask.tool_results = Some(results);
    } else if let Some(t) = last_user_result.filter(|t| t.trim_start().starts_with("<tool_result"))
    {
        ask.tool_results = Some(vec![t]);
    }
    ask.rounds_done = super::openai_chat::runs(messages.iter().map(|m| {
        role(m) == "tool"
            || role(m) == "user"
                && content_text(m.get("content").unwrap_or(&Value::Null))
                    .trim_start()
                    .starts_with("<tool_result")
    }));
    if let Some(u) = messages.iter().rev().find(|m| role(m) == "user") {
        ask.user_text = content_text(u.get("content").unwrap_or(&Value::Null));
    }
    Ok(ask)
}

/// The injected line naming the strict tools (`src/inject/`).
const STRICT_LINE: &str = "Strict tools:";

/// `- name: {compact JSON schema}` lines after the manifest heading, each tool strict when the
/// strict line names it.
fn manifest(text: &str) -> Vec<FnTool> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim().starts_with(MANIFEST))
        .skip(1);
    let mut tools = Vec::new();
    for line in lines.by_ref() {
        let Some(entry) = line.trim().strip_prefix("- ") else {
            break;
        };
        let Some((name, schema)) = entry.split_once(':') else {
            continue;
        };
        tools.push(FnTool {
            name: name.trim().to_string(),
            schema: serde_json::from_str(schema.trim()).unwrap_or_else(|_| empty_parameters()),
            strict: false,
        });
    }
    // `Strict tools: a, b. Arguments MUST conform exactly to schema.`: a model that follows the
    // instructions fills every required key of those tools, as constrained decoding would.
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    if let Some(rest) = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(STRICT_LINE))
    {
        let listed = rest.split(". ").next().unwrap_or(rest);
        let strict = mentioned(listed, &names);
        for t in &mut tools {
            t.strict = strict.contains(&t.name);
        }
    }
    tools
}

/// Names of `names` written as whole words in `s`, in `names` order.
fn mentioned(s: &str, names: &[String]) -> Vec<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    // A sentence's final period is not part of a name (names may contain dots elsewhere).
    let words: Vec<&str> = s
        .split(|c: char| !word(c))
        .map(|w| w.trim_end_matches('.'))
        .collect();
    names
        .iter()
        .filter(|n| words.contains(&n.as_str()))
        .cloned()
        .collect()
}

/// `Tool choice is auto|none|required`, `forced: NAME`, `allowed (auto|required): A, B`, and
/// tooltape's own allowed subsets (`src/inject/`): `restricted: only call these tools: "a"` and
/// `required: you MUST emit …, calling only these tools: "a", "b"`.
pub(super) fn parse_choice(rest: &str, names: &[String]) -> ToolChoice {
    let lower = rest.trim().trim_end_matches('.').to_ascii_lowercase();
    let named = mentioned(rest, names);
    let lower = lower.trim_start_matches([':', ' ', '"', '`', '\'']);
    if lower.starts_with("allowed")
        || lower.contains("only these tools")
        || lower.contains("only call these tools")
    {
        let mode = if lower.contains("required") {
            AllowedMode::Required
        } else {
            AllowedMode::Auto
        };
        return ToolChoice::Allowed { mode, tools: named };
    }
    if lower.starts_with("forced")
        || lower.contains("must call")
        || (named.len() == 1 && !lower.starts_with("none"))
    {
        return named
            .first()
            .cloned()
            .map_or(ToolChoice::Required, ToolChoice::Forced);
    }
    if lower.starts_with("none") {
        ToolChoice::None
    } else if lower.starts_with("required") {
        ToolChoice::Required
    } else {
        ToolChoice::Auto
    }
}

/// A name one edit away from `name` that is not a real tool (the `unknown_tool` form).
pub(super) fn near_miss(name: &str, ask: &Ask) -> String {
    let mut candidates = Vec::new();
    if name.chars().count() >= 4 {
        let mut s = name.to_string();
        s.pop();
        candidates.push(s);
    }
    candidates.extend([
        format!("{name}s"),
        format!("{name}_tool"),
        format!("{name}_x"),
    ]);
    candidates
        .into_iter()
        .find(|c| !ask.has_tool(c))
        .unwrap_or_else(|| format!("{name}_unknown"))
}

fn call_json(call: &Call, name: &str, form: Option<Malformed>) -> String {
    let args = call.arguments_json();
    match form {
        Some(Malformed::ArgumentsObject) => {
            json!({"name": name, "arguments": call.arguments}).to_string()
        }
        Some(Malformed::InvalidJson) => {
            format!("{{name: {}, arguments: {}}}", json!(name), json!(args))
        }
        _ => json!({"name": name, "arguments": args}).to_string(),
    }
}

/// The `<tool_call>` blocks for `calls`, in `form`; `true` when the text was cut short.
pub(crate) fn blocks(ask: &Ask, calls: &[Call], form: Option<Malformed>) -> (String, bool) {
    let jsons: Vec<String> = calls
        .iter()
        .map(|c| {
            let name = if form == Some(Malformed::UnknownTool) {
                near_miss(&c.name, ask)
            } else {
                c.name.clone()
            };
            call_json(c, &name, form)
        })
        .collect();
    if form == Some(Malformed::ArrayWrapped) {
        return (
            format!("<tool_call>[{}]</tool_call>", jsons.join(",")),
            false,
        );
    }
    let last = jsons.len().saturating_sub(1);
    let mut out = Vec::new();
    let mut cut_at = None;
    for (i, j) in jsons.iter().enumerate() {
        let block = match form {
            Some(Malformed::CodeFence) => format!("<tool_call>\n```json\n{j}\n```\n</tool_call>"),
            Some(Malformed::TrailingGt) => format!("<tool_call>{j}</tool_call>>"),
            Some(Malformed::RepeatedCloseTag) => format!("<tool_call>{j}</tool_call></tool_call>"),
            Some(Malformed::ExtraBrace) => format!("<tool_call>{j}}}</tool_call>"),
            Some(Malformed::MissingBrace) => {
                format!("<tool_call>{}</tool_call>", &j[..j.len() - 1])
            }
            Some(Malformed::MissingCloseTag) if i == last => format!("<tool_call>{j}"),
            _ => format!("<tool_call>{j}</tool_call>"),
        };
        if form == Some(Malformed::Truncated) && i == last {
            let prefix: usize = out.iter().map(|b: &String| b.len() + 1).sum();
            let mut at = "<tool_call>".len() + j.len() / 2;
            while !block.is_char_boundary(at) {
                at += 1;
            }
            cut_at = Some(prefix + at);
        }
        out.push(block);
    }
    let mut text = out.join("\n");
    if let Some(at) = cut_at {
        text.truncate(at);
    }
    (text, cut_at.is_some())
}

pub(crate) fn render(
    ctx: &Ctx<'_>,
    ask: &Ask,
    turn: &Turn,
    form: Option<Malformed>,
) -> SimResponse {
    let mut content = turn.text();
    let mut truncated = false;
    if !turn.calls.is_empty() {
        let (text, cut) = blocks(ask, &turn.calls, form);
        truncated = cut;
        if !content.is_empty() {
            content.push('\n');
        }
        content.push_str(&text);
    }
    let out = ChatOut {
        content: Some(content),
        calls: Vec::new(),
        finish: if truncated { "length" } else { "stop" },
        refusal: None,
        reasoning: None,
        wire: turn.wire.clone(),
    };
    render_out(ctx, ask, &out)
}
