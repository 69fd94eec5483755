//! The reasoning check: the reasoning state upstream answered with its calls (Anthropic
//! `thinking` blocks with their `signature` and `redacted_thinking` blocks, Responses `reasoning`
//! items with their `encrypted_content`, Gemini `thoughtSignature`s on `functionCall` parts)
//! reaches upstream again, unmodified, with the next round's tool results.

use serde_json::{Value, json};

use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Message, Outcome, Severity, ToolCall};

/// One piece of reasoning state as the target API takes it back: the fields the API checks
/// (the key compared) and what to call it in a finding.
struct Piece {
    key: Value,
    what: String,
}

/// The reasoning state of one assistant turn: its opaque items of the reasoning kinds and the
/// thought signatures of its calls. Other opaque items (hosted-tool blocks, Gemini thought parts,
/// which Gemini does not need back) are not reasoning state.
fn pieces(opaque: &[Value], calls: &[ToolCall]) -> Vec<Piece> {
    let mut out = Vec::new();
    for item in opaque {
        let field = |k: &str| item.get(k).cloned().unwrap_or(Value::Null);
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
        out.push(Piece { key, what });
    }
    for c in calls {
        if let Some(sig) = &c.thought_signature {
            out.push(Piece {
                key: json!(["thoughtSignature", c.name, sig]),
                what: format!("thoughtSignature of the {} call", c.name),
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
    // (a 400 without) on requests that think (Gemini 3 always does; 2.5 when thinking is on).
    // A round that asks for no thinking is judged on the other pieces only.
    let signed: Vec<ToolCall>;
    let calls = if sent.thinking.is_some() {
        &answered.tool_calls
    } else {
        signed = (answered.tool_calls.iter())
            .map(|c| ToolCall {
                thought_signature: None,
                ..c.clone()
            })
            .collect();
        &signed
    };
    let expected = pieces(&answered.opaque, calls);
    let mut carried = Vec::new();
    for m in &sent.messages {
        if let Message::Assistant {
            tool_calls, opaque, ..
        } = m
        {
            carried.extend(pieces(opaque, tool_calls).into_iter().map(|p| p.key));
        }
    }
    expected
        .into_iter()
        .filter(|p| !carried.contains(&p.key))
        .map(|p| {
            Finding::new(
                FindingKind::Reasoning,
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "reasoning not carried back: the {} upstream answered with its calls is not in the follow-up, unchanged",
                    p.what
                ),
            )
        })
        .collect()
}
