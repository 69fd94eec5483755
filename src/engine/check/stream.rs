//! The stream checks: the raw events of the gateway's streamed answer against upstream's (call
//! slots and identities, argument fragments, finish signals, the terminal event).

use super::finding::{Finding, FindingKind, Side, finding, of_kind};
use crate::engine::events::StreamRead;
use crate::model::{Provider, Severity};

/// Stream checks on the raw events of the gateway's answer (`got`) against upstream's (`up`).
/// `upstream_broken`: upstream's stream failed or was cut, so the gateway's must end with an
/// error event or without its terminal event, and carry no finish signal.
pub(crate) fn stream(
    got: &StreamRead,
    up: Option<&StreamRead>,
    inbound: Provider,
    upstream_broken: bool,
) -> Vec<Finding> {
    of_kind(
        FindingKind::Stream,
        stream_findings(got, up, inbound, upstream_broken),
    )
}

fn stream_findings(
    got: &StreamRead,
    up: Option<&StreamRead>,
    inbound: Provider,
    upstream_broken: bool,
) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    for p in got
        .problems
        .iter()
        .filter(|p| !(upstream_broken && p.starts_with("error event")))
        .take(1)
    {
        out.push(finding(Severity::Breaking, side, format!("stream: {p}")));
    }
    out.extend(call_slots(got, up));
    out.extend(fragments_kept(got, up, inbound));
    out.extend(ending(got, inbound, upstream_broken));
    out
}

/// The calls' slots: none shared unless upstream shared one, none reused, each opened with its
/// id and name.
fn call_slots(got: &StreamRead, up: Option<&StreamRead>) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    // Calls sharing a slot, told apart by id, are faithful when upstream streamed them so (a
    // same-format pass-through); a gateway that puts calls upstream kept apart at one slot
    // makes clients that merge by index merge them.
    let upstream_shared = up.is_some_and(|u| u.calls.iter().any(|c| c.shared));
    for c in &got.calls {
        if c.shared && !upstream_shared {
            out.push(finding(
                Severity::Breaking,
                side,
                format!(
                    "call {} at slot {} reused by another call ({})",
                    c.name.as_deref().unwrap_or("?"),
                    c.slot,
                    c.id.as_deref().unwrap_or("?")
                ),
            ));
        }
        if let Some(other) = &c.reused_by {
            out.push(finding(
                Severity::Breaking,
                side,
                format!(
                    "call {} at slot {} reused by another call ({other})",
                    c.name.as_deref().unwrap_or("?"),
                    c.slot
                ),
            ));
        }
        if !c.opened_with_identity {
            out.push(finding(
                Severity::Breaking,
                side,
                format!("first delta at slot {} has no id and name", c.slot),
            ));
        }
    }
    out
}

/// The arguments streamed as upstream streamed them: not held back into one fragment or until
/// the finish; and every upstream call carried.
fn fragments_kept(got: &StreamRead, up: Option<&StreamRead>, inbound: Provider) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    // Gemini carries each call whole: there are no argument fragments to compare.
    if let Some(up) = up.filter(|_| inbound != Provider::Gemini) {
        for (u, g) in up.calls.iter().zip(&got.calls) {
            if u.fragments > 1 && g.fragments <= 1 {
                out.push(finding(
                    Severity::Behaviour,
                    side,
                    format!(
                        "arguments of {} held back: upstream sent {} fragments, the gateway {}",
                        g.name.as_deref().unwrap_or("?"),
                        u.fragments,
                        g.fragments
                    ),
                ));
            } else if u.fragments_before_finish > 0
                && g.fragments > 0
                && g.fragments_before_finish == 0
            {
                out.push(finding(
                    Severity::Behaviour,
                    side,
                    format!(
                        "arguments of {} arrive only with the finish",
                        g.name.as_deref().unwrap_or("?")
                    ),
                ));
            }
        }
        if up.calls.len() > got.calls.len() {
            out.push(finding(
                Severity::Breaking,
                side,
                format!(
                    "stream carries {} of upstream's {} calls",
                    got.calls.len(),
                    up.calls.len()
                ),
            ));
        }
    }
    out
}

/// The stream's end: no finish after upstream broke (a failure terminal, Responses'
/// `response.failed`, is how it ends); else exactly one finish and the inbound format's
/// terminal event.
fn ending(got: &StreamRead, inbound: Provider, upstream_broken: bool) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    if upstream_broken {
        if got.finishes > 0 {
            out.push(finding(
                Severity::Breaking,
                side,
                "finish signal after upstream's stream failed or was cut",
            ));
        }
        return out;
    }
    if got.finishes + got.failures != 1 {
        out.push(finding(
            Severity::Behaviour,
            side,
            format!(
                "{} finish signals (exactly one expected)",
                got.finishes + got.failures
            ),
        ));
    }
    if !got.terminal {
        let t = match inbound {
            Provider::OpenaiChat | Provider::TextProtocol => "[DONE]",
            Provider::Anthropic => "message_stop",
            Provider::OpenaiResponses => "response.completed",
            Provider::Gemini => "end",
        };
        out.push(finding(
            Severity::Behaviour,
            side,
            format!("no terminal {t}"),
        ));
    }
    out
}

/// Chat's usage framing (class 25): with `stream_options.include_usage`, usage comes in one
/// extra chunk after the finish whose `choices` is an empty array (every other chunk carries
/// none); without it, no chunk without choices at all, since clients read `choices[0]`.
pub(crate) fn usage_framing(got: &StreamRead, asked_usage: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut add = |m: String| {
        out.push(Finding::new(
            FindingKind::UsageFraming,
            Severity::Breaking,
            Side::Downstream,
            m,
        ));
    };
    for c in &got.usage_chunks {
        if !asked_usage && c.no_choices {
            add("a chunk with empty choices the client did not ask for (no stream_options.include_usage)".into());
        } else if c.usage && !c.no_choices {
            add(
                "usage on a chunk with choices (expected its own final chunk with empty choices)"
                    .into(),
            );
        } else if c.usage && !c.after_finish {
            add("usage chunk before the finish chunk (expected after it)".into());
        } else if !c.usage {
            add("a chunk with empty choices and no usage".into());
        }
    }
    let usage = got.usage_chunks.iter().filter(|c| c.usage).count();
    if usage > 1 {
        add(format!("{usage} chunks carry usage (one expected)"));
    }
    out
}
