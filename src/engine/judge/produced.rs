//! A model server's own answers against the contract the caller set (`check::produced`): the
//! first answer under the trial's `tool_choice` and parallel switch, each round's under the
//! round's own request (its tools in force; a round's choice is `auto` unless the case says).
//! An error answer, or a request its API rejects, is judged by the downstream checks instead.

use super::super::check::{self, Asked};
use super::super::finding::Finding;
use super::caller::{CallerReply, CallerRequest};
use crate::model::{ChatRequest, DecodeError, Outcome, Provider};

/// The first answer, against the request as the server was sent it (read back from its wire:
/// a schema keyword its encoder left out with a note is not one the server was asked to keep).
/// On the text protocol the wire carries no tools: tooltape's instructions carry the caller's
/// request, and the model's calls as the parser read them are judged against it.
pub(crate) fn produced(
    asked: &CallerRequest,
    outcome: &Result<Outcome, DecodeError>,
) -> Vec<Finding> {
    let sent = match &asked.decoded {
        Some(d) if asked.inbound != Provider::TextProtocol => &d.request,
        _ => &asked.req,
    };
    match outcome {
        Ok(o) if !asked.invalid && o.error.is_none() => check::produced(&of(sent), o),
        _ => Vec::new(),
    }
}

/// Round `n`'s answer to `next`.
pub(crate) fn produced_round(n: usize, next: &ChatRequest, got: &CallerReply) -> Vec<Finding> {
    let Ok((_, Ok(o))) = got else {
        return Vec::new();
    };
    if o.error.is_some() {
        return Vec::new();
    }
    let mut findings = check::produced(&of(next), o);
    for f in &mut findings {
        f.message = format!("round {}: {}", n + 1, f.message);
    }
    findings
}

fn of(req: &ChatRequest) -> Asked<'_> {
    Asked {
        choice: req.tool_choice.as_ref(),
        parallel: req.parallel_tool_calls,
        tools: &req.tools,
    }
}
