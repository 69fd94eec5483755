//! Programmatic tool calling (class 30): upstream, the caller's runner reaches the target and
//! each tool code may call keeps its `allowed_callers`; downstream, each call the model's code
//! made reaches the caller with its `caller`, and Anthropic's `container` with the answer; on
//! the next round, each such call goes back with its caller, beside the runner's server call
//! it names, and (Anthropic) in the container it ran in. A target that cannot express them
//! refuses the request before it is sent (`PROGRAMMATIC_NOT_SUPPORTED`), so a trial that
//! reaches these checks had a target that can.

use serde_json::Value;

use super::downstream::Check;
use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity};
use crate::providers::programmatic::is_runner_call;

fn finding(side: Side, message: String) -> Finding {
    let severity = match side {
        Side::Downstream => Check::Programmatic.severity(),
        _ => Severity::Breaking,
    };
    Finding::new(FindingKind::Programmatic, severity, side, message)
}

/// Upstream: the caller's runner and each programmable tool's callers, as `sent` carries them.
pub(crate) fn programmable_kept(client: &ChatRequest, sent: &ChatRequest) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(runner) = client.programmatic()
        && sent.programmatic().is_none()
    {
        out.push(finding(
            Side::Upstream,
            format!(
                "programmatic-calling runner `{runner}` dropped from the request (refuse it where the target has none): the model cannot call tools from code"
            ),
        ));
    }
    for t in client.tools.iter().filter(|t| t.programmable()) {
        let Some(s) = sent.tool(&t.name) else {
            continue; // a dropped tool is the tools check's
        };
        if s.allowed_callers != t.allowed_callers {
            out.push(finding(
                Side::Upstream,
                format!(
                    "tool `{}` sent with callers {:?} where the client allowed {:?} (`allowed_callers` dropped or changed: who may call it changed)",
                    t.name, s.allowed_callers, t.allowed_callers
                ),
            ));
        }
    }
    out
}

/// Downstream: each call `expected` (what upstream answered) made from code reaches the caller
/// (`got`) with its caller, and the answer's container with it, where the caller's answer can
/// carry them (`inbound`: the call's own API; another API's caller gets nothing to carry).
pub(crate) fn callers_handed(expected: &Outcome, got: &Outcome, inbound: Provider) -> Vec<Finding> {
    let mut out = Vec::new();
    let own =
        |c: &crate::model::Caller| crate::providers::programmatic::caller_owner(c) == Some(inbound);
    for (want, c) in expected.tool_calls.iter().zip(&got.tool_calls) {
        let Some(caller) = want.caller.as_ref().filter(|c| own(c)) else {
            continue;
        };
        if c.name == want.name && c.caller.as_ref() != Some(caller) {
            out.push(finding(
                Side::Downstream,
                format!(
                    "call of `{}` made by the model's code handed over without its caller `{}` (sent back so, the tool was called directly, which its allowed_callers forbid)",
                    c.name, caller.id
                ),
            ));
        }
    }
    if inbound == Provider::Anthropic
        && let Some(id) = &expected.container
        && got.container.as_ref() != Some(id)
    {
        out.push(finding(
            Side::Downstream,
            format!(
                "the answer's container `{id}` not handed over (the client cannot name it to continue the programmatic calls)"
            ),
        ));
    }
    out
}

/// The round: each call of `answered` made from code goes back in `sent` (the round's upstream
/// request) with its caller, the runner's server call it names beside it, and the answer's
/// container named.
pub(crate) fn program_kept(answered: &Outcome, sent: &ChatRequest) -> Vec<Finding> {
    let mut out = Vec::new();
    let turns = || {
        sent.messages.iter().filter_map(|m| match m {
            Message::Assistant {
                tool_calls, opaque, ..
            } => Some((tool_calls, opaque)),
            _ => None,
        })
    };
    let runners: Vec<&Value> = (turns().flat_map(|(_, o)| o.iter()))
        .filter(|o| is_runner_call(o))
        .collect();
    // A Responses program sent back by reference (`item_reference` to its item id, with
    // `store`): the server that stored it reads it whole.
    let referred: Vec<&Value> = (turns().flat_map(|(_, o)| o.iter()))
        .filter(|o| o["type"] == "item_reference")
        .filter_map(|o| o.get("id"))
        .collect();
    let by_reference = |caller: &str| {
        (answered.opaque.iter())
            .filter(|o| is_runner_call(o) && o["call_id"].as_str() == Some(caller))
            .any(|o| o.get("id").is_some_and(|id| referred.contains(&id)))
    };
    for want in &answered.tool_calls {
        let Some(caller) = &want.caller else { continue };
        let back = turns()
            .flat_map(|(c, _)| c.iter())
            .find(|c| c.id == want.id);
        match back {
            Some(c) if c.caller.as_ref() != Some(caller) => out.push(finding(
                Side::Upstream,
                format!(
                    "call {} of `{}` sent back without its caller `{}` (the model's code made it: sent so, the tool was called directly, which its allowed_callers forbid)",
                    want.id, want.name, caller.id
                ),
            )),
            _ => {}
        }
        let ran = |r: &&Value| {
            [r.get("id"), r.get("call_id")]
                .into_iter()
                .flatten()
                .any(|id| id.as_str() == Some(caller.id.as_str()))
        };
        if back.is_some() && !runners.iter().any(ran) && !by_reference(&caller.id) {
            out.push(finding(
                Side::Upstream,
                format!(
                    "the runner's server call `{}` that made call {} not sent back beside it (the API refuses a caller whose source it cannot find)",
                    caller.id, want.id
                ),
            ));
        }
    }
    if let Some(id) = &answered.container
        && sent.server.container.as_ref() != Some(id)
    {
        out.push(finding(
            Side::Upstream,
            format!(
                "container `{id}` the programmatic calls ran in not named on the next round (`container`: the code cannot continue)"
            ),
        ));
    }
    out
}
