//! The downstream checks: what the gateway answered its client against what upstream answered
//! (calls, arguments, ids, finish, text, usage, errors), and the answer to a request the
//! client's own API rejects.

use super::finding::{Finding, FindingKind, Side, clip, finding, of_kind};
use crate::model::{Finish, Outcome, Provider, Severity};
use serde_json::Value;

/// Downstream check of the answer to a request the client's own API rejects (the case expects
/// its error for the inbound format): an error in the client's format with a 4xx status, whether
/// the gateway answered it itself or mapped upstream's. `status` is the HTTP status, `got` the
/// answer decoded in the inbound format.
pub(crate) fn invalid_request(status: u16, got: Result<&Outcome, String>) -> Vec<Finding> {
    of_kind(
        FindingKind::ClientFault,
        invalid_request_findings(status, got),
    )
}

fn invalid_request_findings(status: u16, got: Result<&Outcome, String>) -> Vec<Finding> {
    let side = Side::Downstream;
    let error = got.as_ref().ok().and_then(|o| o.error.as_ref());
    let finding = match (status, error) {
        (200..=299, None) => finding(
            Severity::Breaking,
            side,
            format!("an invalid request answered as a success ({status})"),
        ),
        (200..=299, Some(e)) => finding(
            Severity::Behaviour,
            side,
            format!(
                "an invalid request answered {status} with an error inside ({}); its API answers 4xx",
                clip(&e.message)
            ),
        ),
        (400..=499, Some(_)) => return Vec::new(),
        (400..=499, None) => finding(
            Severity::Breaking,
            side,
            format!(
                "an invalid request answered {status} without an error in the client's format{}",
                got.err()
                    .map(|e| format!(": {}", clip(&e)))
                    .unwrap_or_default()
            ),
        ),
        _ => finding(
            Severity::Breaking,
            side,
            format!("an invalid request answered {status} (its API answers 4xx)"),
        ),
    };
    vec![finding]
}

/// The finish value a format uses for an answer that calls tools, where it has a distinct one
/// (Responses has none; Gemini uses `STOP` for every normal end).
fn tool_call_finish(p: Provider) -> Option<&'static str> {
    match p {
        Provider::OpenaiChat | Provider::TextProtocol => Some("tool_calls"),
        Provider::Anthropic => Some("tool_use"),
        Provider::OpenaiResponses | Provider::Gemini => None,
    }
}

/// Downstream checks: `got` is the gateway's answer decoded in the inbound format, `expected`
/// upstream's answer decoded in the upstream format; `status`es are the HTTP statuses.
pub(crate) fn downstream(
    inbound: Provider,
    got_status: u16,
    got: Result<&Outcome, String>,
    up_status: u16,
    expected: Option<&Outcome>,
) -> Vec<Finding> {
    of_kind(
        FindingKind::Answer,
        downstream_findings(inbound, got_status, got, up_status, expected),
    )
}

fn downstream_findings(
    inbound: Provider,
    got_status: u16,
    got: Result<&Outcome, String>,
    up_status: u16,
    expected: Option<&Outcome>,
) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    if up_status >= 400 {
        // A success status is wrong whatever its body: one that decodes as an answer, and one
        // that does not decode at all.
        if (200..300).contains(&got_status) && !got.as_ref().is_ok_and(|o| o.error.is_some()) {
            out.push(finding(
                Severity::Breaking,
                side,
                format!("upstream {up_status} answered as {got_status} without an error"),
            ));
        }
        return out;
    }
    let got = match got {
        Ok(o) => o,
        Err(e) => {
            out.push(finding(
                Severity::Breaking,
                side,
                format!("answer does not decode: {e}"),
            ));
            return out;
        }
    };
    // A 200 whose stream failed mid-way or was cut: the client must see that (its format's
    // error event, or a stream without its terminal event), never a clean finish.
    if let Some(why) = expected.and_then(broken) {
        if got.error.is_none() && !truncated(got) {
            out.push(finding(
                Severity::Breaking,
                side,
                format!(
                    "upstream stream {why} answered as a clean finish ({:?})",
                    got.finish
                ),
            ));
        }
        return out;
    }
    if let Some(e) = &got.error {
        out.push(finding(
            Severity::Breaking,
            side,
            format!(
                "gateway answered {} ({}) to an upstream success",
                e.status,
                clip(&e.message)
            ),
        ));
        return out;
    }
    let Some(exp) = expected else {
        return out;
    };
    calls_kept(exp, got, &mut out);
    finish_kept(inbound, exp, got, &mut out);
    let norm = |t: &Option<String>| {
        t.as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    if norm(&exp.text) != norm(&got.text) {
        out.push(finding(
            Severity::Behaviour,
            side,
            format!(
                "text changed: {:?} → {:?}",
                norm(&exp.text).map(|t| clip(&t)),
                norm(&got.text).map(|t| clip(&t))
            ),
        ));
    }
    // Usage is what upstream counted: passed through, not dropped or recounted.
    let output = |o: &Outcome| o.usage.as_ref().and_then(|u| u.output_tokens);
    match (output(exp), output(got)) {
        (Some(_), None) => out.push(finding(
            Severity::Behaviour,
            side,
            "usage not passed through",
        )),
        (Some(e), Some(g)) if e != g => out.push(finding(
            Severity::Behaviour,
            side,
            format!("usage changed: {e} output tokens answered as {g}"),
        )),
        _ => {}
    }
    out
}

/// The calls the client got are upstream's: the same names in order, the same arguments, each
/// with an id of its own.
fn calls_kept(exp: &Outcome, got: &Outcome, out: &mut Vec<Finding>) {
    let side = Side::Downstream;
    let en: Vec<&str> = exp.tool_calls.iter().map(|c| c.name.as_str()).collect();
    let gn: Vec<&str> = got.tool_calls.iter().map(|c| c.name.as_str()).collect();
    if en != gn {
        out.push(finding(
            Severity::Breaking,
            side,
            format!("calls [{}] answered as [{}]", en.join(", "), gn.join(", ")),
        ));
    } else {
        for (e, g) in exp.tool_calls.iter().zip(&got.tool_calls) {
            if !same_json(&e.arguments, &g.arguments) {
                out.push(finding(
                    Severity::Breaking,
                    side,
                    format!(
                        "arguments of {} changed: {} → {}",
                        e.name,
                        clip(&e.arguments.to_string()),
                        clip(&g.arguments.to_string())
                    ),
                ));
            }
        }
    }
    // A repeated id is the call-id check's (`ids::downstream_ids`).
    for c in got.tool_calls.iter().filter(|c| c.id.is_empty()) {
        out.push(finding(
            Severity::Breaking,
            side,
            format!("call {} has no id", c.name),
        ));
    }
}

/// The finish the client got is upstream's, in the format's own value.
fn finish_kept(inbound: Provider, exp: &Outcome, got: &Outcome, out: &mut Vec<Finding>) {
    let side = Side::Downstream;
    // The neutral finish may be inferred from the calls: the raw value must be the format's own.
    let raw_wrong = tool_call_finish(inbound).is_some_and(|v| got.raw_finish.as_deref() != Some(v));
    if exp.finish == Finish::Length {
        // The output-token limit wins over the calls: a call may have been cut (its partial
        // arguments are never a valid call), and only the length finish tells the client.
        if got.finish != Finish::Length {
            out.push(finding(
                Severity::Breaking,
                side,
                format!(
                    "finish {} for upstream's output-token limit (expected the format's length value)",
                    got.raw_finish.as_deref().unwrap_or("none")
                ),
            ));
        }
    } else if !got.tool_calls.is_empty() && (got.finish != Finish::ToolCalls || raw_wrong) {
        out.push(finding(
            Severity::Breaking,
            side,
            format!(
                "finish {} with tool calls (expected the format's tool-call value)",
                got.raw_finish.as_deref().unwrap_or("none")
            ),
        ));
    } else if got.tool_calls.is_empty() && exp.finish != got.finish {
        out.push(finding(
            Severity::Behaviour,
            side,
            format!("finish {:?} answered as {:?}", exp.finish, got.finish),
        ));
    }
}

/// Why an answer that came with a success status is not whole: an error inside the stream, or
/// a stream that ended before its terminal event.
pub(crate) fn broken(o: &Outcome) -> Option<&'static str> {
    if o.error.is_some() {
        Some("error")
    } else if truncated(o) {
        Some("cut")
    } else {
        None
    }
}

fn truncated(o: &Outcome) -> bool {
    o.diagnostics
        .iter()
        .any(|d| d.kind == crate::model::DiagnosticKind::StreamTruncated)
}

/// The same JSON by meaning: numbers by value (`30.0` is `30`, as JavaScript writes it back),
/// integers exactly (a large one that lost precision is not the same).
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i128(), y.as_i128()) {
            (Some(i), Some(j)) => i == j,
            // An integer and a float: the same only when the integer survives as a float.
            (Some(i), None) | (None, Some(i)) => {
                let f = i as f64;
                f as i128 == i && x.as_f64() == y.as_f64()
            }
            (None, None) => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}
