//! Phase 4's judgement, every way's: what the caller got against what upstream answered — over
//! HTTP, the answer in the inbound format (status, calls, arguments, ids, finish, text, usage,
//! the stream's events); from a library, what it handed over (the same checks under the same
//! severity table, `check::Check`, and the chunks it yielded) — and when the rounds go on.

use serde_json::Value;

use super::super::check;
use super::super::finding::Finding;
use super::caller::CallerRequest;
use super::read::ReadExchange;
use crate::engine::handed::Handed;
use crate::http::HttpResponse;
use crate::model::{DecodeError, Outcome, Provider, StrictPolicy, ToolChoice};

/// Downstream over HTTP: the answer the client got (`response`, decoded in the inbound format
/// as `outcome`), against what upstream answered in `read`.
pub(crate) fn answered(
    asked: &CallerRequest,
    read: &ReadExchange<'_>,
    response: &HttpResponse,
    outcome: &Result<Outcome, DecodeError>,
) -> Vec<Finding> {
    let got = || outcome.as_ref().map_err(ToString::to_string);
    if asked.invalid {
        return check::invalid_request(response.status, got());
    }
    let ex = read.ex;
    let expected = read.expected(asked.inbound, &asked.req);
    let inbound = check::Inbound {
        format: asked.inbound,
        named: matches!(asked.req.tool_choice, Some(ToolChoice::Forced(_))),
    };
    let mut findings = check::downstream(
        inbound,
        response.status,
        got(),
        ex.status,
        expected.as_ref(),
    );
    if let Ok(o) = outcome {
        findings.extend(names_restored(asked, read, o));
        if let Some(e) = expected.as_ref().filter(|_| ex.status < 400) {
            findings.extend(check::search_kept(e, o, true));
            findings.extend(check::callers_handed(e, o, asked.inbound));
        }
        findings.extend(check::downstream_ids(asked.inbound, o, expected.as_ref()));
    }
    if asked.req.stream && response.is_success() && ex.status < 400 {
        let shape = super::super::events::shape(asked.inbound, &response.body);
        let up = ex
            .streamed
            .then(|| super::super::events::shape(read.target, &ex.body()));
        let broken = expected.as_ref().and_then(check::broken).is_some();
        findings.extend(check::stream(&shape, up.as_ref(), asked.inbound, broken));
        if asked.inbound == Provider::OpenaiChat && !broken {
            let body = &asked.encoded.request.body;
            let asked_usage =
                body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
            findings.extend(check::usage_framing(&shape, asked_usage));
        }
    }
    findings
}

/// Downstream from a library: what it handed its caller (`got`), against what upstream answered
/// in `read`.
pub(crate) fn handed(
    asked: &CallerRequest,
    read: &ReadExchange<'_>,
    got: &Handed<'_>,
) -> Vec<Finding> {
    let (ex, target) = (read.ex, read.target);
    let expected = read.expected(asked.inbound, &asked.req);
    // The same answer with no strict rewrite undone: the nulls a strict schema made the model
    // write, as a library that passes them through hands them over.
    let raw = {
        let mut neutral = asked.req.clone();
        neutral.strict = StrictPolicy::Off;
        for t in &mut neutral.tools {
            t.strict = None;
        }
        read.answer_for(&neutral)
    };
    let cut = expected.as_ref().and_then(check::broken);
    let answers = (expected.as_ref(), raw.as_ref());
    let mut findings = check::handed(asked.inbound, got, ex.status, answers, cut);
    if ex.status >= 400 || cut.is_some() || got.error.is_some() {
        return findings;
    }
    if ex.streamed && matches!(target, Provider::OpenaiChat | Provider::TextProtocol) {
        let body: Value = serde_json::from_slice(&ex.request.body).unwrap_or(Value::Null);
        let asked_usage = body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
        findings.extend(check::usage_framed(asked_usage, &ex.body(), got));
    }
    findings.extend(names_restored(asked, read, &got.outcome()));
    if let Some(e) = &expected {
        findings.extend(check::search_kept(e, &got.outcome(), false));
    }
    findings
}

/// Every call the caller got names the caller's tool, not the name the request in `read`
/// carried to its target in its place (a name shortened upstream must be restored).
fn names_restored(asked: &CallerRequest, read: &ReadExchange<'_>, got: &Outcome) -> Vec<Finding> {
    read.request()
        .map(|sent| check::names_restored(&asked.req.tools, &sent.tools, got))
        .unwrap_or_default()
}

/// The first answer the rounds go on from over HTTP: a success without an error, to a valid
/// request.
pub(crate) fn continues<'a>(
    asked: &CallerRequest,
    response: &HttpResponse,
    outcome: &'a Result<Outcome, DecodeError>,
) -> Option<&'a Outcome> {
    match outcome {
        Ok(o) if !asked.invalid && response.is_success() && o.error.is_none() => Some(o),
        _ => None,
    }
}
