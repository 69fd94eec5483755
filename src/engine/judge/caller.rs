//! Phase 1's judgement: the caller's request, built once (encoded in the route's inbound format,
//! read back once, its reading policy named), and what is judged when nothing went upstream.

use serde_json::Value;

use super::super::check;
use super::super::finding::Finding;
use super::super::result::Cell;
use super::words::clip;
use crate::case::Trial;
use crate::http::HttpResponse;
use crate::model::{ChatRequest, DecodeError, Encoded, Outcome, Provider};
use crate::providers::DecodedRequest;

/// How what the system sent upstream is read against what its caller asked, set by the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The caller's request is the one its wire carried (a gateway's client): read back by the
    /// inbound decoder, its strict flags and sanitized schemas included, and compared as sent.
    AsSent,
    /// The caller handed over the neutral request itself (a library's caller): the sent request
    /// is read against it by meaning — schemas in one spelling, choices that make the model call
    /// the same tools as one, the library's own strict and eager choices asked of it — not
    /// against the project's encoding, whose dialect choices are not the library's to follow.
    ByMeaning,
}

/// A request and its decoded answer, as the client got them.
pub type CallerReply = Result<(HttpResponse, Result<Outcome, DecodeError>), String>;

/// The client's side of a trial, built once: its request in the route's inbound format.
pub struct CallerRequest {
    /// The trial as the inbound format's trial (its expectations are the client's).
    pub base: Trial,
    pub inbound: Provider,
    /// The route's upstream.
    pub target: Provider,
    pub req: ChatRequest,
    pub encoded: Encoded,
    /// `encoded` read back by the inbound format's request decoder (once, here).
    pub decoded: Option<DecodedRequest>,
    /// The request is one its own API rejects, as the case expects: the system must answer
    /// that API's 4xx, and upstream findings that only restate the client's invalid content
    /// are not the system's.
    pub invalid: bool,
    pub reading: Reading,
}

impl CallerRequest {
    /// The caller's side of `base`'s trial: `req` encoded in `inbound`, bound for `target`, read
    /// as `reading` says. A request the inbound encoder refuses is not applicable.
    pub fn new(
        base: Trial,
        (inbound, target): (Provider, Provider),
        req: ChatRequest,
        reading: Reading,
    ) -> Result<CallerRequest, Cell> {
        let mut encoded = crate::providers::encode(inbound, &req).map_err(|e| {
            Cell::NotApplicable(format!("the {} encoder refuses: {e}", inbound.slug()))
        })?;
        add_caller_tools(&base, inbound, &mut encoded.request.body)?;
        let invalid = client_fault(&base, &encoded.request.body);
        let decoded = crate::providers::decode_request(inbound, &encoded.request).ok();
        Ok(CallerRequest {
            base,
            inbound,
            target,
            req,
            encoded,
            decoded,
            invalid,
            reading,
        })
    }

    /// The request the system was handed, as the upstream checks read it: the neutral request
    /// read by meaning (with only what its API can carry of the parallel switch), else the
    /// request its wire carried (the case's strict policy, which no wire carries, beside it).
    pub(crate) fn as_handed(&self) -> ChatRequest {
        let decoded = self.decoded.as_ref();
        match self.reading {
            Reading::ByMeaning => ChatRequest {
                parallel_tool_calls: decoded.and_then(|d| d.request.parallel_tool_calls),
                ..self.req.clone()
            },
            Reading::AsSent => decoded.map_or_else(
                || self.req.clone(),
                |d| ChatRequest {
                    strict: self.req.strict,
                    ..d.request.clone()
                },
            ),
        }
    }

    pub(crate) fn by_meaning(&self) -> bool {
        self.reading == Reading::ByMeaning
    }
}

/// The case's caller tools for `inbound`, appended to the request's `tools` (what the caller
/// sends: a gateway's client, or a library handed them as the driver trial's `caller_tools`).
/// A case with caller tools is not applicable on an inbound format without an entry.
fn add_caller_tools(base: &Trial, inbound: Provider, body: &mut Value) -> Result<(), Cell> {
    let declared = &base.case.file.caller_tools;
    if declared.is_empty() {
        return Ok(());
    }
    let Some(tools) = declared.get(&inbound) else {
        return Err(Cell::NotApplicable(format!(
            "the case's caller tools have no {} form",
            inbound.slug()
        )));
    };
    if let Some(list) = body.get_mut("tools").and_then(Value::as_array_mut) {
        list.extend(tools.iter().cloned());
    } else if let Some(o) = body.as_object_mut() {
        o.insert("tools".into(), Value::Array(tools.clone()));
    }
    Ok(())
}

/// Whether `body`, a request of the trial's format (its provider is the route's inbound), is
/// the client's own fault: the case expects a 4xx for that format and the format's API rejects
/// the request's own content (an invalid tool, a result answering no call), by the simulator's
/// rules. Errors the scenario provokes upstream come with valid requests and are not this.
pub(crate) fn client_fault(trial: &Trial, body: &Value) -> bool {
    trial.expectations().iter().any(|e| {
        e.get_ref()
            .error_status
            .is_some_and(|s| (400..500).contains(&s))
    }) && crate::providers::request_rejection(trial.provider, body).is_some()
}

/// Nothing went upstream for the first request over HTTP: for a request invalid in its own API,
/// the findings on the error the client got; otherwise the cell (the gateway refused: refused
/// cleanly on a 4xx, broken on anything else).
pub(crate) fn unsent(
    asked: &CallerRequest,
    response: &HttpResponse,
    outcome: &Result<Outcome, DecodeError>,
) -> Result<Vec<Finding>, Cell> {
    if asked.invalid {
        return Ok(check::invalid_request(
            response.status,
            outcome.as_ref().map_err(ToString::to_string),
        ));
    }
    let message = outcome
        .as_ref()
        .ok()
        .and_then(|o| o.error.as_ref().map(|e| e.message.clone()))
        .unwrap_or_else(|| {
            String::from_utf8_lossy(&response.body)
                .chars()
                .take(200)
                .collect()
        });
    Err(if (400..500).contains(&response.status) {
        Cell::Declined(format!("{}: {}", response.status, clip(&message)))
    } else {
        Cell::Broken(format!(
            "nothing sent upstream; answered {}: {}",
            response.status,
            clip(&message)
        ))
    })
}
