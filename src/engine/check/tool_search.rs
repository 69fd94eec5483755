//! Deferred tools, tool search and namespaces (classes 28 and 29): upstream, each tool the
//! caller deferred reaches the target declared and deferred, beside the caller's tool search,
//! and each namespaced function in its namespace; downstream, a tool search the upstream ran
//! reaches the caller as server activity, never as a call of the caller's own nor dropped, and
//! each call keeps its `namespace` (a replay without it is Responses' 400). A target that cannot
//! express them refuses the request before it is sent (the encoders' codes), so a trial that
//! reaches these checks had a target that can.

use super::downstream::Check;
use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Outcome, Severity};

/// Whether a call's name is a tool search's (Responses `tool_search`, Anthropic
/// `tool_search_tool_*`): the server's search handed to the client as its own call.
fn is_search_name(name: &str) -> bool {
    name == "tool_search" || name.starts_with("tool_search_tool_")
}

fn upstream_finding(message: String) -> Finding {
    Finding::new(
        FindingKind::ToolSearch,
        Severity::Breaking,
        Side::Upstream,
        message,
    )
}

fn downstream_finding(message: String) -> Finding {
    Finding::new(
        FindingKind::ToolSearch,
        Check::ToolSearch.severity(),
        Side::Downstream,
        message,
    )
}

/// Upstream: the caller's tool search, deferred tools and namespaces, as `sent` carries them.
pub(crate) fn deferral_kept(client: &ChatRequest, sent: &ChatRequest) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(search) = client.tool_search()
        && sent.tool_search().is_none()
    {
        out.push(upstream_finding(format!(
            "tool search `{search}` dropped from the request (refuse it where the target has none)"
        )));
    }
    for t in &client.tools {
        let Some(s) = sent.tool(&t.name) else {
            if t.defer_loading {
                out.push(upstream_finding(format!(
                    "deferred tool `{}` dropped from the request (declared and deferred, a search could load it)",
                    t.name
                )));
            }
            continue;
        };
        if t.defer_loading && !s.defer_loading {
            out.push(upstream_finding(format!(
                "deferred tool `{}` sent loaded (`defer_loading` dropped: its definition fills the context a search was to spare)",
                t.name
            )));
        }
        if t.namespace.is_some() && s.namespace != t.namespace {
            out.push(upstream_finding(format!(
                "tool `{}` sent outside its namespace {:?} (its calls would carry none)",
                t.name,
                t.namespace.as_deref().unwrap_or_default()
            )));
        }
    }
    out
}

/// Downstream: the tool search `expected` (what upstream answered) reports reaches the caller
/// (`got`) as server activity; `reads_activity`: the caller's answer can say it (an HTTP answer
/// in an API that has it; a library hands only calls, so there only a call made of the search
/// is judged). Each call keeps its namespace where the caller's answer carries one.
pub(crate) fn search_kept(expected: &Outcome, got: &Outcome, reads_activity: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    if expected.tool_search.is_some() {
        let handed = got.tool_calls.iter().find(|c| is_search_name(&c.name));
        if let Some(c) = handed {
            out.push(downstream_finding(format!(
                "the upstream's tool search handed to the client as its own call `{}` (a server call the client cannot run; its result goes back as a tool result the API refuses)",
                c.name
            )));
        } else if reads_activity && got.tool_search.is_none() {
            out.push(downstream_finding(
                "the upstream's tool search dropped from the answer (the client cannot tell which tools it loaded)"
                    .to_string(),
            ));
        }
    }
    if reads_activity {
        let calls = got.tool_calls.iter().filter(|c| !is_search_name(&c.name));
        for (want, c) in expected.tool_calls.iter().zip(calls) {
            if want.namespace.is_some() && c.name == want.name && c.namespace != want.namespace {
                out.push(downstream_finding(format!(
                    "call of `{}` handed over without its namespace {:?} (replayed so it is Responses' 400 Missing namespace for function_call)",
                    c.name,
                    want.namespace.as_deref().unwrap_or_default()
                )));
            }
        }
    }
    out
}
