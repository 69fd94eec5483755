//! The error-flag check: a tool result the caller flags as an error reaches a target that has a
//! flag with it set (Anthropic's `is_error`, Gemini's `response.error`): without it the model
//! reads the error as the tool's answer. A target without a flag (Chat, Responses) is not judged:
//! its encoders send the text as it is, noted.

use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Provider, Severity};

/// The results of `req` in order: `(call_id, name, is_error)`.
fn results(req: &ChatRequest) -> Vec<(&str, &str, bool)> {
    crate::providers::in_call_order(&req.messages, &[])
        .into_iter()
        .map(|r| (r.call_id, r.name, r.is_error))
        .collect()
}

/// Upstream check of a round: each result `client` (the caller's request in its own format)
/// flags as an error against the same result in `sent` (by call id, else by its place among the
/// results of its tool). A result not sent is the tool-result check's finding.
pub(crate) fn error_flags(
    client: &ChatRequest,
    sent: &ChatRequest,
    target: Provider,
) -> Vec<Finding> {
    if !matches!(target, Provider::Anthropic | Provider::Gemini) {
        return Vec::new();
    }
    let (asked, got) = (results(client), results(sent));
    let mut findings = Vec::new();
    for (k, &(id, name, is_error)) in asked.iter().enumerate() {
        if !is_error {
            continue;
        }
        let place = asked[..k].iter().filter(|r| r.1 == name).count();
        let same = (got.iter().find(|r| !id.is_empty() && r.0 == id))
            .or_else(|| got.iter().filter(|r| r.1 == name).nth(place));
        if let Some(&(_, _, false)) = same {
            findings.push(Finding::new(
                FindingKind::ErrorFlag,
                Severity::Behaviour,
                Side::Upstream,
                format!(
                    "tool result for `{name}` ({id}) is an error, and reached {} without its error flag (the model reads it as the tool's answer)",
                    target.slug()
                ),
            ));
        }
    }
    findings
}
