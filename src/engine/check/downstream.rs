//! The downstream checks: what the caller got against what upstream answered (calls,
//! arguments, ids, finish, text, usage, errors), with the one table of their severities
//! ([`Check`]) that every way's downstream judgement reads; over HTTP, the answer in the client's
//! format and the answer to a request the client's own API rejects (a library's result is
//! `handed`'s).

use super::finding::{Finding, FindingKind, Side, clip, finding, of_kind};
use crate::model::{Finish, Outcome, Provider, Severity};
use serde_json::Value;

/// The downstream checks, whatever the way: one severity each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// An upstream error, or a stream that failed or was cut, handed over as a success.
    FailureAsSuccess,
    /// The answer does not decode in the caller's format.
    Undecodable,
    /// An error handed over on an upstream success.
    ErrorOnSuccess,
    /// Upstream's calls not handed over as they were: names and order.
    Calls,
    /// A call's arguments changed, or not JSON.
    Arguments,
    /// A call handed over without an id, or with another call's.
    IdMissing,
    /// A call's id handed over as another (where the caller's API carries upstream's).
    IdChanged,
    /// Streamed calls never yielded, or yielded as fragments that are not JSON.
    Chunks,
    /// Upstream's output-token limit handed over as another finish.
    FinishOnLimit,
    /// An answer with calls that finished otherwise than with the caller's tool-call value.
    FinishWithCalls,
    /// Another finish changed.
    Finish,
    TextChanged,
    /// Usage upstream counted not handed over.
    UsageLost,
    /// Usage handed over other than upstream counted it.
    UsageChanged,
    /// A tool search the upstream ran handed over as the caller's own call or dropped, or a
    /// call's namespace lost (classes 28, 29).
    ToolSearch,
    /// A call the model's code made handed over without its caller, or Anthropic's container
    /// lost (class 30).
    Programmatic,
}

impl Check {
    /// The table: how much each downstream difference breaks the caller.
    pub(crate) fn severity(self) -> Severity {
        match self {
            Check::FailureAsSuccess
            | Check::Undecodable
            | Check::ErrorOnSuccess
            | Check::Calls
            | Check::Arguments
            | Check::IdMissing
            | Check::Chunks
            | Check::FinishOnLimit
            | Check::FinishWithCalls
            | Check::ToolSearch
            | Check::Programmatic => Severity::Breaking,
            Check::IdChanged
            | Check::Finish
            | Check::TextChanged
            | Check::UsageLost
            | Check::UsageChanged => Severity::Behaviour,
        }
    }
}

/// A downstream finding of `check` about the answer.
pub(super) fn found(check: Check, message: impl Into<String>) -> Finding {
    Finding::new(
        FindingKind::Answer,
        check.severity(),
        Side::Downstream,
        message,
    )
}

/// The text the caller got is upstream's (blank text is none).
/// `clip` shortens each text in the message.
pub(super) fn text_kept(
    expected: Option<&str>,
    got: Option<&str>,
    clip: fn(&str) -> String,
) -> Option<Finding> {
    let norm = |t: Option<&str>| {
        t.map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    (norm(expected) != norm(got)).then(|| {
        found(
            Check::TextChanged,
            format!(
                "text changed: {:?} → {:?}",
                norm(expected).map(|t| clip(&t)),
                norm(got).map(|t| clip(&t))
            ),
        )
    })
}

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
/// (Responses has none; Gemini uses `STOP` for every normal end; a text-protocol backend writes
/// its calls as text and ends them with its own `stop`: the finish is the parser's).
fn tool_call_finish(p: Provider) -> Option<&'static str> {
    match p {
        Provider::OpenaiChat => Some("tool_calls"),
        Provider::Anthropic => Some("tool_use"),
        Provider::OpenaiResponses | Provider::Gemini | Provider::TextProtocol => None,
    }
}

/// The caller's side of an answer: its format, and whether its `tool_choice` named a function
/// (OpenAI's Chat ends such a call with finish `stop`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inbound {
    pub format: Provider,
    pub named: bool,
}

impl From<Provider> for Inbound {
    fn from(format: Provider) -> Inbound {
        Inbound {
            format,
            named: false,
        }
    }
}

/// Downstream checks: `got` is the gateway's answer decoded in the inbound format, `expected`
/// upstream's answer decoded in the upstream format; `status`es are the HTTP statuses.
pub(crate) fn downstream(
    inbound: impl Into<Inbound>,
    got_status: u16,
    got: Result<&Outcome, String>,
    up_status: u16,
    expected: Option<&Outcome>,
) -> Vec<Finding> {
    let inbound = inbound.into();
    let mut out = Vec::new();
    if up_status >= 400 {
        // A success status is wrong whatever its body: one that decodes as an answer, and one
        // that does not decode at all.
        if (200..300).contains(&got_status) && !got.as_ref().is_ok_and(|o| o.error.is_some()) {
            out.push(found(
                Check::FailureAsSuccess,
                format!("upstream {up_status} answered as {got_status} without an error"),
            ));
        }
        return out;
    }
    let got = match got {
        Ok(o) => o,
        Err(e) => {
            out.push(found(
                Check::Undecodable,
                format!("answer does not decode: {e}"),
            ));
            return out;
        }
    };
    // A 200 whose stream failed mid-way or was cut: the client must see that (its format's
    // error event, or a stream without its terminal event), never a clean finish.
    if let Some(why) = expected.and_then(broken) {
        if got.error.is_none() && !truncated(got) {
            out.push(found(
                Check::FailureAsSuccess,
                format!(
                    "upstream stream {why} answered as a clean finish ({:?})",
                    got.finish
                ),
            ));
        }
        return out;
    }
    if let Some(e) = &got.error {
        out.push(found(
            Check::ErrorOnSuccess,
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
    out.extend(text_kept(exp.text.as_deref(), got.text.as_deref(), clip));
    // Usage is what upstream counted: passed through, not dropped or recounted.
    let output = |o: &Outcome| o.usage.as_ref().and_then(|u| u.output_tokens);
    match (output(exp), output(got)) {
        (Some(_), None) => out.push(found(Check::UsageLost, "usage not passed through")),
        (Some(e), Some(g)) if e != g => out.push(found(
            Check::UsageChanged,
            format!("usage changed: {e} output tokens answered as {g}"),
        )),
        _ => {}
    }
    out
}

/// The calls the client got are upstream's: the same names in order, the same arguments, each
/// with an id of its own.
fn calls_kept(exp: &Outcome, got: &Outcome, out: &mut Vec<Finding>) {
    let en: Vec<&str> = exp.tool_calls.iter().map(|c| c.name.as_str()).collect();
    let gn: Vec<&str> = got.tool_calls.iter().map(|c| c.name.as_str()).collect();
    if en != gn {
        out.push(found(
            Check::Calls,
            format!("calls [{}] answered as [{}]", en.join(", "), gn.join(", ")),
        ));
    } else {
        for (e, g) in exp.tool_calls.iter().zip(&got.tool_calls) {
            if !same_json(&e.arguments, &g.arguments) {
                out.push(found(
                    Check::Arguments,
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
        out.push(found(
            Check::IdMissing,
            format!("call {} has no id", c.name),
        ));
    }
}

/// The finish the client got is upstream's, in the format's own value.
fn finish_kept(inbound: Inbound, exp: &Outcome, got: &Outcome, out: &mut Vec<Finding>) {
    // The neutral finish may be inferred from the calls: the raw value must be the format's own.
    // OpenAI's Chat ends a named tool_choice's call with `stop` (buffered and streamed; vLLM's
    // PR #25054 records OpenAI's own answers, as do recordings of gpt-4o), so there `stop` is the
    // format's value too.
    let named_stop = inbound.format == Provider::OpenaiChat
        && inbound.named
        && got.raw_finish.as_deref() == Some("stop");
    let raw_wrong = !named_stop
        && tool_call_finish(inbound.format).is_some_and(|v| got.raw_finish.as_deref() != Some(v));
    if exp.finish == Finish::Length {
        // The output-token limit wins over the calls: a call may have been cut (its partial
        // arguments are never a valid call), and only the length finish tells the client.
        if got.finish != Finish::Length {
            out.push(found(
                Check::FinishOnLimit,
                format!(
                    "finish {} for upstream's output-token limit (expected the format's length value)",
                    got.raw_finish.as_deref().unwrap_or("none")
                ),
            ));
        }
    } else if !got.tool_calls.is_empty()
        && ((got.finish != Finish::ToolCalls && !named_stop) || raw_wrong)
    {
        out.push(found(
            Check::FinishWithCalls,
            format!(
                "finish {} with tool calls (expected the format's tool-call value)",
                got.raw_finish.as_deref().unwrap_or("none")
            ),
        ));
    } else if got.tool_calls.is_empty() && exp.finish != got.finish {
        out.push(found(
            Check::Finish,
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
