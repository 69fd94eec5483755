//! The tool-set check (class 26): when a conversation's tools change between rounds, the tools
//! upstream receives with a round are exactly the tools in force for it: every tool put in force
//! is there, and no tool taken out of force is. Judged on each round of a case that changes its
//! tools, by tool name (the tools' translation is the request check's).

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side};
use crate::model::Severity;

/// Round `n`'s finding when the tools sent upstream (`sent`) are not the tools in force
/// (`in_force`): one finding naming what is missing and what is extra.
pub(crate) fn tool_set(n: usize, in_force: &[&str], sent: &[&str]) -> Option<Finding> {
    let missing: Vec<&str> = (in_force.iter().copied())
        .filter(|t| !sent.contains(t))
        .collect();
    let extra: Vec<&str> = (sent.iter().copied())
        .filter(|t| !in_force.contains(t))
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return None;
    }
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("in force but not sent: {}", list(&missing)));
    }
    if !extra.is_empty() {
        parts.push(format!("sent but not in force: {}", list(&extra)));
    }
    Some(Finding::new(
        FindingKind::ToolSet,
        Severity::Breaking,
        Side::Upstream,
        format!(
            "round {}: the tools sent upstream are not the tools in force ({})",
            n + 1,
            parts.join("; ")
        ),
    ))
}

/// The tool names the text protocol's injected instructions list (`Available tools (schema):`,
/// one `- NAME: {schema}` line each), the last such list in a Chat body.
pub(crate) fn text_protocol_tools(body: &Value) -> Vec<String> {
    let messages = body.get("messages").and_then(Value::as_array);
    let mut names = Vec::new();
    for m in messages.into_iter().flatten() {
        let Some(content) = m.get("content").and_then(Value::as_str) else {
            continue;
        };
        let Some((_, list)) = content.split_once("Available tools (schema):\n") else {
            continue;
        };
        // The last manifest is the one in force.
        names.clear();
        for line in list.lines() {
            let Some(entry) = line.strip_prefix("- ") else {
                break;
            };
            if let Some((name, _)) = entry.split_once(": ") {
                names.push(name.to_string());
            }
        }
    }
    names
}
