//! Phase 5's judgement: each follow-up round — its tool results as the system sent them
//! upstream (each answering a call of the conversation it sent), the tool set in force, ids,
//! non-text results, reasoning state carried back to the provider that made it (and never to
//! another), the Responses message phase and compaction items carried back, a round continued by `previous_response_id` (class 22), and the round's answer.

use std::borrow::Cow;

use serde_json::Value;

use super::super::check::{self, RequestView};
use super::super::finding::{Finding, FindingKind, Side};
use super::caller::{CallerReply, CallerRequest, client_fault};
use super::read::{ReadExchange, error_message};
use super::words::{clip, numbered};
use crate::http::HttpRequest;
use crate::model::{ChatRequest, Outcome, Provider, Severity};

/// One follow-up round as the caller sent it.
pub(crate) struct Round<'a> {
    /// Its index among the case's rounds.
    pub n: usize,
    /// The round's request, neutral, and as the caller encoded it.
    pub next: &'a ChatRequest,
    pub request: &'a HttpRequest,
    /// What upstream answered the exchange before, when the round went to the same provider:
    /// its reasoning state must come back.
    pub answered: Option<&'a Outcome>,
    /// The caller continues the round by `previous_response_id` (class 22).
    pub continued: bool,
    /// The id of upstream's answer the round before (a Responses one).
    pub upstream_id: Option<&'a str>,
}

/// Round `r`'s judgement, and whether the rounds go on. `read` is the last exchange it caused
/// upstream, `got` what the caller got.
pub(crate) fn round(
    asked: &CallerRequest,
    r: &Round<'_>,
    read: Option<&ReadExchange<'_>>,
    got: &CallerReply,
) -> (Vec<Finding>, bool) {
    let n = r.n;
    let round_invalid = client_fault(&asked.base, &r.request.body);
    let Some(read) = read else {
        // A continuation the system refuses itself with a clear 4xx is an answer (class 22).
        if r.continued && matches!(got, Ok((resp, _)) if (400..500).contains(&resp.status)) {
            return (Vec::new(), false);
        }
        let findings = if round_invalid {
            round_answer(n, got, None)
        } else {
            let nothing = Finding::new(
                FindingKind::Round,
                Severity::Breaking,
                Side::Upstream,
                format!("round {}: nothing sent upstream", n + 1),
            );
            // What the system said instead, kept beside it (a note: the cause stays the
            // finding above).
            std::iter::once(nothing)
                .chain(said_instead(n, got))
                .collect()
        };
        return (findings, false);
    };
    let target = read.target;
    // The round as the client's own format carries it (Gemini joins text parts, for one); a
    // continued round means the whole conversation (its earlier part is the server's).
    let client_req = match crate::providers::decode_request(asked.inbound, r.request) {
        Ok(d) if !r.continued => d.request,
        _ => r.next.clone(),
    };
    // The text protocol carries calls and results as prose in a Chat Completions body.
    let mut sent_req = (target != Provider::TextProtocol)
        .then(|| read.request())
        .flatten()
        .map(Cow::Borrowed);
    let (lost, state) = if r.continued {
        continued_round(asked, r, read, sent_req.as_mut().map(Cow::to_mut))
    } else {
        Default::default()
    };
    let sent_view = if target == Provider::TextProtocol {
        Some(check::text_protocol_view(&read.sent.body))
    } else {
        sent_req.as_deref().map(RequestView::of)
    };
    // A round is about its tool results: only those findings are the round's (results sent
    // without their conversation answer no call: that is the lost context, one finding).
    let client_view = RequestView::of(&client_req);
    let results: Vec<Finding> = sent_view
        .filter(|_| lost.is_empty())
        .map(|view| check::upstream(&client_view, &view, None, (target, None), false))
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.kind == FindingKind::ToolResult)
        .collect();
    let mut findings = numbered(n, results);
    if !round_invalid
        && asked
            .base
            .case
            .file
            .rounds
            .iter()
            .any(|x| x.changes_tools())
    {
        // Numbered by the tool-set check itself.
        findings.extend(tool_set(r, read, sent_req.as_deref()));
    }
    let mut own: Vec<Finding> = lost.into_iter().chain(state).collect();
    if let (Some(sent), false) = (&sent_req, round_invalid) {
        own.extend(check::upstream_ids(sent, target, r.next, asked.inbound));
        own.extend(check::linked(r.next, sent));
        own.extend(check::non_text_results(r.next, &client_req, sent, target));
        own.extend(check::error_flags(&client_req, sent, target));
        if let Some(answered) = r.answered {
            own.extend(check::reasoning(answered, sent));
            own.extend(check::phase_kept(answered, sent, target));
            own.extend(check::compaction_kept(answered, sent, asked.inbound));
            own.extend(check::program_kept(answered, sent));
        }
    }
    if target == Provider::TextProtocol && !round_invalid {
        own.extend(check::non_text_results_as_text(r.next, &read.sent.body));
    }
    findings.extend(numbered(n, own));
    // Upstream refused the round: the system's fault for a valid round (what it sent), and for
    // an invalid one unless the library knows the API refuses that request itself.
    let status = read.ex.status;
    let refused = status >= 400
        && (!round_invalid
            || crate::providers::request_rejection(target, &read.sent.body).is_none());
    if refused {
        findings.push(Finding::new(
            FindingKind::Refused,
            Severity::Breaking,
            Side::Upstream,
            format!(
                "round {}: upstream refused the gateway's request with {status}: {}",
                n + 1,
                clip(&read.error_message())
            ),
        ));
    }
    if round_invalid {
        findings.extend(round_answer(n, got, None));
        return (findings, false);
    }
    findings.extend(round_answer(n, got, Some(status)));
    (findings, true)
}

/// The tools sent upstream in a case whose rounds change the tool set: those in force.
fn tool_set(r: &Round<'_>, read: &ReadExchange<'_>, sent: Option<&ChatRequest>) -> Vec<Finding> {
    let sent_tools: Option<Vec<String>> = if read.target == Provider::TextProtocol {
        Some(check::text_protocol_tools(&read.sent.body))
    } else {
        sent.map(|d| d.tools.iter().map(|t| t.name.clone()).collect())
    };
    let in_force: Vec<&str> = r.next.tools.iter().map(|t| t.name.as_str()).collect();
    let Some(sent_tools) = sent_tools else {
        return Vec::new();
    };
    let sent_tools: Vec<&str> = sent_tools.iter().map(String::as_str).collect();
    check::tool_set(r.n, &in_force, &sent_tools)
        .into_iter()
        .collect()
}

/// A round continued by `previous_response_id` (class 22), sent in `read` (`decoded`: its
/// request read back): the context lost upstream, and the other findings on the state (items
/// upstream holds sent again; read by meaning: the id of upstream's last answer named). When the
/// id carried the earlier conversation, `decoded` is completed with what upstream holds.
fn continued_round(
    asked: &CallerRequest,
    r: &Round<'_>,
    read: &ReadExchange<'_>,
    decoded: Option<&mut ChatRequest>,
) -> (Vec<Finding>, Vec<Finding>) {
    let meant = check::Continued::of(r.next);
    let body = read.ex.body();
    let answer = (read.ex.status, body.as_slice());
    let sent: &Value = &read.sent.body;
    let target = read.target;
    let held = decoded.as_deref();
    let lost = check::response_context(&meant, target, (sent, held), answer);
    let mut state = check::repeated_upstream(r.next, target, (sent, held), answer);
    if asked.by_meaning() {
        // A library asked to continue by id proves it did (a gateway may send it all).
        state.extend(check::continued_by_id(
            sent,
            target,
            r.upstream_id,
            !lost.is_empty(),
        ));
    }
    // Continued by an id upstream knows, with only the new items: upstream holds the earlier
    // conversation.
    if let (Some(d), true) = (decoded, lost.is_empty() && state.is_empty()) {
        check::held_upstream(r.next, sent, d);
    }
    (lost, state)
}

/// Downstream check of a follow-up round's answer. `upstream`: `None` when the client's request
/// was invalid in its own API (the answer must be its 4xx error); else the status upstream gave
/// the round, where an error the system makes of a success is breaking.
fn round_answer(n: usize, got: &CallerReply, upstream: Option<u16>) -> Vec<Finding> {
    let (response, outcome) = match got {
        Ok(r) => r,
        Err(e) => {
            return vec![Finding::new(
                FindingKind::Round,
                Severity::Breaking,
                Side::Downstream,
                format!("round {}: no answer: {}", n + 1, clip(e)),
            )];
        }
    };
    let got = outcome.as_ref().map_err(ToString::to_string);
    let Some(up) = upstream else {
        return numbered(n, check::invalid_request(response.status, got));
    };
    let error = got.as_ref().ok().and_then(|o| o.error.as_ref());
    if up < 400 && (!response.is_success() || error.is_some()) {
        let message = error.map_or_else(|| error_message(&response.body), |e| e.message.clone());
        return numbered(
            n,
            vec![Finding::new(
                FindingKind::Round,
                Severity::Breaking,
                Side::Downstream,
                format!(
                    "gateway answered {} ({}) to an upstream success",
                    response.status,
                    clip(&message)
                ),
            )],
        );
    }
    Vec::new()
}

/// Round `n` went to another provider than `from`, which answered the round before with
/// `answered`: none of that reasoning state in the request (`read`) as the new target's own.
pub(crate) fn foreign_reasoning(
    n: usize,
    from: Provider,
    answered: &Outcome,
    read: &ReadExchange<'_>,
) -> Vec<Finding> {
    let Some(sent) = read.request() else {
        return Vec::new();
    };
    numbered(
        n,
        check::foreign_reasoning(from, read.target, answered, sent),
    )
}

/// What a system that sent nothing upstream for round `n` answered its caller, when it was an
/// error (a library's own exception reaches here as a 4xx whose body is its message): a
/// cosmetic note, so that the trial's record says why.
fn said_instead(n: usize, got: &CallerReply) -> Option<Finding> {
    let said = match got {
        Err(e) => e.clone(),
        Ok((resp, _)) if resp.status >= 400 => {
            format!("{}: {}", resp.status, String::from_utf8_lossy(&resp.body))
        }
        Ok(_) => return None,
    };
    Some(Finding::new(
        FindingKind::Round,
        Severity::Cosmetic,
        Side::Downstream,
        format!(
            "round {}: instead the system answered {}",
            n + 1,
            clip(&said)
        ),
    ))
}
