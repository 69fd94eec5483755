//! The checks of tools a target may not express: a hosted tool sent to a target without it must
//! be refused, never dropped or sent as a function the client cannot run (class 23); a name over
//! the target's limit must be refused, or shortened upstream and restored in every call the
//! client gets (class 24). A hosted tool the case's model refuses is the caller's refusal in
//! client mode.

use super::finding::{Finding, FindingKind, Side};
use super::view::RequestView;
use crate::model::{Outcome, Provider, Severity, Tool};

/// The function names a gateway might give a hosted search it cannot send as one.
const SEARCH_NAMES: [&str; 3] = ["web_search", "google_search", "web_search_preview"];

/// Upstream: the client asked for hosted web search; what went upstream carries it, or the
/// request was not sent at all (refused: the trial never reaches this check). A search dropped
/// while the rest is forwarded is a 200 the client cannot tell from a model that chose not to
/// search. REQUIRED grounding has its own finding (`upstream`); this is the AUTO case.
pub(crate) fn hosted_kept(
    client: &RequestView,
    sent: &RequestView,
    requires_grounding: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if !client.hosted_search || requires_grounding {
        return out;
    }
    let as_function = sent.tools.iter().find(|t| {
        SEARCH_NAMES.contains(&t.name.as_str()) && !client.tools.iter().any(|c| c.name == t.name)
    });
    if let Some(t) = as_function {
        out.push(unexpressible(format!(
            "hosted web search sent as a function `{}` the client cannot run (refuse instead)",
            t.name
        )));
    } else if !sent.hosted_search {
        out.push(unexpressible(
            "hosted web search dropped from the request (refuse it where the target has none)",
        ));
    }
    out
}

/// Client mode: upstream answered 400 that a hosted tool type the library sent (in the sent
/// body's `tools`, by `type` or as a Gemini tool's key) is not supported with the model, and the
/// case's model refuses that type (`[simulate] unsupported_tool_types`). The refusal is the
/// case's, not the library's: a pass-through library sends the hosted tool its caller wrote and
/// hands the 400 to its caller as an error (judged downstream); it need not retry with another
/// variant (`web_search_preview`), which is tooltape's own fallback.
pub(crate) fn caller_tool_unsupported(
    unsupported: &[String],
    sent_body: &serde_json::Value,
    status: u16,
    message: &str,
) -> bool {
    let tools = sent_body.get("tools").and_then(serde_json::Value::as_array);
    let sent = |t: &str| {
        tools.into_iter().flatten().any(|tool| {
            tool.get("type").and_then(serde_json::Value::as_str) == Some(t) || tool.get(t).is_some()
        })
    };
    unsupported
        .iter()
        .any(|t| sent(t) && crate::capability::is_variant_rejection(status, message, t))
}

fn unexpressible(message: impl Into<String>) -> Finding {
    Finding::new(
        FindingKind::Unexpressible,
        Severity::Breaking,
        Side::Upstream,
        message,
    )
}

/// Upstream: every tool name sent is one `target`'s documented rule accepts (OpenAI and
/// Anthropic: at most 64 of `[a-zA-Z0-9_-]`; Gemini: at most 128). A name over the limit must be
/// refused or shortened, never forwarded for the provider to refuse.
pub(crate) fn names_within_limits(sent: &RequestView, target: Provider) -> Vec<Finding> {
    let too_long: Vec<&Tool> = sent
        .tools
        .iter()
        .filter(|t| crate::providers::tool_name_problem(target, &t.name).is_some())
        .collect();
    too_long
        .iter()
        .map(|t| {
            Finding::new(
                FindingKind::ToolName,
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "tool name {} ({} characters) sent to {}: {}",
                    super::finding::clip(&t.name),
                    t.name.chars().count(),
                    target.slug(),
                    crate::providers::tool_name_problem(target, &t.name).unwrap_or_default()
                ),
            )
        })
        .collect()
}

/// Downstream: a call the client got names a tool the client declared, not one the gateway
/// declared upstream in its place: a gateway that shortened a long name upstream must give the
/// call back under the client's name. (A call to a tool neither side declared is the model's.)
pub(crate) fn names_restored(declared: &[Tool], sent: &[Tool], got: &Outcome) -> Vec<Finding> {
    let is = |tools: &[Tool], name: &str| tools.iter().any(|t| t.name == name);
    got.tool_calls
        .iter()
        .filter(|c| !is(declared, &c.name) && is(sent, &c.name))
        .map(|c| {
            Finding::new(
                FindingKind::ToolName,
                Severity::Breaking,
                Side::Downstream,
                format!(
                    "call names `{}`, the gateway's name upstream, not the client's (not restored)",
                    c.name
                ),
            )
        })
        .collect()
}
