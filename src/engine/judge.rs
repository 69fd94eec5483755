//! The judgements of one trial, each a pure function of what the caller asked, what went
//! upstream and what came back: upstream (by meaning, both ends read by the project's request
//! decoders), downstream over HTTP (against what upstream answered), each follow-up round, and
//! the cell a trial's findings make.

use serde_json::Value;

use super::check::{self, RequestView};
use super::events;
use super::finding::{Finding, FindingKind, Side};
use super::result::Cell;
use super::upstream::Exchange;
use crate::case::Trial;
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, Encoded, Outcome, Provider, Severity};

/// The client's side of a trial, built once: its request in the route's inbound format.
pub struct CallerRequest {
    /// The trial as the inbound format's trial (its expectations are the client's).
    pub base: Trial,
    pub inbound: Provider,
    /// The route's upstream.
    pub target: Provider,
    pub req: ChatRequest,
    pub encoded: Encoded,
    /// The request is one its own API rejects, as the case expects: the gateway must answer
    /// that API's 4xx, and upstream findings that only restate the client's invalid content
    /// are not the gateway's.
    pub invalid: bool,
    /// Client mode: the caller handed the library the neutral request itself, so that is what
    /// the sent request is read against (not the project's encoding of it, whose dialect choices
    /// — Gemini's sanitized schemas — are not the library's to follow).
    pub neutral: bool,
}

impl CallerRequest {
    /// The caller's side of `base`'s trial: `req` encoded in `inbound`, bound for `target`
    /// (`neutral`: the caller handed the library the neutral request). A request the inbound
    /// encoder refuses is not applicable.
    pub fn new(
        base: Trial,
        inbound: Provider,
        target: Provider,
        req: ChatRequest,
        neutral: bool,
    ) -> Result<CallerRequest, Cell> {
        let mut encoded = crate::providers::encode(inbound, &req).map_err(|e| {
            Cell::NotApplicable(format!("the {} encoder refuses: {e}", inbound.slug()))
        })?;
        add_caller_tools(&base, inbound, &mut encoded.request.body)?;
        let invalid = client_fault(&base, &encoded.request.body);
        Ok(CallerRequest {
            base,
            inbound,
            target,
            req,
            encoded,
            invalid,
            neutral,
        })
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

/// A request and its decoded answer, as the client got them.
pub type CallerReply = Result<(HttpResponse, Result<Outcome, DecodeError>), String>;

/// Nothing went upstream for the first request: for a request invalid in its own API, the
/// findings on the error the client got; otherwise the cell (the gateway refused: unsupported
/// on a 4xx, broken on anything else).
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

/// The request `ex` carried, as a plain request (headers are not judged).
fn sent_request(ex: &Exchange) -> HttpRequest {
    HttpRequest {
        method: ex.request.method.clone(),
        path: ex.request.path.clone(),
        query: ex.request.query.clone(),
        headers: Default::default(),
        body: serde_json::from_slice(&ex.request.body).unwrap_or(Value::Null),
    }
}

/// Upstream: what the gateway sent `target` (the API the request's path names), by meaning.
pub(crate) fn upstream(asked: &CallerRequest, ex: &Exchange, target: Provider) -> Vec<Finding> {
    // What the client sent, as sent (its strict flags and sanitized schemas included): the
    // gateway only sees this request, so the project's own encoder is judged on it too. A wire
    // carries no strict policy (decoded requests say `Off`): the case's applies.
    let decoded = crate::providers::decode_request(asked.inbound, &asked.encoded.request).ok();
    if asked.neutral {
        // The caller's request, with only what its API can carry of the parallel switch.
        let mut req = asked.req.clone();
        req.parallel_tool_calls = decoded.and_then(|d| d.request.parallel_tool_calls);
        return upstream_of(asked, ex, target, &req);
    }
    let client_req = decoded.map_or_else(
        || asked.req.clone(),
        |d| ChatRequest {
            strict: asked.req.strict,
            ..d.request
        },
    );
    upstream_of(asked, ex, target, &client_req)
}

/// Upstream, against `client_req`: the client's request as the gateway (or library) got it.
fn upstream_of(
    asked: &CallerRequest,
    ex: &Exchange,
    target: Provider,
    client_req: &ChatRequest,
) -> Vec<Finding> {
    let sent = sent_request(ex);
    let mut findings = Vec::new();
    let client_view = RequestView::of(client_req);
    let sent_view = match crate::providers::decode_request(target, &sent) {
        Ok(d) if asked.neutral => RequestView::of(&every_tool_is_required(client_req, d.request)),
        Ok(d) => RequestView::of(&d.request),
        Err(e) => {
            findings.push(Finding::new(
                FindingKind::Request,
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "the request sent to {} is not a well-formed request of its format: {e}",
                    target.slug()
                ),
            ));
            RequestView::default()
        }
    };
    // The project's own encoder on the same client request, encoded once.
    let ours = crate::providers::encode(target, client_req).ok();
    if target == Provider::TextProtocol {
        // Tools and choice travel as injected prose: the instructions must be the ones
        // `src/inject/` builds for the client's request as sent.
        findings.extend(check::injected(
            &sent.body,
            ours.as_ref().map(|e| &e.request.body),
        ));
        findings.extend(check::results(
            &client_view,
            &check::text_protocol_view(&sent.body),
        ));
    } else {
        let ours_view = ours
            .and_then(|e| crate::providers::decode_request(target, &e.request).ok())
            .map(|d| RequestView::of(&d.request));
        // An invalid tool the client's own API rejects too is the client's fault.
        let rejection = crate::providers::wire_rejection(target, &sent.body).filter(|_| {
            !(asked.invalid
                && crate::providers::wire_rejection(asked.inbound, &asked.encoded.request.body)
                    .is_some())
        });
        // Client mode reads schemas by meaning: a library may inline `$ref`s or write Gemini's
        // OpenAPI dialect, which loses no constraint.
        let by_meaning = |v: RequestView| {
            if asked.neutral { v.by_meaning() } else { v }
        };
        if asked.neutral {
            findings.extend(check::strict_omitted(
                client_req.asks_strict(),
                &sent_view,
                target,
            ));
        }
        findings.extend(check::hosted_kept(
            &client_view,
            &sent_view,
            asked.base.requires_grounding(),
        ));
        findings.extend(check::names_within_limits(&sent_view, target));
        if asked.neutral {
            // A library may choose eager streaming itself, but sends the switch its caller asked.
            findings.extend(check::eager_asked_kept(&client_view, &sent_view, target));
        } else {
            // A gateway keeps its client's switch, both ways.
            findings.extend(check::eager_kept(&client_view, &sent_view, target));
        }
        findings.extend(check::upstream(
            &by_meaning(client_view),
            &by_meaning(sent_view),
            ours_view.map(by_meaning).as_ref(),
            target,
            rejection,
            asked.base.requires_grounding(),
        ));
    }
    if let Ok(d) = crate::providers::decode_request(target, &sent) {
        findings.extend(check::upstream_ids(
            &d.request,
            target,
            client_req,
            asked.inbound,
        ));
        findings.extend(check::linked(client_req, &d.request));
        // The client's custom tools, which only its own wire carries.
        let custom = crate::providers::decode_request(asked.inbound, &asked.encoded.request)
            .map(|c| check::custom_tools(&c))
            .unwrap_or_default();
        findings.extend(check::custom_kept(&custom, &d));
    }
    findings.extend(routed_elsewhere(asked.target, target));
    findings.extend(refused(asked, ex, target, &sent.body));
    findings
}

/// Client mode: two choices that make the model call one of the same tools mean the same —
/// `required` with one tool is that tool forced, and Gemini's `ANY` listing every declared tool
/// is `required` — so the library's spelling is read as the caller's.
fn every_tool_is_required(client: &ChatRequest, mut sent: ChatRequest) -> ChatRequest {
    use crate::model::{AllowedMode, ToolChoice};
    use std::collections::BTreeSet;
    let must_call = |r: &ChatRequest| -> Option<BTreeSet<String>> {
        match &r.tool_choice {
            Some(ToolChoice::Required) => Some(r.tools.iter().map(|t| t.name.clone()).collect()),
            Some(ToolChoice::Forced(n)) => Some(BTreeSet::from([n.clone()])),
            Some(ToolChoice::Allowed {
                mode: AllowedMode::Required,
                tools,
            }) => Some(tools.iter().cloned().collect()),
            _ => None,
        }
    };
    // An allowed list sent as only its tools is the check's own reading (`choice_kept`).
    let allowed = matches!(client.tool_choice, Some(ToolChoice::Allowed { .. }));
    if let (false, Some(c), Some(s)) = (allowed, must_call(client), must_call(&sent))
        && c == s
    {
        sent.tool_choice = client.tool_choice.clone();
    }
    sent
}

/// The request went to another API than the route's.
fn routed_elsewhere(route: Provider, sent_to: Provider) -> Option<Finding> {
    let openai = |p| matches!(p, Provider::OpenaiChat | Provider::OpenaiResponses);
    (sent_to != route).then(|| {
        Finding::new(
            FindingKind::Route,
            // Chat Completions and Responses are the same vendor's two APIs: a bridge choice.
            if openai(sent_to) && openai(route) {
                Severity::Cosmetic
            } else {
                Severity::Breaking
            },
            Side::Upstream,
            format!("sent to {} instead of {}", sent_to.slug(), route.slug()),
        )
    })
}

/// An upstream error the case did not provoke: upstream refused what the gateway sent (its
/// key, its request), so nothing the trial is about was exercised. For a client request invalid
/// in its own API, only upstream's refusal of that same content is provoked: a refusal of
/// anything else (a field the gateway left out) is the gateway's. In client mode, the case's
/// model refusing a hosted tool the library sent as its caller wrote it is provoked too (the
/// library must hand the 400 over, judged downstream; a gateway retries with another variant).
fn refused(
    asked: &CallerRequest,
    ex: &Exchange,
    target: Provider,
    sent_body: &Value,
) -> Option<Finding> {
    let file = &asked.base.case.file;
    let unsupported = &file.simulate.unsupported_tool_types;
    let provoked = file.simulate.error.is_some()
        || asked.neutral
            && check::caller_tool_unsupported(
                unsupported,
                sent_body,
                ex.status,
                &error_message(&ex.body()),
            )
        || if asked.invalid {
            crate::providers::request_rejection(target, sent_body).is_some()
        } else {
            file.expect
                .iter()
                .any(|e| e.get_ref().error_status.is_some())
        };
    (ex.status >= 400 && !provoked).then(|| {
        Finding::new(
            FindingKind::Refused,
            Severity::Breaking,
            Side::Upstream,
            format!(
                "upstream refused the gateway's request with {}: {}",
                ex.status,
                clip(&error_message(&ex.body()))
            ),
        )
    })
}

/// Downstream: what the client got, against what upstream answered.
pub(crate) fn downstream(
    asked: &CallerRequest,
    ex: &Exchange,
    target: Provider,
    response: &HttpResponse,
    outcome: &Result<Outcome, DecodeError>,
) -> Vec<Finding> {
    let got = || outcome.as_ref().map_err(ToString::to_string);
    if asked.invalid {
        return check::invalid_request(response.status, got());
    }
    let expected = upstream_outcome(target, asked.inbound, &asked.req, ex);
    let mut findings = check::downstream(
        asked.inbound,
        response.status,
        got(),
        ex.status,
        expected.as_ref(),
    );
    if let Ok(o) = outcome {
        findings.extend(names_restored(asked, ex, target, o));
    }
    if let Ok(o) = outcome {
        findings.extend(check::downstream_ids(asked.inbound, o, expected.as_ref()));
    }
    if asked.req.stream && response.is_success() && ex.status < 400 {
        let shape = events::shape(asked.inbound, &response.body);
        let up = ex.streamed.then(|| events::shape(target, &ex.body()));
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

/// Downstream: every call the client got names the client's tool, not the name the request
/// `ex` carried to `target` in its place (a name shortened upstream must be restored).
pub(crate) fn names_restored(
    asked: &CallerRequest,
    ex: &Exchange,
    target: Provider,
    got: &Outcome,
) -> Vec<Finding> {
    crate::providers::decode_request(target, &sent_request(ex))
        .map(|sent| check::names_restored(&asked.req.tools, &sent.request.tools, got))
        .unwrap_or_default()
}

/// What upstream answered, decoded. The client reads its answer as `inbound` (its decoder
/// drops a null the strict rewrite of its own request added for an optional property), so the
/// expected outcome gets the same reading: a transparent gateway's answer, as the client sees it.
pub(crate) fn upstream_outcome(
    target: Provider,
    inbound: Provider,
    req: &ChatRequest,
    ex: &Exchange,
) -> Option<Outcome> {
    let mut outcome = decoded(target, req, ex)?;
    crate::schema::restore_optional(inbound, req, &mut outcome);
    Some(outcome)
}

/// What upstream answered, decoded in the context of `req` (its stream flag the exchange's).
/// Round `n` went to another provider than `from`, which answered the round before with
/// `answered`: none of that reasoning state in the request as the new target's own.
pub(crate) fn foreign_reasoning(
    n: usize,
    from: Provider,
    answered: &Outcome,
    asked: &CallerRequest,
    ex: &Exchange,
) -> Vec<Finding> {
    let target = target_of_path(&ex.request.path, asked.target);
    let Ok(d) = crate::providers::decode_request(target, &sent_request(ex)) else {
        return Vec::new();
    };
    check::foreign_reasoning(from, target, answered, &d.request)
        .into_iter()
        .map(|f| Finding {
            message: format!("round {}: {}", n + 1, f.message),
            ..f
        })
        .collect()
}

pub(crate) fn decoded(target: Provider, req: &ChatRequest, ex: &Exchange) -> Option<Outcome> {
    let mut neutral = req.clone();
    neutral.stream = ex.streamed;
    let resp = HttpResponse {
        status: ex.status,
        headers: ex.headers.clone(),
        body: ex.body(),
    };
    crate::providers::decode(target, &neutral, &resp).ok()
}

/// The first answer the rounds go on from: a success without an error, to a valid request.
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

/// Round `n`'s judgement, and whether the rounds go on. `request` is the round's request as the
/// client encoded it, `ex` the last exchange it caused upstream, `got` what the client got,
/// `answered` what upstream answered the exchange before (its reasoning state must come back),
/// `continued`: the caller continues the round by `previous_response_id` (class 22),
/// `upstream_id` the id of upstream's answer the round before (a Responses one).
pub(crate) fn round(
    n: usize,
    asked: &CallerRequest,
    (next, request): (&ChatRequest, &HttpRequest),
    ex: Option<&Exchange>,
    got: &CallerReply,
    (answered, continued, upstream_id): (Option<&Outcome>, bool, Option<&str>),
) -> (Vec<Finding>, bool) {
    let round_invalid = client_fault(&asked.base, &request.body);
    let Some(ex) = ex else {
        // A continuation the gateway refuses itself with a clear 4xx is an answer (class 22).
        if continued && matches!(got, Ok((r, _)) if (400..500).contains(&r.status)) {
            return (Vec::new(), false);
        }
        let findings = if round_invalid {
            round_answer(n, got, None)
        } else {
            vec![Finding::new(
                FindingKind::Round,
                Severity::Breaking,
                Side::Upstream,
                format!("round {}: nothing sent upstream", n + 1),
            )]
        };
        return (findings, false);
    };
    let sent = sent_request(ex);
    let target = target_of_path(&ex.request.path, asked.target);
    // The round as the client's own format carries it (Gemini joins text parts, for one); a
    // continued round means the whole conversation (its earlier part is the server's).
    let client_req = match crate::providers::decode_request(asked.inbound, request) {
        Ok(d) if !continued => d.request,
        _ => next.clone(),
    };
    let client_view = RequestView::of(&client_req);
    // The text protocol carries calls and results as prose in a Chat Completions body.
    let mut sent_decoded = (target != Provider::TextProtocol)
        .then(|| crate::providers::decode_request(target, &sent).ok())
        .flatten();
    let (lost, state) = if continued {
        let decoded = sent_decoded.as_mut().map(|d| &mut d.request);
        continued_round(
            asked.neutral,
            next,
            (target, ex, &sent.body),
            decoded,
            upstream_id,
        )
    } else {
        Default::default()
    };
    let sent_view = if target == Provider::TextProtocol {
        Some(check::text_protocol_view(&sent.body))
    } else {
        sent_decoded.as_ref().map(|d| RequestView::of(&d.request))
    };
    // A round is about its tool results: only those findings are the round's (results sent
    // without their conversation answer no call: that is the lost context, one finding).
    let mut findings: Vec<Finding> = sent_view
        .filter(|_| lost.is_empty())
        .map(|view| check::upstream(&client_view, &view, None, target, None, false))
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.kind == FindingKind::ToolResult)
        .map(|f| Finding {
            message: format!("round {}: {}", n + 1, f.message),
            ..f
        })
        .collect();
    if !round_invalid
        && asked
            .base
            .case
            .file
            .rounds
            .iter()
            .any(|r| r.changes_tools())
    {
        let sent_tools: Option<Vec<String>> = if target == Provider::TextProtocol {
            Some(check::text_protocol_tools(&sent.body))
        } else {
            (sent_decoded.as_ref())
                .map(|d| d.request.tools.iter().map(|t| t.name.clone()).collect())
        };
        let in_force: Vec<&str> = next.tools.iter().map(|t| t.name.as_str()).collect();
        if let Some(sent_tools) = sent_tools {
            let sent_tools: Vec<&str> = sent_tools.iter().map(String::as_str).collect();
            findings.extend(check::tool_set(n, &in_force, &sent_tools));
        }
    }
    findings.extend(lost.into_iter().chain(state).map(|f| Finding {
        message: format!("round {}: {}", n + 1, f.message),
        ..f
    }));
    if let (Some(d), false) = (&sent_decoded, round_invalid) {
        let mut own = check::upstream_ids(&d.request, target, next, asked.inbound);
        own.extend(check::linked(next, &d.request));
        own.extend(check::non_text_results(
            next,
            &client_req,
            &d.request,
            target,
        ));
        if let Some(answered) = answered {
            own.extend(check::reasoning(answered, &d.request));
        }
        findings.extend(own.into_iter().map(|f| Finding {
            message: format!("round {}: {}", n + 1, f.message),
            ..f
        }));
    }
    if target == Provider::TextProtocol && !round_invalid {
        findings.extend(
            check::non_text_results_as_text(next, &sent.body)
                .into_iter()
                .map(|f| Finding {
                    message: format!("round {}: {}", n + 1, f.message),
                    ..f
                }),
        );
    }
    // Upstream refused the round: the gateway's fault for a valid round (what it sent), and for
    // an invalid one unless the library knows the API refuses that request itself.
    let refused = ex.status >= 400
        && (!round_invalid || crate::providers::request_rejection(target, &sent.body).is_none());
    if refused {
        findings.push(Finding::new(
            FindingKind::Refused,
            Severity::Breaking,
            Side::Upstream,
            format!(
                "round {}: upstream refused the gateway's request with {}: {}",
                n + 1,
                ex.status,
                clip(&error_message(&ex.body()))
            ),
        ));
    }
    if round_invalid {
        findings.extend(round_answer(n, got, None));
        return (findings, false);
    }
    findings.extend(round_answer(n, got, Some(ex.status)));
    (findings, true)
}

/// A round continued by `previous_response_id` (class 22), sent as `sent` to `target` in `ex`
/// (`decoded`: read back): the context lost upstream, and the other findings on the state (items
/// upstream holds sent again; `neutral`, client mode: `upstream_id`, the id of upstream's last
/// answer, named). When the id carried the earlier conversation, `decoded` is completed with
/// what upstream holds.
fn continued_round(
    neutral: bool,
    next: &ChatRequest,
    (target, ex, sent): (Provider, &Exchange, &Value),
    decoded: Option<&mut ChatRequest>,
    upstream_id: Option<&str>,
) -> (Vec<Finding>, Vec<Finding>) {
    let meant = check::Continued::of(next);
    let body = ex.body();
    let answer = (ex.status, body.as_slice());
    let read = decoded.as_deref();
    let lost = check::response_context(&meant, target, (sent, read), answer);
    let mut state = check::repeated_upstream(next, target, (sent, read), answer);
    if neutral {
        // A library asked to continue by id proves it did (a gateway may send it all).
        state.extend(check::continued_by_id(
            sent,
            target,
            upstream_id,
            !lost.is_empty(),
        ));
    }
    // Continued by an id upstream knows, with only the new items: upstream holds the earlier
    // conversation.
    if let (Some(d), true) = (decoded, lost.is_empty() && state.is_empty()) {
        check::held_upstream(next, sent, d);
    }
    (lost, state)
}

/// Downstream check of a follow-up round's answer. `upstream`: `None` when the client's request
/// was invalid in its own API (the answer must be its 4xx error); else the status upstream gave
/// the round, where an error the gateway makes of a success is breaking.
fn round_answer(n: usize, got: &CallerReply, upstream: Option<u16>) -> Vec<Finding> {
    let round = |f: Finding| Finding {
        message: format!("round {}: {}", n + 1, f.message),
        ..f
    };
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
        return check::invalid_request(response.status, got)
            .into_iter()
            .map(round)
            .collect();
    };
    let error = got.as_ref().ok().and_then(|o| o.error.as_ref());
    if up < 400 && (!response.is_success() || error.is_some()) {
        let message = error.map_or_else(|| error_message(&response.body), |e| e.message.clone());
        return vec![round(Finding::new(
            FindingKind::Round,
            Severity::Breaking,
            Side::Downstream,
            format!(
                "gateway answered {} ({}) to an upstream success",
                response.status,
                clip(&message)
            ),
        ))];
    }
    Vec::new()
}

/// The cell of a trial's findings (sorted, most severe first): the first non-cosmetic one fails.
pub(crate) fn cell_of(findings: &mut [Finding]) -> Cell {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    match findings.iter().find(|f| f.severity != Severity::Cosmetic) {
        Some(first) => Cell::Fail(format!("{}: {}", first.side, first.message)),
        None => Cell::Pass,
    }
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

/// The message of an error envelope (`error.message`, `message`, `error` as a string), else the
/// body; without request ids, so that a known failure's reason stays the same between runs.
fn error_message(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let v = v.as_array().and_then(|a| a.first()).unwrap_or(&v);
    ["/error/message", "/message", "/error"]
        .iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_str))
        .map_or_else(
            || String::from_utf8_lossy(body).into_owned(),
            str::to_string,
        )
}

fn clip(s: &str) -> String {
    let c: String = s.chars().take(160).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}

/// The provider a request to `path` was sent to, by the one route table (a gateway may bridge
/// to another API of the same vendor). The text protocol travels over a Chat Completions path:
/// a chat request to a text-protocol route is judged as the text protocol.
pub(crate) fn target_of_path(path: &str, target: Provider) -> Provider {
    let routed = crate::providers::route("POST", path, &Default::default()).map(|r| r.provider);
    match routed {
        Some(Provider::OpenaiChat) if target == Provider::TextProtocol => target,
        p => p.unwrap_or(target),
    }
}
