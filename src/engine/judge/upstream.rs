//! Phase 3's judgement: what the system sent upstream against what its caller asked, by
//! meaning — tools, schemas, choice, strict, the parallel switch, hosted search, ids and the
//! links between calls and results, custom tools — and whether it went to the route's API and
//! was accepted there.

use serde_json::Value;

use super::super::check::{self, RequestView};
use super::super::finding::{Finding, FindingKind, Side};
use super::caller::CallerRequest;
use super::read::ReadExchange;
use super::words::clip;
use crate::model::{ChatRequest, Provider, Severity};

/// Upstream: what the system sent (`read`, to the API its path names) against what the caller
/// asked, read as the caller's way says ([`CallerRequest::as_handed`]).
pub(crate) fn upstream(asked: &CallerRequest, read: &ReadExchange<'_>) -> Vec<Finding> {
    let client_req = asked.as_handed();
    let target = read.target;
    let mut findings = Vec::new();
    let client_view = RequestView::of(&client_req);
    let sent_view = match &read.decoded {
        Ok(d) if asked.by_meaning() => {
            RequestView::of(&every_tool_is_required(&client_req, d.request.clone()))
        }
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
    if target == Provider::TextProtocol {
        findings.extend(text_protocol(&client_req, &client_view, read));
    } else {
        findings.extend(by_meaning(
            asked,
            &client_req,
            (client_view, sent_view),
            read,
        ));
    }
    if let Ok(d) = &read.decoded {
        findings.extend(check::upstream_ids(
            &d.request,
            target,
            &client_req,
            asked.inbound,
        ));
        findings.extend(check::linked(&client_req, &d.request));
        // The client's custom tools, which only its own wire carries.
        let custom = asked
            .decoded
            .as_ref()
            .map(check::custom_tools)
            .unwrap_or_default();
        findings.extend(check::custom_kept(&custom, d));
        findings.extend(check::deferral_kept(&client_req, &d.request));
        findings.extend(check::programmable_kept(&client_req, &d.request));
    }
    findings.extend(routed_elsewhere(asked.target, target));
    findings.extend(refused(asked, read));
    findings
}

/// The text protocol: tools and choice travel as injected prose, whose instructions must be the
/// ones `src/inject/` builds for the client's request as sent; results as prose too.
fn text_protocol(
    client_req: &ChatRequest,
    client_view: &RequestView,
    read: &ReadExchange<'_>,
) -> Vec<Finding> {
    let ours = crate::providers::encode(read.target, client_req).ok();
    let mut findings = check::injected(&read.sent.body, ours.as_ref().map(|e| &e.request.body));
    findings.extend(check::results(
        client_view,
        &check::text_protocol_view(&read.sent.body),
    ));
    findings
}

/// A structured target: the sent request's tools, choice, switches and results against the
/// client's, and against what the project's own encoder sends for the same request (its
/// sanitizer's changes allowed).
fn by_meaning(
    asked: &CallerRequest,
    client_req: &ChatRequest,
    (client_view, sent_view): (RequestView, RequestView),
    read: &ReadExchange<'_>,
) -> Vec<Finding> {
    let target = read.target;
    let mut findings = Vec::new();
    let ours_view = crate::providers::encode(target, client_req)
        .ok()
        .and_then(|e| crate::providers::decode_request(target, &e.request).ok())
        .map(|d| RequestView::of(&d.request));
    // An invalid tool the client's own API rejects too is the client's fault.
    let rejection = crate::providers::wire_rejection(target, &read.sent.body).filter(|_| {
        !(asked.invalid
            && crate::providers::wire_rejection(asked.inbound, &asked.encoded.request.body)
                .is_some())
    });
    // Read by meaning, schemas are compared in one spelling: a library may inline `$ref`s or
    // write Gemini's OpenAPI dialect, which loses no constraint.
    let spelled = |v: RequestView| {
        if asked.by_meaning() {
            v.by_meaning()
        } else {
            v
        }
    };
    let grounding = asked.base.requires_grounding();
    if asked.by_meaning() {
        findings.extend(check::strict_omitted(
            client_req.asks_strict(),
            &sent_view,
            target,
        ));
    }
    findings.extend(check::hosted_kept(&client_view, &sent_view, grounding));
    findings.extend(check::names_within_limits(&sent_view, target));
    // A gateway keeps its client's switch, both ways; a library may choose eager streaming
    // itself, but sends the switch its caller asked.
    let added = !asked.by_meaning();
    findings.extend(check::eager_kept(&client_view, &sent_view, target, added));
    findings.extend(check::upstream(
        &spelled(client_view),
        &spelled(sent_view),
        ours_view.map(spelled).as_ref(),
        (target, rejection),
        grounding,
    ));
    findings
}

/// Read by meaning: two choices that make the model call one of the same tools mean the same —
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

/// An upstream error the case did not provoke: upstream refused what the system sent (its
/// key, its request), so nothing the trial is about was exercised. For a client request invalid
/// in its own API, only upstream's refusal of that same content is provoked: a refusal of
/// anything else (a field the gateway left out) is the gateway's. The case's model refusing a
/// hosted tool sent as its caller wrote it (by a library, or a gateway's same-format route) is
/// provoked too: the 400 is handed over, judged downstream; a variant the gateway chose itself
/// (translating from another API's spelling) is the gateway's to retry with another. So is any
/// refusal of the caller's request forwarded as written on a same-format route.
fn refused(asked: &CallerRequest, read: &ReadExchange<'_>) -> Option<Finding> {
    let file = &asked.base.case.file;
    let status = read.ex.status;
    let sent_body: &Value = &read.sent.body;
    let unsupported = &file.simulate.unsupported_tool_types;
    let message = read.error_message();
    let refused_tool =
        |body: &Value| check::caller_tool_unsupported(unsupported, body, status, &message);
    // The caller's own hosted-tool variant forwarded as written (a library; a gateway's
    // same-format route) is the caller's to hear refused; one the gateway chose is its to retry.
    let caller_wrote_it = asked.by_meaning() || refused_tool(&asked.encoded.request.body);
    let provoked = file.simulate.error.is_some()
        || caller_wrote_it && refused_tool(sent_body)
        || forwarded_as_written(asked, read)
        || if asked.invalid {
            crate::providers::request_rejection(read.target, sent_body).is_some()
        } else {
            file.expect
                .iter()
                .any(|e| e.get_ref().error_status.is_some())
        };
    (status >= 400 && !provoked).then(|| {
        Finding::new(
            FindingKind::Refused,
            Severity::Breaking,
            Side::Upstream,
            format!(
                "upstream refused the gateway's request with {status}: {}",
                clip(&read.error_message())
            ),
        )
    })
}

/// A same-format route sent upstream the caller's request as it came, but for the model the
/// route maps its name to, and upstream found its content invalid (400, 422): what it refused
/// is the caller's request, which the gateway hands over (a model the route maps to that
/// cannot do what the caller asked, as GPT-5 cannot force a hosted search, is refused by the
/// provider, never by the gateway). A refused key or an unknown model stays the gateway's; a
/// model server's own refusal (a direct exchange) stays the server's.
fn forwarded_as_written(asked: &CallerRequest, read: &ReadExchange<'_>) -> bool {
    let without_model = |body: &Value| {
        let mut b = body.clone();
        b.as_object_mut().map(|o| o.remove("model"));
        b
    };
    !read.ex.direct
        && matches!(read.ex.status, 400 | 422)
        && read.target == asked.inbound
        && without_model(&read.sent.body) == without_model(&asked.encoded.request.body)
}
