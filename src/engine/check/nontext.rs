//! The non-text result check: every part of a round's tool result given as parts (text, images)
//! reaches upstream in the target's own form (text parts may be joined into its text). A part
//! JSON-quoted into a string, an image left out of the result, or a part dropped is a finding. The
//! forms are in docs/wire-formats.md ("Tool results that are not plain text").

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side, clip};
use crate::model::{ChatRequest, Provider, ResultPart, Severity};

/// The tool results of a request, in order: `(call_id, name, content, parts)`.
fn results(req: &ChatRequest) -> Vec<(&str, &str, &str, &[ResultPart])> {
    crate::providers::in_call_order(&req.messages, &[])
        .into_iter()
        .map(|r| (r.call_id, r.name, r.content, r.parts))
        .collect()
}

/// What the target carries as parts of a result: every part, but on Gemini only the images
/// (its text goes in `response`, text parts joined).
fn carried_parts(target: Provider, parts: &[ResultPart]) -> Vec<&ResultPart> {
    parts
        .iter()
        .filter(|p| target != Provider::Gemini || !matches!(p, ResultPart::Text { .. }))
        .collect()
}

/// The image's bytes from its base64 text in either alphabet (standard or URL-safe, padded or
/// not: pydantic, under Google's SDK, writes URL-safe, and Gemini takes both).
fn image_bytes(data: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let data = data.trim_end_matches('=');
    (STANDARD_NO_PAD.decode(data).ok()).or_else(|| URL_SAFE_NO_PAD.decode(data).ok())
}

/// The same part: equal, or the same image bytes whatever base64 alphabet carries them.
fn same_part(a: &ResultPart, b: &ResultPart) -> bool {
    match (a, b) {
        (
            ResultPart::Image {
                media_type: ma,
                data: da,
            },
            ResultPart::Image {
                media_type: mb,
                data: db,
            },
        ) => ma == mb && (da == db || image_bytes(da).is_some_and(|x| image_bytes(db) == Some(x))),
        _ => a == b,
    }
}

/// A string holding JSON parts: an array of part objects (any API's spelling) quoted into the
/// text, or a part object.
fn quoted(content: &str) -> bool {
    match serde_json::from_str::<Value>(content.trim()) {
        Ok(Value::Array(items)) => items.iter().any(Value::is_object),
        Ok(Value::Object(o)) => o.contains_key("type"),
        _ => false,
    }
}

/// The result of `results` matching `(id, name)` (the `place`-th of that tool's otherwise).
fn matching<'a>(
    results: &'a [(&'a str, &'a str, &'a str, &'a [ResultPart])],
    (id, name): (&str, &str),
    place: usize,
) -> Option<&'a (&'a str, &'a str, &'a str, &'a [ResultPart])> {
    (results.iter().find(|r| r.0 == id))
        .or_else(|| results.iter().filter(|r| r.1 == name).nth(place))
}

/// Upstream check of a follow-up round: each result `next` gives as parts (the round's request
/// as the caller asked it) against the same result in `sent` (the upstream request decoded by
/// the target's request decoder), matched by call id, else by its place among the results of
/// the same tool. The parts expected are those the client's own request carried (`client`,
/// decoded from its format: Gemini's joins text parts, for one).
pub(crate) fn non_text_results(
    next: &ChatRequest,
    client: &ChatRequest,
    sent: &ChatRequest,
    target: Provider,
) -> Vec<Finding> {
    let (asked, client_results, sent_results) = (results(next), results(client), results(sent));
    let mut findings = Vec::new();
    for (k, &(id, name, content, parts)) in asked.iter().enumerate() {
        if parts.is_empty() {
            continue;
        }
        let place = asked[..k].iter().filter(|r| r.1 == name).count();
        let parts = matching(&client_results, (id, name), place).map_or(parts, |r| r.3);
        let Some((_, _, sent_content, sent_parts)) = matching(&sent_results, (id, name), place)
        else {
            continue; // A result not sent at all is the tool-result check's finding.
        };
        let problem = |what: String| {
            Finding::new(
                FindingKind::NonTextResult,
                Severity::Breaking,
                Side::Upstream,
                format!("tool result for `{name}` ({id}): {what}"),
            )
        };
        if quoted(sent_content) {
            findings.push(problem(format!(
                "its parts were JSON-quoted into one string: {}",
                clip(sent_content)
            )));
            continue;
        }
        let got = carried_parts(target, sent_parts);
        // Text parts joined into the result's text lose nothing the model reads: only a part
        // the sent text does not hold (an image, a text missing) must come as a part.
        let joined = |p: &ResultPart| matches!(p, ResultPart::Text { text } if sent_content.contains(text.as_str()));
        let expected: Vec<&ResultPart> = carried_parts(target, parts)
            .into_iter()
            .filter(|p| got.iter().any(|g| same_part(g, p)) || !joined(p))
            .collect();
        if !expected.is_empty() && got.is_empty() {
            let why = if sent_content.trim().is_empty() {
                "dropped"
            } else {
                "not sent in the result (its text was)"
            };
            findings.push(problem(format!(
                "its {} parts were {why}, though {} carries them",
                expected.len(),
                target.slug()
            )));
            continue;
        }
        for part in (expected.iter()).filter(|p| !got.iter().any(|g| same_part(g, p))) {
            findings.push(problem(format!(
                "{} was dropped or altered",
                crate::providers::result_part_kind(part)
            )));
        }
        if target == Provider::Gemini && !content.is_empty() && sent_content.trim().is_empty() {
            findings.push(problem("its text was dropped".into()));
        }
    }
    findings
}

/// The text protocol's form: each parts result's text parts, joined, inside its
/// `<tool_result>` text (`body` is the upstream Chat Completions body).
pub(crate) fn non_text_results_as_text(next: &ChatRequest, body: &Value) -> Vec<Finding> {
    let texts: Vec<&str> = (body.get("messages").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .collect();
    results(next)
        .into_iter()
        .filter(|r| !r.3.is_empty() && !texts.iter().any(|t| t.contains(r.2)))
        .map(|(id, name, ..)| {
            Finding::new(
                FindingKind::NonTextResult,
                Severity::Breaking,
                Side::Upstream,
                format!("tool result for `{name}` ({id}): its text parts are not in the text protocol's <tool_result>, joined"),
            )
        })
        .collect()
}
