//! The call-id check: every call id and result id the system sends upstream is valid in the
//! target's API (`providers::call_ids`: Anthropic `^[a-zA-Z0-9_-]+$`, Chat ids and Responses
//! `call_id` at most 64 characters), whatever API the client's ids came from; the
//! ids the client gets are valid in its API and distinct, calls sharing an id upstream never
//! merged (`downstream_ids`); each result reaches upstream linked to its own call (`linked`).

use super::finding::{Finding, FindingKind, Side, clip};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity, ToolCall};
use crate::providers::call_ids::invalid as invalid_id;

fn found(side: Side, what: &str, id: &str, why: &str) -> Finding {
    Finding::new(
        FindingKind::CallId,
        Severity::Breaking,
        side,
        format!("{what} id {:?} is invalid for its API: {why}", clip(id)),
    )
}

/// Upstream: the ids of every call and result of the request sent to `target` (decoded by the
/// target's request decoder). An id the client itself sent that is invalid in its own API is
/// the client's fault, not a finding: `client` is the client's request and `inbound` its API.
pub(crate) fn upstream_ids(
    sent: &ChatRequest,
    target: Provider,
    client: &ChatRequest,
    inbound: Provider,
) -> Vec<Finding> {
    let clients_fault =
        |id: &str| invalid_id(inbound, id).is_some() && ids(client).any(|c| c == id);
    let mut out: Vec<Finding> = Vec::new();
    for id in ids(sent) {
        if let Some(why) = invalid_id(target, id)
            && !clients_fault(id)
            && !out
                .iter()
                .any(|f| f.message.contains(&format!("{:?}", clip(id))))
        {
            out.push(found(Side::Upstream, "call", id, why));
        }
    }
    out
}

/// The call and result ids of a request's conversation.
fn ids(r: &ChatRequest) -> impl Iterator<Item = &str> {
    r.messages.iter().flat_map(|m| match m {
        Message::Assistant { tool_calls, .. } => {
            tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>()
        }
        Message::Tool { call_id, .. } => vec![call_id.as_str()],
        _ => Vec::new(),
    })
}

/// Downstream: the ids of the calls the client got (`got`, decoded in its API `inbound`) are
/// valid in that API and distinct, and calls upstream answered under one shared id (`expected`,
/// upstream's answer decoded) reach the client as as many calls, never merged into one.
pub(crate) fn downstream_ids(
    inbound: Provider,
    got: &Outcome,
    expected: Option<&Outcome>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for c in got.tool_calls.iter().filter(|c| !c.id.is_empty()) {
        // Chat documents no uniqueness of a call's id (Anthropic's `tool_use` ids and Responses'
        // `call_id`s are unique): a Chat answer passing on the id upstream itself gave two calls
        // breaks no rule; one a gateway made twice does.
        let passed_on = inbound == Provider::OpenaiChat
            && expected.is_some_and(|e| e.tool_calls.iter().filter(|x| x.id == c.id).count() > 1);
        if seen.contains(&c.id.as_str()) && !passed_on {
            out.push(Finding::new(
                FindingKind::CallId,
                Severity::Breaking,
                Side::Downstream,
                format!("call id {:?} repeated in one answer", clip(&c.id)),
            ));
        } else if let Some(why) = invalid_id(inbound, &c.id) {
            out.push(found(Side::Downstream, "the client's call", &c.id, why));
        }
        seen.push(&c.id);
    }
    if let Some(exp) = expected
        && let Some(shared) = repeated(&exp.tool_calls)
        && got.tool_calls.len() < exp.tool_calls.len()
    {
        out.push(Finding::new(
            FindingKind::CallId,
            Severity::Breaking,
            Side::Downstream,
            format!(
                "{} calls upstream answered (two sharing id {:?}) handed over as {}: merged",
                exp.tool_calls.len(),
                clip(shared),
                got.tool_calls.len()
            ),
        ));
    }
    out
}

/// The first id two of `calls` share.
fn repeated(calls: &[ToolCall]) -> Option<&str> {
    calls.iter().enumerate().find_map(|(i, c)| {
        (!c.id.is_empty() && calls[..i].iter().any(|b| b.id == c.id)).then_some(c.id.as_str())
    })
}

/// Upstream: each tool result of the client's conversation (`client`) reaches upstream (`sent`,
/// decoded by the target's request decoder, which links results as the target API does: by id,
/// Gemini's by order and name) linked to the call it answers. A result is told by its text; it
/// is linked wrongly when the call it answers upstream differs from the client's and another
/// call upstream is the client's (same name and arguments). Calls sharing one id are answered
/// in order.
pub(crate) fn linked(client: &ChatRequest, sent: &ChatRequest) -> Vec<Finding> {
    let want = answered(client);
    let got = answered(sent);
    let calls: Vec<&ToolCall> = sent
        .messages
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut used = vec![false; got.len()];
    let mut out = Vec::new();
    for (text, call) in &want {
        let Some(call) = call else { continue };
        let Some(j) = (0..got.len()).find(|&j| !used[j] && same_text(&got[j].0, text)) else {
            continue;
        };
        used[j] = true;
        let Some(up) = got[j].1 else { continue };
        let same = |c: &ToolCall| c.name == call.name && c.arguments == call.arguments;
        if !same(up) && calls.iter().any(|c| same(c)) {
            out.push(Finding::new(
                FindingKind::CallId,
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "the result for {}({}) is linked to the call {}({}) upstream",
                    call.name,
                    clip(&call.arguments.to_string()),
                    up.name,
                    clip(&up.arguments.to_string())
                ),
            ));
        }
    }
    out
}

/// Each tool result of `r` with the call it answers: by its id, among the calls of the latest
/// assistant message before it, the first not answered yet (calls sharing an id are answered
/// in order), else the first with that id.
fn answered(r: &ChatRequest) -> Vec<(String, Option<&ToolCall>)> {
    let mut out = Vec::new();
    let mut calls: &[ToolCall] = &[];
    let mut taken: Vec<bool> = Vec::new();
    for m in &r.messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                calls = tool_calls;
                taken = vec![false; calls.len()];
            }
            Message::Tool {
                call_id, content, ..
            } => {
                let k = (0..calls.len())
                    .find(|&k| !taken[k] && &calls[k].id == call_id)
                    .or_else(|| calls.iter().position(|c| &c.id == call_id));
                if let Some(k) = k {
                    taken[k] = true;
                }
                out.push((content.clone(), k.map(|k| &calls[k])));
            }
            _ => {}
        }
    }
    out
}

/// Two result texts that say the same (JSON compared by value).
fn same_text(a: &str, b: &str) -> bool {
    let parsed = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    a.trim() == b.trim() || parsed(a).is_some_and(|x| Some(x) == parsed(b))
}
