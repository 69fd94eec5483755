//! A round the client continued with `previous_response_id` and only its new items (class 22):
//! what upstream received must hold the earlier context (the conversation's first user message
//! and the call each result answers), or carry a `previous_response_id` a Responses upstream
//! knows (it answered). A result sent upstream alone is the finding, whatever the caller got:
//! a 200 built on half the conversation, or an upstream error the gateway made.

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side, clip};
use crate::engine::upstream::carries;
use crate::model::{ChatRequest, Message, Provider, Severity};

/// What the caller's continued round meant: its first user message and the calls its results
/// answer (by name).
pub(crate) struct Continued<'a> {
    pub first_user: Option<&'a str>,
    pub answered: Vec<&'a str>,
}

impl<'a> Continued<'a> {
    /// Read from the whole conversation the round continues (`next`, as the engine built it).
    pub(crate) fn of(next: &'a ChatRequest) -> Continued<'a> {
        let first_user = next.messages.iter().find_map(|m| match m {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        });
        let answered = next
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { tool_calls, .. } => {
                    Some(tool_calls.iter().map(|c| c.name.as_str()).collect())
                }
                _ => None,
            })
            .unwrap_or_default();
        Continued {
            first_user,
            answered,
        }
    }
}

/// The round's upstream request (`sent`: its body; `decoded`: read back, when it decodes)
/// against what the caller's continuation meant; `(status, answer)`: what upstream answered.
pub(crate) fn response_context(
    meant: &Continued<'_>,
    target: Provider,
    (sent, decoded): (&Value, Option<&ChatRequest>),
    (status, answer): (u16, &[u8]),
) -> Vec<Finding> {
    let by_id = target == Provider::OpenaiResponses
        && sent
            .get("previous_response_id")
            .is_some_and(|v| !v.is_null());
    // Upstream knew the id unless it said it did not (`previous_response_not_found`).
    let unknown =
        status >= 400 && String::from_utf8_lossy(answer).contains("previous_response_not_found");
    if by_id && !unknown {
        return Vec::new();
    }
    let mut missing = Vec::new();
    if let Some(user) = meant.first_user.map(str::trim).filter(|u| !u.is_empty())
        && !carries(sent, user)
    {
        missing.push(format!("the first user message \"{}\"", clip(user)));
    }
    let called: Vec<&str> = decoded
        .map(|d| {
            d.messages
                .iter()
                .flat_map(|m| match m {
                    Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
                    _ => &[],
                })
                .map(|c| c.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    for name in &meant.answered {
        // The text protocol carries calls as prose: its body holding the name is the call.
        let held = match decoded {
            Some(_) => called.contains(name),
            None => carries(sent, name),
        };
        if !held && !missing.iter().any(|m| m.ends_with(&format!("`{name}`"))) {
            missing.push(format!("the call `{name}`"));
        }
    }
    if missing.is_empty() {
        return Vec::new();
    }
    let how = if by_id {
        format!(" and a previous_response_id upstream did not know ({status})")
    } else {
        String::new()
    };
    vec![Finding::new(
        FindingKind::ResponseContext,
        Severity::Breaking,
        Side::Upstream,
        format!(
            "the client continued with previous_response_id; upstream got the results without {}{how}: an answer built on half the conversation",
            missing.join(" and ")
        ),
    )]
}

/// A request sent with a `previous_response_id` upstream knows, read as what upstream holds:
/// the conversation `next` before the round's results, then what was sent.
pub(crate) fn held_upstream(next: &ChatRequest, sent: &Value, decoded: &mut ChatRequest) {
    if sent.get("previous_response_id").is_none_or(Value::is_null) {
        return;
    }
    let results = next
        .messages
        .iter()
        .rev()
        .take_while(|m| matches!(m, Message::Tool { .. }))
        .count();
    let earlier = next.messages[..next.messages.len() - results]
        .iter()
        .filter(|m| !matches!(m, Message::System { .. }));
    decoded.continue_after(earlier.cloned());
}
