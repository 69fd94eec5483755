//! The call-id check: every call id and result id the system sends upstream is valid in the
//! target's API (`providers::call_ids`: Anthropic `^[a-zA-Z0-9_-]+$`, Chat at most 40
//! characters, Responses `call_id` at most 64), whatever API the client's ids came from.

use super::finding::{Finding, FindingKind, Side, clip};
use crate::model::{ChatRequest, Message, Provider, Severity};
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
