//! The reasoning check: the reasoning state upstream answered with its calls (Anthropic
//! `thinking` blocks with their `signature` and `redacted_thinking` blocks, Responses `reasoning`
//! items with their `encrypted_content`, Gemini `thoughtSignature`s on `functionCall` parts, a
//! model server's reasoning text on a Chat message: `reasoning` or `reasoning_content`)
//! reaches upstream again, unmodified, with the next round's tool results; after a round that
//! changed provider, none of the earlier provider's reasoning sent to the new one as its own.
//! A Responses `item_reference` to the id of the reasoning item upstream answered is that item
//! kept (the server stored it: `store: true`); a reference to another id carries nothing.

use serde_json::{Value, json};

use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity, ToolCall};
use crate::providers::gemini::validates_signatures;

/// One piece of reasoning state as the target API takes it back: the fields the API checks
/// (the key compared) and what to call it in a finding.
struct Piece {
    key: Value,
    what: String,
    /// The item's id, by which an `item_reference` names it (Responses reasoning items).
    id: Option<Value>,
    /// Breaking where the API refuses the round without it; a model server's reasoning text
    /// is accepted missing, and the model loses the thinking its next step builds on.
    severity: Severity,
}

/// The reasoning state of one assistant turn: its opaque items of the reasoning kinds and the
/// thought signatures of its calls. Other opaque items (hosted-tool blocks, Gemini thought parts,
/// which Gemini does not need back) are not reasoning state.
fn pieces(opaque: &[Value], calls: &[ToolCall]) -> Vec<Piece> {
    let mut out = Vec::new();
    for item in opaque {
        if crate::providers::openai_chat::reasoning::is_item(item) {
            let fields: Vec<String> = item
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| format!("`{k}`"))
                .collect();
            out.push(Piece {
                key: json!(["chat", item]),
                what: format!(
                    "{} text of the assistant message (a model server's interleaved thinking: the server renders it into the next prompt)",
                    fields.join(" and ")
                ),
                id: None,
                severity: Severity::Behaviour,
            });
            continue;
        }
        let field = |k: &str| item.get(k).cloned().unwrap_or(Value::Null);
        let id = item
            .get("id")
            .filter(|_| item["type"] == "reasoning")
            .cloned();
        let (key, what) = match item.get("type").and_then(Value::as_str) {
            Some("thinking") => (
                json!(["thinking", field("thinking"), field("signature")]),
                "thinking block with its signature".to_string(),
            ),
            Some("redacted_thinking") => (
                json!(["redacted_thinking", field("data")]),
                "redacted_thinking block".to_string(),
            ),
            Some("reasoning") => match item.get("encrypted_content") {
                Some(e) if !e.is_null() => (
                    json!(["reasoning", e]),
                    "reasoning item's encrypted_content".to_string(),
                ),
                _ => (
                    json!(["reasoning", field("id")]),
                    "reasoning item".to_string(),
                ),
            },
            _ => continue,
        };
        out.push(Piece {
            key,
            what,
            id,
            severity: Severity::Breaking,
        });
    }
    for c in calls {
        if let Some(sig) = &c.thought_signature {
            out.push(Piece {
                key: json!(["thoughtSignature", c.name, sig]),
                what: format!("thoughtSignature of the {} call", c.name),
                id: None,
                severity: Severity::Breaking,
            });
        }
    }
    out
}

/// Upstream check of a follow-up round: each piece of reasoning state upstream `answered` with
/// its calls is in an assistant turn of `sent` (the round's upstream request, decoded by the
/// target's request decoder), unchanged. A round whose answer called nothing has none to carry.
pub(crate) fn reasoning(answered: &Outcome, sent: &ChatRequest) -> Vec<Finding> {
    if answered.tool_calls.is_empty() {
        return Vec::new();
    }
    // Gemini signs calls whether or not the request asked for thinking; the API needs them back
    // on the models that validate them (Gemini 3 and later, thinking whatever the request says)
    // and degrades without them on requests that think (2.5 with a thinking budget). Any other
    // round is judged on the other pieces only.
    let signed: Vec<ToolCall>;
    let calls = if sent.thinking.is_some() || validates_signatures(&sent.model) {
        &answered.tool_calls
    } else {
        signed = (answered.tool_calls.iter())
            .map(|c| ToolCall {
                thought_signature: None,
                namespace: None,
                ..c.clone()
            })
            .collect();
        &signed
    };
    let expected = pieces(&answered.opaque, calls);
    let mut carried = Vec::new();
    let mut referred = Vec::new();
    for m in &sent.messages {
        if let Message::Assistant {
            tool_calls, opaque, ..
        } = m
        {
            carried.extend(pieces(opaque, tool_calls).into_iter().map(|p| p.key));
            referred.extend(references(opaque));
        }
    }
    let kept = |p: &Piece| {
        carried.contains(&p.key) || p.id.as_ref().is_some_and(|id| referred.contains(id))
    };
    // References to none of the items upstream answered: named where the reasoning is missing.
    let ids: Vec<&Value> = answered.opaque.iter().filter_map(|i| i.get("id")).collect();
    let unknown: Vec<String> = (referred.iter())
        .filter(|r| !ids.contains(r))
        .map(|r| format!("`{}`", r.as_str().unwrap_or_default()))
        .collect();
    let instead = if unknown.is_empty() {
        String::new()
    } else {
        format!(
            " (an item_reference names {}, an id upstream did not answer)",
            unknown.join(", ")
        )
    };
    expected
        .into_iter()
        .filter(|p| !kept(p))
        .map(|p| {
            Finding::new(
                FindingKind::Reasoning,
                p.severity,
                Side::Upstream,
                format!(
                    "reasoning not carried back: the {} upstream answered with its calls is not in the follow-up, unchanged{instead}",
                    p.what
                ),
            )
        })
        .collect()
}

/// The ids a turn's Responses `item_reference` items name.
fn references(opaque: &[Value]) -> impl Iterator<Item = Value> + '_ {
    (opaque.iter())
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("item_reference"))
        .filter_map(|i| i.get("id").cloned())
}

/// The signed or encrypted values of a turn's reasoning state, whatever API's form holds them:
/// thinking signatures, redacted_thinking data, reasoning items' encrypted_content, thought
/// signatures (of calls and of Gemini parts).
fn sealed(opaque: &[Value], calls: &[ToolCall]) -> Vec<String> {
    let fields = ["signature", "data", "encrypted_content", "thoughtSignature"];
    let mut out: Vec<String> = (opaque.iter())
        .flat_map(|item| fields.iter().filter_map(|k| item.get(*k)?.as_str()))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect();
    out.extend(calls.iter().filter_map(|c| c.thought_signature.clone()));
    out
}

/// Upstream check of a round that went to another provider than the one that `answered` the
/// round before (`from`): none of that answer's reasoning state is in `sent` (the round's
/// request, decoded by the new target's decoder) as the target's own reasoning (an Anthropic
/// signature put into a Gemini thoughtSignature, a Responses item sent to Anthropic): each API
/// verifies only what it made, and answers 400 otherwise.
pub(crate) fn foreign_reasoning(
    from: Provider,
    target: Provider,
    answered: &Outcome,
    sent: &ChatRequest,
) -> Vec<Finding> {
    let theirs = sealed(&answered.opaque, &answered.tool_calls);
    let mut found: Vec<String> = Vec::new();
    for m in &sent.messages {
        if let Message::Assistant {
            tool_calls, opaque, ..
        } = m
        {
            for v in sealed(opaque, tool_calls) {
                if theirs.contains(&v) && !found.contains(&v) {
                    found.push(v);
                }
            }
        }
    }
    found
        .iter()
        .map(|v| {
            let short: String = v.chars().take(16).collect();
            Finding::new(
                FindingKind::Reasoning,
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "{}'s reasoning state (`{short}…`) sent to {} as its own: an API verifies only the reasoning it made; another provider's is dropped (or, to Gemini, calls carry its documented skip value)",
                    from.slug(),
                    target.slug()
                ),
            )
        })
        .collect()
}
