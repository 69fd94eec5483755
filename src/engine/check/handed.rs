//! The downstream checks of what a library handed its caller (`Handed`) against what upstream
//! answered: every call (name, id, arguments that parse) in the library's accumulated result
//! and in the chunks it yielded while streaming; errors surfaced, finish in the library's words,
//! text and usage kept; usage upstream framed in its own chunk handed over. Severities are the
//! downstream table's (`downstream::Check`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::downstream::{Check, found, same_json, text_kept};
use super::finding::{Finding, FindingKind, Side};
use crate::engine::handed::{Handed, HandedCall, HandedChunk, finish_of};
use crate::model::{Finish, Outcome, Provider, Severity};

/// The library's result against upstream's answer (`expected`, decoded; `None` when it did not
/// decode), `up_status` its HTTP status; `broken`: upstream's stream failed or was cut.
///
/// `raw`: upstream's answer without the strict rewrite's nulls removed: a library that hands
/// over the nulls a strict schema made the model write is as faithful as one that drops them.
pub(crate) fn handed(
    api: Provider,
    got: &Handed<'_>,
    up_status: u16,
    (expected, raw): (Option<&Outcome>, Option<&Outcome>),
    broken: Option<&str>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if up_status >= 400 || broken.is_some() {
        if got.error.is_none() {
            let why = broken.map_or_else(
                || format!("upstream {up_status}"),
                |b| format!("upstream's stream {b}"),
            );
            out.push(found(
                Check::FailureAsSuccess,
                format!("{why} handed to the caller as a success, with no error"),
            ));
        }
        return out;
    }
    if let Some(e) = got.error {
        out.push(found(
            Check::ErrorOnSuccess,
            format!(
                "the library raised {} on an upstream success: {}",
                if e.kind.is_empty() {
                    "an error"
                } else {
                    &e.kind
                },
                clip(&e.message)
            ),
        ));
        return out;
    }
    let Some(exp) = expected else {
        return out;
    };
    let exp = &with_truncated(exp);
    let raw = raw.map(with_truncated);
    calls(api, "", got.calls, (exp, raw.as_ref()), &mut out);
    if let Some(chunks) = got.chunks {
        yielded(api, chunks, exp, raw.as_ref(), &mut out);
        empty_fragments(chunks, got.calls, exp, &mut out);
    }
    finish(got, exp, &mut out);
    out.extend(text_kept(exp.text.as_deref(), got.text, clip));
    if exp
        .usage
        .as_ref()
        .is_some_and(|u| u.output_tokens.is_some())
        && got.usage.is_none_or(|u| u.output_tokens.is_none())
    {
        out.push(found(Check::UsageLost, "usage not handed to the caller"));
    }
    out
}

/// Chat streams whose request (the library's own) asked `stream_options.include_usage`: usage
/// upstream sent in its own final chunk (`choices: []`, the documented framing) reached the
/// caller. A library that reads usage off the finish chunk only, or skips chunks without
/// choices, loses it (class 25, the client's side of the framing).
pub(crate) fn usage_framed(
    asked_usage: bool,
    upstream_stream: &[u8],
    got: &Handed<'_>,
) -> Option<Finding> {
    let handed = got.usage.is_some_and(|u| u.output_tokens.is_some());
    if !asked_usage || handed || got.error.is_some() {
        return None;
    }
    let own_chunk = String::from_utf8_lossy(upstream_stream)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .any(|c| c["choices"].as_array().is_some_and(Vec::is_empty) && c["usage"].is_object());
    own_chunk.then(|| {
        Finding::new(
            FindingKind::UsageFraming,
            Severity::Behaviour,
            Side::Downstream,
            "usage sent in its own final chunk (choices: []) not handed to the caller",
        )
    })
}

/// The calls handed over (`what`: "" for the accumulated result, "in the chunks " for the
/// streamed ones) are upstream's: names in order, arguments that parse as the same JSON, ids.
/// Upstream's calls as a library hands them over on an output-token limit: the call the limit
/// cut stays the last one (the finish tells the caller), its arguments whatever was received.
fn with_truncated(exp: &Outcome) -> Outcome {
    let mut exp = exp.clone();
    if let Some(t) = exp.truncated_call.take() {
        exp.tool_calls.push(crate::model::ToolCall::unsigned(
            t.id,
            t.name,
            Value::String(t.arguments),
        ));
    }
    exp
}

fn calls(
    api: Provider,
    what: &str,
    got: &[HandedCall],
    (exp, raw): (&Outcome, Option<&Outcome>),
    out: &mut Vec<Finding>,
) {
    let en: Vec<&str> = exp.tool_calls.iter().map(|c| c.name.as_str()).collect();
    let gn: Vec<&str> = got
        .iter()
        .map(|c| c.name.as_deref().unwrap_or(""))
        .collect();
    // On an output-token limit a library may also leave the cut call out.
    let cut_dropped = exp.finish == Finish::Length
        && exp
            .tool_calls
            .last()
            .is_some_and(|c| c.arguments.is_string())
        && en[..en.len() - 1] == gn[..];
    if en != gn && !cut_dropped {
        out.push(found(
            Check::Calls,
            format!(
                "calls [{}] handed over {what}as [{}]",
                en.join(", "),
                gn.join(", ")
            ),
        ));
        return;
    }
    let cut = exp.finish == Finish::Length;
    for (k, (e, g)) in exp.tool_calls.iter().zip(got).enumerate() {
        let alt = raw.and_then(|r| r.tool_calls.get(k)).map(|c| &c.arguments);
        // The cut call's arguments are a fragment: only its name is judged.
        if cut && e.arguments.is_string() {
            continue;
        }
        match g.parsed_arguments() {
            Ok(a) if alt.is_some_and(|x| same_json(&a, x)) => {}
            Err(raw) => out.push(found(
                Check::Arguments,
                format!(
                    "arguments of {} {what}do not parse as JSON: {}",
                    e.name,
                    clip(&raw)
                ),
            )),
            Ok(a) if !same_json(&a, &e.arguments) => out.push(found(
                Check::Arguments,
                format!(
                    "arguments of {} changed {what}: {} → {}",
                    e.name,
                    clip(&e.arguments.to_string()),
                    clip(&a.to_string())
                ),
            )),
            Ok(_) => {}
        }
    }
    // Gemini's calls and the text protocol's carry no ids on the wire: a library makes its own
    // or none.
    if matches!(api, Provider::Gemini | Provider::TextProtocol) {
        return;
    }
    let mut ids = BTreeSet::new();
    for (e, g) in exp.tool_calls.iter().zip(got) {
        match g.id.as_deref().filter(|i| !i.is_empty()) {
            None => out.push(found(
                Check::IdMissing,
                format!("call {} handed over {what}without its id {}", e.name, e.id),
            )),
            // Calls upstream answered under one id (class 20) handed over as they came.
            Some(id)
                if !ids.insert(id) && exp.tool_calls.iter().filter(|c| c.id == id).count() < 2 =>
            {
                out.push(found(
                    Check::IdMissing,
                    format!("call id {id} repeated {what}"),
                ));
            }
            // A call whose id upstream gave two calls may get one of its own (distinct ids are
            // what the caller needs: class 20); any other id must come through as it was.
            Some(id)
                if id != e.id && exp.tool_calls.iter().filter(|c| c.id == e.id).count() < 2 =>
            {
                out.push(found(
                    Check::IdChanged,
                    format!("call id {} handed over {what}as {id}", e.id),
                ))
            }
            Some(_) => {}
        }
    }
}

/// Streamed: the chunks the library yielded carry every call upstream made.
fn yielded(
    api: Provider,
    chunks: &[HandedChunk],
    exp: &Outcome,
    raw: Option<&Outcome>,
    out: &mut Vec<Finding>,
) {
    if exp.tool_calls.is_empty() {
        return;
    }
    // On an output-token limit the cut call may be left out, as in the accumulated result
    // (`calls`): when it was upstream's only call, no chunk need carry a call.
    let only_cut = exp.finish == Finish::Length
        && exp.tool_calls.len() == 1
        && exp.tool_calls[0].arguments.is_string();
    if chunks.iter().all(|c| c.calls.is_empty()) && !only_cut {
        out.push(found(
            Check::Chunks,
            format!(
                "streamed calls never yielded: upstream sent {} call(s), none in the {} chunk(s) the library yielded",
                exp.tool_calls.len(),
                chunks.len()
            ),
        ));
        return;
    }
    let assembled = assemble(chunks);
    calls(api, "in the chunks ", &assembled, (exp, raw), out);
}

/// A call without arguments whose streamed fragments join to `""` while the accumulated
/// message says `{}`: a caller that parses the chunks (as streaming callers do, to act on a
/// call before the message ends) gets invalid JSON where the library's own result is valid.
fn empty_fragments(
    chunks: &[HandedChunk],
    accumulated: &[HandedCall],
    exp: &Outcome,
    out: &mut Vec<Finding>,
) {
    let empty = |v: &Value| v.as_object().is_some_and(serde_json::Map::is_empty);
    let blank =
        |c: &HandedCall| matches!(&c.arguments, Some(Value::String(s)) if s.trim().is_empty());
    let assembled = assemble(chunks);
    for ((e, a), g) in exp.tool_calls.iter().zip(&assembled).zip(accumulated) {
        if empty(&e.arguments)
            && blank(a)
            && !blank(g)
            && g.parsed_arguments().is_ok_and(|v| empty(&v))
        {
            out.push(found(
                Check::Chunks,
                format!(
                    "arguments of {} in the chunks are \"\" (not JSON) where the accumulated message has {{}}",
                    e.name
                ),
            ));
        }
    }
}

/// The calls of a chunk sequence, accumulated as a caller would: a fragment joins the call of
/// its id (at its index, when both have one), else of its index, else the last call; a new id
/// or index starts a call. String
/// arguments are concatenated, an object replaces what came before.
pub fn assemble(chunks: &[HandedChunk]) -> Vec<HandedCall> {
    let mut calls: Vec<HandedCall> = Vec::new();
    for d in chunks.iter().flat_map(|c| &c.calls) {
        let id = d.id.as_deref().filter(|i| !i.is_empty());
        let at = match (id, d.index) {
            // Calls sharing one id (class 20) are told apart by their index.
            (Some(id), i) => calls.iter().position(|c| {
                c.id.as_deref() == Some(id) && (i.is_none() || c.index.is_none() || c.index == i)
            }),
            (None, Some(i)) => calls.iter().rposition(|c| c.index == Some(i)),
            (None, None) => (!calls.is_empty() && d.name.is_none()).then(|| calls.len() - 1),
        };
        let k = at.unwrap_or_else(|| {
            calls.push(HandedCall {
                index: d.index,
                ..Default::default()
            });
            calls.len() - 1
        });
        let c = &mut calls[k];
        if let Some(id) = id {
            c.id = Some(id.to_string());
        }
        if let Some(n) = d.name.as_deref().filter(|n| !n.is_empty()) {
            c.name = Some(n.to_string());
        }
        match (&mut c.arguments, &d.arguments) {
            (_, None) => {}
            (Some(Value::String(acc)), Some(Value::String(s))) => acc.push_str(s),
            (slot, Some(v)) => *slot = Some(v.clone()),
        }
    }
    calls
}

/// The finish the caller got, where the library reports one, means upstream's.
fn finish(got: &Handed<'_>, exp: &Outcome, out: &mut Vec<Finding>) {
    let Some(raw) = got.finish else {
        return;
    };
    let g = finish_of(raw);
    // A library may hand over the provider's own value (Gemini's `STOP` with calls) or its own
    // reading of it: either is faithful.
    if g == exp.finish
        || exp
            .raw_finish
            .as_deref()
            .is_some_and(|r| r.eq_ignore_ascii_case(raw) || finish_of(r) == g)
    {
        return;
    }
    if exp.finish == Finish::Length && g != Finish::Length {
        out.push(found(
            Check::FinishOnLimit,
            format!("finish {raw} for upstream's output-token limit"),
        ));
    } else if exp.finish == Finish::ToolCalls && g != Finish::ToolCalls && !got.calls.is_empty() {
        out.push(found(
            Check::FinishWithCalls,
            format!("finish {raw} with tool calls (upstream: tool calls)"),
        ));
    }
}

/// `s` cut to its first 160 characters, marked with `…` where cut.
fn clip(s: &str) -> String {
    crate::text::clip(s, 160)
}
