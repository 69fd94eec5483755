//! Phase 4's judgement: what the caller got against what upstream answered — over HTTP, the
//! answer in the inbound format (status, calls, arguments, ids, finish, text, usage, the
//! stream's events); from a library, what it handed over — and when the rounds go on from it.

use serde_json::Value;

use super::super::check;
use super::super::finding::Finding;
use super::caller::CallerRequest;
use super::read::ReadExchange;
use crate::http::HttpResponse;
use crate::model::{DecodeError, Outcome, Provider};

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
    let mut findings = check::downstream(
        asked.inbound,
        response.status,
        got(),
        ex.status,
        expected.as_ref(),
    );
    if let Ok(o) = outcome {
        findings.extend(names_restored(asked, read, o));
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

/// Every call the caller got names the caller's tool, not the name the request in `read`
/// carried to its target in its place (a name shortened upstream must be restored).
pub(crate) fn names_restored(
    asked: &CallerRequest,
    read: &ReadExchange<'_>,
    got: &Outcome,
) -> Vec<Finding> {
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
