//! The checks of tools a target may not express (`hosted_kept`, `names_within_limits`,
//! `names_restored`): each finding, and silence on the faithful request and answer; the hosted
//! tool the case's model refuses, read as the caller's refusal (`caller_tool_unsupported`).

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{
    FindingKind, RequestView, Side, caller_tool_unsupported, hosted_kept, names_restored,
    names_within_limits,
};
use crate::model::{Outcome, Provider, Severity, ToolCall};
use crate::providers::testkit::object_tool as tool;

const LONG: &str =
    "mcp__github_enterprise_server__list_repository_pull_request_review_comments_by_author";

fn view(tools: &[&str], hosted_search: bool) -> RequestView {
    RequestView {
        tools: tools.iter().map(|n| tool(n)).collect(),
        hosted_search,
        ..RequestView::default()
    }
}

fn calling(names: &[&str]) -> Outcome {
    let tool_calls = names
        .iter()
        .enumerate()
        .map(|(i, n)| ToolCall::unsigned(format!("call_{i}"), n.to_string(), json!({})))
        .collect();
    Outcome {
        tool_calls,
        ..Outcome::default()
    }
}

#[test]
fn a_hosted_search_dropped_or_sent_as_a_function_is_found_kept_it_is_silent() {
    let client = view(&["get_weather"], true);
    silent(&hosted_kept(&client, &view(&["get_weather"], true), false));
    let dropped = hosted_kept(&client, &view(&["get_weather"], false), false);
    let (kind, side, sev) = (
        FindingKind::Unexpressible,
        Side::Upstream,
        Severity::Breaking,
    );
    one(&dropped, kind, side, sev, "hosted web search dropped");
    let as_function = hosted_kept(&client, &view(&["get_weather", "web_search"], false), false);
    one(
        &as_function,
        kind,
        side,
        sev,
        "sent as a function `web_search`",
    );
    // REQUIRED grounding has its own finding; a client function named so is the client's.
    silent(&hosted_kept(&client, &view(&["get_weather"], false), true));
    let own = view(&["web_search"], true);
    one(
        &hosted_kept(&own, &view(&["web_search"], false), false),
        kind,
        side,
        sev,
        "dropped",
    );
    silent(&hosted_kept(
        &view(&["get_weather"], false),
        &view(&[], false),
        false,
    ));
}

#[test]
fn a_name_over_the_target_s_limit_is_found_where_the_target_refuses_it() {
    let sent = view(&[LONG, "get_time"], false);
    for target in [
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Anthropic,
    ] {
        let found = names_within_limits(&sent, target);
        let (kind, side, sev) = (FindingKind::ToolName, Side::Upstream, Severity::Breaking);
        one(&found, kind, side, sev, "(85 characters)");
        assert!(found[0].message.contains("{1,64}"), "{:?}", found[0]);
    }
    silent(&names_within_limits(&sent, Provider::Gemini));
    silent(&names_within_limits(&sent, Provider::TextProtocol));
    silent(&names_within_limits(
        &view(&[&LONG[..64]], false),
        Provider::Anthropic,
    ));
    let over_gemini = "a".repeat(129);
    let found = names_within_limits(&view(&[&over_gemini], false), Provider::Gemini);
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn a_call_under_the_gateway_s_shortened_name_is_found_restored_it_is_silent() {
    let declared = [tool(LONG)];
    let short = &LONG[..64];
    let sent = [tool(short)];
    let found = names_restored(&declared, &sent, &calling(&[short]));
    let (kind, side, sev) = (FindingKind::ToolName, Side::Downstream, Severity::Breaking);
    one(&found, kind, side, sev, "not restored");
    silent(&names_restored(&declared, &sent, &calling(&[LONG])));
    // A call to a tool neither side declared is the model's, not the gateway's.
    silent(&names_restored(&declared, &sent, &calling(&["other"])));
    silent(&names_restored(&declared, &declared, &calling(&[LONG])));
}

#[test]
fn the_case_s_refusal_of_the_hosted_tool_sent_is_the_caller_s_and_no_other_error_is() {
    let unsupported = ["web_search".to_string()];
    let message = "Hosted tool 'web_search' is not supported with model 'gpt-4.1-mini'.";
    let sent = json!({"tools": [{"type": "web_search"}]});
    assert!(caller_tool_unsupported(&unsupported, &sent, 400, message));
    // Gemini's tools carry the type as their key.
    let gemini = ["googleSearch".to_string()];
    let google = json!({"tools": [{"googleSearch": {}}]});
    let said = "Tool 'googleSearch' is not supported with this model.";
    assert!(caller_tool_unsupported(&gemini, &google, 400, said));
    // The case's model refuses no hosted tool: any 400 is the library's.
    assert!(!caller_tool_unsupported(&[], &sent, 400, message));
    // Another variant sent (the retry), another error, another status: not the case's refusal.
    let preview = json!({"tools": [{"type": "web_search_preview"}]});
    assert!(!caller_tool_unsupported(
        &unsupported,
        &preview,
        400,
        message
    ));
    assert!(!caller_tool_unsupported(
        &unsupported,
        &json!({}),
        400,
        message
    ));
    let other = "Missing required parameter: 'input'.";
    assert!(!caller_tool_unsupported(&unsupported, &sent, 400, other));
    assert!(!caller_tool_unsupported(&unsupported, &sent, 500, message));
}
