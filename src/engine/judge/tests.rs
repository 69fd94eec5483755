//! Unit tests of the judge, one phase at a time: for each finding kind a phase makes, the
//! smallest trial that makes exactly that finding, and the faithful one on which it stays
//! silent; the cells `unsent` ends a trial with; the exchange read once.

use serde_json::{Value, json};

use super::super::check::tests::{one, silent};
use super::super::check::{Finding, FindingKind, Side};
use super::super::result::Cell;
use super::super::upstream::Exchange;
use super::{CallerRequest, ReadExchange, Reading, Round};
use crate::http::HttpResponse;
use crate::model::{ChatRequest, Outcome, Provider, Severity};

const CHAT: &str = "/v1/chat/completions";

/// The caller's side of `case`'s first trial, a Chat Completions caller on a route to
/// OpenAI Chat, read as `reading` says.
fn asked(case: &str, reading: Reading) -> CallerRequest {
    let d = crate::case::discover(std::path::Path::new("."));
    let trial = (d.trials.iter())
        .find(|t| t.case.name == case && t.provider == Provider::OpenaiChat)
        .unwrap_or_else(|| panic!("cases/{case}.toml has no openai-chat trial"))
        .clone();
    let req = trial.first_request();
    let route = (Provider::OpenaiChat, Provider::OpenaiChat);
    match CallerRequest::new(trial, route, req, reading) {
        Ok(asked) => asked,
        Err(cell) => panic!("{case}: {cell:?}"),
    }
}

/// A Chat Completions answer calling `get_weather` for Paris.
fn call_answer() -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

/// What a Chat client of `req` reads in `answer`, answered `status`.
fn got(req: &ChatRequest, status: u16, answer: &Value) -> (HttpResponse, Outcome) {
    let response = HttpResponse {
        status,
        headers: Default::default(),
        body: answer.to_string().into_bytes(),
    };
    let outcome = crate::providers::decode(Provider::OpenaiChat, req, &response)
        .unwrap_or_else(|e| panic!("{e}"));
    (response, outcome)
}

#[test]
fn the_exchange_is_read_once_with_its_target_its_request_and_its_answer() {
    let asked = asked("weather", Reading::AsSent);
    let body = &asked.encoded.request.body;
    let ex = Exchange::answered(CHAT, body, 200, &call_answer());
    let read = ReadExchange::read(&ex, Provider::OpenaiChat, &asked.req);
    assert_eq!(read.target, Provider::OpenaiChat);
    assert_eq!(read.request().map(|r| r.tools.len()), Some(1));
    let answer = read.answer.as_ref().expect("the answer decodes");
    assert_eq!(answer.tool_calls[0].name, "get_weather");
    // A chat path on a text-protocol route is the text protocol; another API's path is its own.
    let on_text = ReadExchange::read(&ex, Provider::TextProtocol, &asked.req);
    assert_eq!(on_text.target, Provider::TextProtocol);
    let to_messages = Exchange::answered("/v1/messages", body, 200, &call_answer());
    let elsewhere = ReadExchange::read(&to_messages, Provider::OpenaiChat, &asked.req);
    assert_eq!(elsewhere.target, Provider::Anthropic);
}

#[test]
fn upstream_is_silent_on_the_callers_request_forwarded_as_it_came() {
    for reading in [Reading::AsSent, Reading::ByMeaning] {
        let asked = asked("weather", reading);
        let ex = Exchange::answered(CHAT, &asked.encoded.request.body, 200, &call_answer());
        silent(&super::upstream(
            &asked,
            &ReadExchange::read(&ex, Provider::OpenaiChat, &asked.req),
        ));
    }
}

#[test]
fn upstream_finds_a_dropped_tool_a_wrong_api_a_malformed_request_and_a_refusal() {
    let asked = asked("weather", Reading::AsSent);
    let judge = |path: &str, body: &Value, status: u16, answer: &Value| {
        let ex = Exchange::answered(path, body, status, answer);
        super::upstream(&asked, &ReadExchange::read(&ex, asked.target, &asked.req))
    };
    let mut no_tools = asked.encoded.request.body.clone();
    no_tools.as_object_mut().map(|o| o.remove("tools"));
    let up = (FindingKind::Request, Side::Upstream, Severity::Breaking);
    let found = judge(CHAT, &no_tools, 200, &call_answer());
    assert!(
        found.iter().any(|f| (f.kind, f.side, f.severity) == up
            && f.message.contains("tools dropped: get_weather")),
        "{found:#?}"
    );
    // The same vendor's other API is a bridge choice; another vendor's is breaking.
    let body = &asked.encoded.request.body;
    let to_responses = judge("/v1/responses", body, 200, &call_answer());
    let route = |f: &&Finding| f.kind == FindingKind::Route;
    let bridged: Vec<_> = to_responses.iter().filter(route).cloned().collect();
    one(
        &bridged,
        FindingKind::Route,
        Side::Upstream,
        Severity::Cosmetic,
        "sent to openai-responses instead of openai-chat",
    );
    let to_gemini = judge(
        "/v1beta/models/m:generateContent",
        body,
        200,
        &call_answer(),
    );
    assert!(to_gemini.iter().any(|f| {
        f.kind == FindingKind::Request
            && f.message
                .contains("not a well-formed request of its format")
    }));
    assert!(
        to_gemini
            .iter()
            .any(|f| f.kind == FindingKind::Route && f.severity == Severity::Breaking)
    );
    let refusal = json!({"error": {"message": "bad key", "type": "invalid_request_error"}});
    one(
        &judge(CHAT, body, 401, &refusal),
        FindingKind::Refused,
        Side::Upstream,
        Severity::Breaking,
        "upstream refused the gateway's request with 401: bad key",
    );
}

#[test]
fn read_by_meaning_required_with_one_tool_is_that_tool_forced() {
    let forced = |reading| {
        let mut asked = asked("weather", reading);
        asked.req.tool_choice = Some(crate::model::ToolChoice::Required);
        let mut sent = asked.encoded.request.body.clone();
        sent["tool_choice"] = json!({"type": "function", "function": {"name": "get_weather"}});
        let ex = Exchange::answered(CHAT, &sent, 200, &call_answer());
        super::upstream(&asked, &ReadExchange::read(&ex, asked.target, &asked.req))
    };
    silent(&forced(Reading::ByMeaning));
    // As sent, the caller's wire said otherwise: the gateway changed the choice.
    assert!(!forced(Reading::AsSent).is_empty());
}

#[test]
fn downstream_is_silent_on_upstreams_answer_and_finds_a_call_dropped() {
    let asked = asked("weather", Reading::AsSent);
    let ex = Exchange::answered(CHAT, &asked.encoded.request.body, 200, &call_answer());
    let read = ReadExchange::read(&ex, asked.target, &asked.req);
    let (response, outcome) = got(&asked.req, 200, &call_answer());
    silent(&super::answered(&asked, &read, &response, &Ok(outcome)));
    let mut text_only = call_answer();
    text_only["choices"][0]["message"] = json!({"role": "assistant", "content": "Sunny."});
    text_only["choices"][0]["finish_reason"] = json!("stop");
    let (response, outcome) = got(&asked.req, 200, &text_only);
    let found = super::answered(&asked, &read, &response, &Ok(outcome));
    let answer = (FindingKind::Answer, Side::Downstream, Severity::Breaking);
    assert!(
        found.iter().any(|f| (f.kind, f.side, f.severity) == answer
            && f.message.contains("calls [get_weather] answered as []")),
        "{found:#?}"
    );
}

#[test]
fn the_rounds_go_on_only_from_a_success_without_an_error() {
    let asked = asked("weather", Reading::AsSent);
    let (response, outcome) = got(&asked.req, 200, &call_answer());
    let outcome = Ok(outcome);
    assert!(super::continues(&asked, &response, &outcome).is_some());
    let failed = HttpResponse {
        status: 502,
        ..response
    };
    assert!(super::continues(&asked, &failed, &outcome).is_none());
}

#[test]
fn nothing_sent_upstream_is_a_clean_refusal_on_a_4xx_and_broken_otherwise() {
    let asked = asked("weather", Reading::AsSent);
    let error = json!({"error": {"message": "tool_choice not supported", "type": "x"}});
    let answer = |status| HttpResponse {
        status,
        headers: Default::default(),
        body: error.to_string().into_bytes(),
    };
    let outcome = Ok(Outcome::default());
    assert!(matches!(
        super::unsent(&asked, &answer(400), &outcome),
        Err(Cell::Declined(m)) if m.starts_with("400: ")
    ));
    assert!(matches!(
        super::unsent(&asked, &answer(500), &outcome),
        Err(Cell::Broken(m)) if m.starts_with("nothing sent upstream; answered 500")
    ));
}

/// Round 1 of `multi_turn` after upstream's call: the neutral request, and as the caller
/// encoded it.
fn first_round(asked: &CallerRequest) -> (ChatRequest, crate::http::HttpRequest) {
    let (_, called) = got(&asked.req, 200, &call_answer());
    let file = &asked.base.case.file;
    let next = crate::run::follow_up(
        asked.req.clone(),
        &called,
        &file.rounds[0],
        &asked.base.choice,
    );
    let encoded = crate::providers::encode(Provider::OpenaiChat, &next)
        .unwrap_or_else(|e| panic!("{e}"))
        .request;
    (next, encoded)
}

fn round<'a>(next: &'a ChatRequest, request: &'a crate::http::HttpRequest) -> Round<'a> {
    Round {
        n: 0,
        next,
        request,
        answered: None,
        continued: false,
        upstream_id: None,
    }
}

fn final_text() -> Value {
    json!({"id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Take an umbrella."}}]})
}

#[test]
fn a_round_forwarded_as_it_came_is_silent_and_goes_on() {
    let asked = asked("multi_turn", Reading::AsSent);
    let (next, encoded) = first_round(&asked);
    let ex = Exchange::answered(CHAT, &encoded.body, 200, &final_text());
    let read = ReadExchange::read(&ex, asked.target, &next);
    let (response, outcome) = got(&next, 200, &final_text());
    let (found, go_on) = super::round(
        &asked,
        &round(&next, &encoded),
        Some(&read),
        &Ok((response, Ok(outcome))),
    );
    silent(&found);
    assert!(go_on);
}

#[test]
fn a_round_finds_its_result_unlinked_nothing_sent_and_a_refusal() {
    let asked = asked("multi_turn", Reading::AsSent);
    let (next, encoded) = first_round(&asked);
    let (response, outcome) = got(&next, 200, &final_text());
    let reply = Ok((response, Ok(outcome)));
    // The result sent under an id no call of the conversation had.
    let mut unlinked = encoded.body.clone();
    let messages = unlinked["messages"].as_array_mut().expect("messages");
    let result = messages.last_mut().expect("the tool result");
    result["tool_call_id"] = json!("call_elsewhere");
    let ex = Exchange::answered(CHAT, &unlinked, 200, &final_text());
    let read = ReadExchange::read(&ex, asked.target, &next);
    let (found, _) = super::round(&asked, &round(&next, &encoded), Some(&read), &reply);
    let linked: Vec<_> = found
        .iter()
        .filter(|f| f.kind == FindingKind::ToolResult)
        .cloned()
        .collect();
    assert!(!linked.is_empty(), "{found:#?}");
    assert!(linked.iter().all(|f| f.message.starts_with("round 1: ")));
    // Nothing sent for a valid round: the rounds stop there.
    let (found, go_on) = super::round(&asked, &round(&next, &encoded), None, &reply);
    one(
        &found,
        FindingKind::Round,
        Side::Upstream,
        Severity::Breaking,
        "round 1: nothing sent upstream",
    );
    assert!(!go_on);
    // Upstream refused what the gateway sent for the round.
    let refusal = json!({"error": {"message": "no such call", "type": "invalid_request_error"}});
    let ex = Exchange::answered(CHAT, &encoded.body, 400, &refusal);
    let read = ReadExchange::read(&ex, asked.target, &next);
    let (found, _) = super::round(&asked, &round(&next, &encoded), Some(&read), &reply);
    one(
        &found,
        FindingKind::Refused,
        Side::Upstream,
        Severity::Breaking,
        "round 1: upstream refused the gateway's request with 400: no such call",
    );
}

#[test]
fn a_continuation_refused_with_a_clear_4xx_is_an_answer() {
    let asked = asked("multi_turn", Reading::AsSent);
    let (next, encoded) = first_round(&asked);
    let refused = HttpResponse {
        status: 400,
        headers: Default::default(),
        body: b"{\"error\": {\"message\": \"previous_response_id unsupported\"}}".to_vec(),
    };
    let continued = Round {
        continued: true,
        ..round(&next, &encoded)
    };
    let (found, go_on) = super::round(
        &asked,
        &continued,
        None,
        &Ok((refused, Ok(Outcome::default()))),
    );
    silent(&found);
    assert!(!go_on);
}

/// The case's model refuses the hosted tool variant the caller wrote: forwarded as written (a
/// same-format route), the refusal is the caller's to hear; a variant the gateway chose itself
/// (the caller wrote another spelling) is the gateway's to retry with another.
#[test]
fn a_refused_hosted_variant_is_the_gateway_s_only_when_it_chose_it() {
    let d = crate::case::discover(std::path::Path::new("."));
    let trial = (d.trials.iter())
        .find(|t| t.case.name == "web_search_fallback")
        .expect("cases/web_search_fallback.toml")
        .clone();
    let req = trial.first_request();
    let route = (Provider::OpenaiResponses, Provider::OpenaiResponses);
    let Ok(asked) = CallerRequest::new(trial, route, req, Reading::AsSent) else {
        panic!("web_search_fallback encodes for Responses");
    };
    let refusal = json!({"error": {"message": "Hosted tool 'web_search' is not supported with model 'gpt-4.1'.",
        "type": "invalid_request_error", "param": "tools"}});
    let judge = |body: &Value| {
        let ex = Exchange::answered("/v1/responses", body, 400, &refusal);
        let read = ReadExchange::read(&ex, asked.target, &asked.req);
        super::upstream(&asked, &read)
    };
    let as_written = asked.encoded.request.body.clone();
    let refused = |f: &Finding| f.kind == FindingKind::Refused;
    let found = judge(&as_written);
    assert!(!found.iter().any(refused), "{found:#?}");
    // The caller wrote `web_search_preview`; the gateway sent `web_search` and it was refused.
    let mut chosen = as_written.clone();
    let mut caller = asked.encoded.request.body.clone();
    caller["tools"][0]["type"] = json!("web_search_preview");
    chosen["tools"][0]["type"] = json!("web_search");
    let mut gateway_chose = asked;
    gateway_chose.encoded.request.body = caller;
    let ex = Exchange::answered("/v1/responses", &chosen, 400, &refusal);
    let read = ReadExchange::read(&ex, gateway_chose.target, &gateway_chose.req);
    let found = super::upstream(&gateway_chose, &read);
    assert!(found.iter().any(refused), "{found:#?}");
}

/// A same-format route that forwards the caller's request as written but for the model its
/// route maps to: any refusal of it is the caller's (handed over), not the gateway's; the same
/// refusal of a request the gateway changed is the gateway's.
#[test]
fn a_refusal_of_the_callers_request_forwarded_as_written_is_not_the_gateways() {
    let asked = asked("weather", Reading::AsSent);
    let refusal = json!({"error": {"message": "Tool choices other than 'auto' are not supported with model 'gpt-5-mini'",
        "type": "invalid_request_error", "param": "tool_choice"}});
    let judge = |body: &Value| {
        let ex = Exchange::answered(CHAT, body, 400, &refusal);
        super::upstream(&asked, &ReadExchange::read(&ex, asked.target, &asked.req))
    };
    let mut mapped = asked.encoded.request.body.clone();
    mapped["model"] = json!("gpt-5-mini");
    let found = judge(&mapped);
    assert!(
        !found.iter().any(|f| f.kind == FindingKind::Refused),
        "{found:#?}"
    );
    let mut changed = mapped.clone();
    changed["temperature"] = json!(0.5);
    let found = judge(&changed);
    assert!(
        found.iter().any(|f| f.kind == FindingKind::Refused),
        "{found:#?}"
    );
}
