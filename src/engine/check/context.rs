//! A round the client continued with `previous_response_id` and only its new items (class 22):
//! what upstream received must hold the earlier context (the conversation's first user message
//! and the call each result answers), or carry a `previous_response_id` a Responses upstream
//! knows (it answered). A result sent upstream alone is the finding, whatever the caller got:
//! a 200 built on half the conversation, or an upstream error the gateway made. An id upstream
//! knows sent with the earlier items again is a finding too: upstream holds them already and
//! reads them twice. A library asked to continue by id must name the id upstream answered the
//! round before (client mode: a library that replays the whole conversation ignores its caller).

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
    let by_id = target == Provider::OpenaiResponses && response_id_sent(sent).is_some();
    let unknown = by_id && !known_id(target, sent, (status, answer));
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
    if response_id_sent(sent).is_none() {
        return;
    }
    let results = round_results(next);
    let earlier = next.messages[..next.messages.len() - results]
        .iter()
        .filter(|m| !matches!(m, Message::System { .. }));
    decoded.continue_after(earlier.cloned());
}

/// The `previous_response_id` a request names.
fn response_id_sent(sent: &Value) -> Option<&str> {
    sent.get("previous_response_id").and_then(Value::as_str)
}

/// A Responses request naming a `previous_response_id` upstream knew: it did unless it said it
/// did not (`previous_response_not_found`).
fn known_id(target: Provider, sent: &Value, (status, answer): (u16, &[u8])) -> bool {
    target == Provider::OpenaiResponses
        && response_id_sent(sent).is_some()
        && !(status >= 400
            && String::from_utf8_lossy(answer).contains("previous_response_not_found"))
}

/// A round sent by a `previous_response_id` upstream knows whose input repeats items upstream
/// holds already: the part of the conversation `next` before the round's results (the earlier
/// user messages, calls and results). `decoded`: the sent request read back, its input only.
pub(crate) fn repeated_upstream(
    next: &ChatRequest,
    target: Provider,
    (sent, decoded): (&Value, Option<&ChatRequest>),
    answer: (u16, &[u8]),
) -> Vec<Finding> {
    let Some(decoded) = decoded.filter(|_| known_id(target, sent, answer)) else {
        return Vec::new();
    };
    let earlier = &next.messages[..next.messages.len() - round_results(next)];
    let earlier_calls: Vec<&str> = earlier
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|c| c.id.as_str())
        .collect();
    let mut repeated: Vec<String> = Vec::new();
    let mut note = |what: String| {
        if !repeated.contains(&what) {
            repeated.push(what);
        }
    };
    for m in &decoded.messages {
        match m {
            Message::User { content } if earlier.contains(m) => {
                note(format!("the user message \"{}\"", clip(content)));
            }
            Message::Assistant { tool_calls, .. } => {
                for c in tool_calls
                    .iter()
                    .filter(|c| earlier_calls.contains(&c.id.as_str()))
                {
                    note(format!("the call `{}`", c.name));
                }
            }
            Message::Tool { call_id, name, .. }
                if earlier
                    .iter()
                    .any(|e| matches!(e, Message::Tool { call_id: id, .. } if id == call_id)) =>
            {
                note(format!("the result for `{name}`"));
            }
            _ => {}
        }
    }
    if repeated.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        FindingKind::ResponseContext,
        Severity::Behaviour,
        Side::Upstream,
        format!(
            "continued with previous_response_id and the earlier items again ({}): upstream holds them already and reads them twice",
            repeated.join(", ")
        ),
    )]
}

/// Client mode: a round the library was asked to continue by `previous_response_id` names the
/// id upstream answered the round before (`answered`, when that answer had one). Without any
/// id, the whole conversation sent instead is the finding (a round sent with neither is lost
/// context: `response_context`'s finding, so `lost` says there is one already).
pub(crate) fn continued_by_id(
    sent: &Value,
    target: Provider,
    answered: Option<&str>,
    lost: bool,
) -> Option<Finding> {
    if target != Provider::OpenaiResponses {
        return None;
    }
    // No id in the message: a known failure's reason stays the same between runs.
    let message = match (response_id_sent(sent), answered) {
        (None, _) if lost => return None,
        (None, _) => {
            "continued without previous_response_id: the whole conversation sent again instead of the id of upstream's last answer"
        }
        (Some(got), Some(want)) if got != want => {
            "continued with a previous_response_id that is not the id of upstream's last answer"
        }
        _ => return None,
    };
    Some(Finding::new(
        FindingKind::ResponseContext,
        Severity::Behaviour,
        Side::Upstream,
        message,
    ))
}

/// How many messages at the end of `next` are the round's results.
fn round_results(next: &ChatRequest) -> usize {
    next.messages
        .iter()
        .rev()
        .take_while(|m| matches!(m, Message::Tool { .. }))
        .count()
}
