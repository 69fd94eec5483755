use super::check::{self, RequestView};
use crate::model::Severity;
use crate::model::{ChatRequest, Message, Provider, Tool, ToolCall};
use crate::providers::testkit::{object_tool, weather_call};
use crate::system::fill;
use serde_json::json;

/// A request of `messages` with nothing else set.
fn with_messages(messages: Vec<Message>) -> ChatRequest {
    ChatRequest::new("m").with_messages(messages)
}

#[test]
fn fills_placeholders() {
    assert_eq!(
        fill(
            "a {{port}} {{upstream}}/v1",
            &[("port", "1"), ("upstream", "http://x")]
        ),
        "a 1 http://x/v1"
    );
}

#[test]
fn a_result_that_answers_no_call_is_breaking() {
    let call = weather_call("call_1", json!({"city": "Paris"}));
    let result = |id: &str| Message::Tool {
        call_id: id.into(),
        name: "get_weather".into(),
        content: "sunny".into(),
        is_error: false,
        parts: Vec::new(),
    };
    let request = |id: &str| {
        with_messages(vec![
            Message::Assistant {
                phase: None,
                text: None,
                tool_calls: vec![call.clone()],
                opaque: vec![],
            },
            result(id),
        ])
    };
    let client = RequestView::of(&request("call_1"));
    assert_eq!(
        client.results,
        vec![("call_1".into(), "get_weather".into())]
    );
    let kept = check::upstream(&client, &client, None, (Provider::OpenaiChat, None), false);
    assert!(kept.is_empty(), "{kept:?}");
    let moved = RequestView::of(&request("call_2"));
    let found = check::upstream(&client, &moved, None, (Provider::OpenaiChat, None), false);
    assert!(
        found
            .iter()
            .any(|f| f.severity == Severity::Breaking && f.message.contains("answers no call")),
        "{found:?}"
    );
}

#[test]
fn text_protocol_calls_and_results_are_read_from_the_prose() {
    let call =
        |id: &str, name: &str| ToolCall::unsigned(id, name, json!({"city": "Paris \"<&>\""}));
    let result = |id: &str, name: &str| Message::Tool {
        call_id: id.into(),
        name: name.into(),
        content: "<b>sunny</b>".into(),
        is_error: true,
        parts: Vec::new(),
    };
    let request = with_messages(vec![
        Message::User {
            content: "weather?".into(),
        },
        Message::Assistant {
            phase: None,
            text: Some("checking".into()),
            tool_calls: vec![call("call_1", "get_weather"), call("call_2", "a&\"b")],
            opaque: vec![],
        },
        result("call_1", "get_weather"),
        result("call_2", "a&\"b"),
    ]);
    let client = RequestView::of(&request);
    let body = crate::providers::encode(Provider::TextProtocol, &request)
        .unwrap()
        .request
        .body;
    let sent = check::text_protocol_view(&body);
    let names = |v: &[(String, String)]| v.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&sent.calls), ["get_weather", "a&\"b"]);
    assert_eq!(names(&sent.results), ["get_weather", "a&\"b"]);
    let kept = check::results(&client, &sent);
    assert!(kept.is_empty(), "{kept:?}");

    // A result dropped, and one answering a call the conversation does not hold.
    let mut wrong = body.clone();
    wrong["messages"][2]["content"] =
        json!("<tool_result name=\"get_time\" call_id=\"call>9\">noon</tool_result>");
    let found = check::results(&client, &check::text_protocol_view(&wrong));
    let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "tool result for get_time answers no call",
            "tool results dropped"
        ]
    );
    // Malformed prose is read as nothing, never a panic.
    let odd = json!({"messages": [{"role": "assistant", "content": "<tool_call>{not json</tool_call>"},
        {"role": "user", "content": "<tool_result name=\"x"}, {"role": "user", "content": 3}]});
    assert_eq!(check::text_protocol_view(&odd), RequestView::default());
}

#[test]
fn strict_is_wanted_where_the_projects_encoder_sends_it() {
    let tool = |strict: Option<bool>| Tool {
        allowed_callers: Vec::new(),
        output_schema: None,
        name: "book".into(),
        description: None,
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
        strict,
        eager_input_streaming: false,
        defer_loading: false,
        namespace: None,
    };
    let view = |strict: Option<bool>| RequestView {
        tools: vec![tool(strict)],
        ..RequestView::default()
    };
    let (client, sent) = (view(Some(true)), view(None));
    let found = |ours: Option<&RequestView>| {
        check::upstream(&client, &sent, ours, (Provider::Anthropic, None), false)
            .into_iter()
            .map(|f| f.message)
            .collect::<Vec<_>>()
    };
    // The encoder sends it strict: dropping it is a finding.
    assert_eq!(found(Some(&view(Some(true)))), ["strict dropped for book"]);
    // The encoder drops it too (outside Anthropic's strict subset): the target cannot take it.
    assert!(found(Some(&view(Some(false)))).is_empty());
    // Without the encoder's view, a strict client tool to a strict-capable target is wanted.
    assert_eq!(found(None), ["strict dropped for book"]);
}

/// What the project's own encoder cannot send either is not a finding: a tool it leaves out
/// (Anthropic's allowed subset), a parallel switch the target lacks (Gemini).
#[test]
fn what_the_projects_encoder_cannot_send_is_not_dropped() {
    let view = |names: &[&str], parallel: Option<bool>| RequestView {
        tools: names.iter().map(|n| object_tool(n)).collect(),
        parallel,
        ..RequestView::default()
    };
    let client = view(&["a", "b"], Some(false));
    let sent = view(&["a"], None);
    let found = |ours: Option<&RequestView>, target| {
        check::upstream(&client, &sent, ours, (target, None), false)
            .into_iter()
            .map(|f| f.message)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        found(Some(&view(&["a", "b"], Some(false))), Provider::OpenaiChat),
        ["tools dropped: b", "parallel_tool_calls false dropped"]
    );
    assert!(found(Some(&view(&["a"], None)), Provider::Gemini).is_empty());
    assert_eq!(
        found(None, Provider::Gemini),
        ["tools dropped: b", "parallel_tool_calls false dropped"]
    );
}

/// An allowed list naming exactly the tools sent is kept by plain `auto` / `required` over them
/// (a target without allowed lists); with more tools sent, the subset is lost.
#[test]
fn an_allowed_list_is_kept_by_sending_only_its_tools() {
    use crate::model::{AllowedMode, ToolChoice};
    let view = |names: &[&str], choice: ToolChoice| RequestView {
        tools: names.iter().map(|n| object_tool(n)).collect(),
        choice: Some(choice),
        ..RequestView::default()
    };
    let allowed = |mode| ToolChoice::Allowed {
        mode,
        tools: vec!["a".into()],
    };
    let found = |asked: ToolChoice, sent: &RequestView| {
        let client = view(&["a", "b"], asked);
        let ours = view(&["a"], ToolChoice::Auto);
        check::upstream(
            &client,
            sent,
            Some(&ours),
            (Provider::Anthropic, None),
            false,
        )
        .into_iter()
        .map(|f| f.message)
        .collect::<Vec<_>>()
    };
    assert!(found(allowed(AllowedMode::Auto), &view(&["a"], ToolChoice::Auto)).is_empty());
    assert!(
        found(
            allowed(AllowedMode::Required),
            &view(&["a"], ToolChoice::Required)
        )
        .is_empty()
    );
    assert_eq!(
        found(
            allowed(AllowedMode::Auto),
            &view(&["a", "b"], ToolChoice::Auto)
        ),
        ["tool_choice allowed-auto-a sent as auto"]
    );
}

fn outcome_with(error: Option<u16>) -> crate::model::Outcome {
    crate::model::Outcome {
        error: error.map(|status| crate::model::ProviderError {
            status,
            message: "bad request".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn an_invalid_request_must_be_answered_with_a_4xx_error_in_the_client_format() {
    let found = |status: u16, got: Result<&crate::model::Outcome, String>| {
        check::invalid_request(status, got)
            .into_iter()
            .map(|f| (f.severity, f.message))
            .collect::<Vec<_>>()
    };
    // The client's API's 4xx, answered by the gateway or mapped from upstream: right.
    assert!(found(400, Ok(&outcome_with(Some(400)))).is_empty());
    assert!(found(422, Ok(&outcome_with(Some(422)))).is_empty());
    // A success: breaking.
    assert_eq!(
        found(200, Ok(&outcome_with(None))),
        [(
            Severity::Breaking,
            "an invalid request answered as a success (200)".to_string()
        )]
    );
    // A server error, and a 4xx whose body is not the client's format: breaking.
    assert_eq!(
        found(502, Ok(&outcome_with(Some(502))))[0].0,
        Severity::Breaking
    );
    let not_ours = found(400, Err("expected value at line 1".into()));
    assert_eq!(not_ours[0].0, Severity::Breaking);
    assert!(
        not_ours[0]
            .1
            .contains("without an error in the client's format")
    );
    // An error event under a success status: not the API's answer, but the client sees an error.
    assert_eq!(
        found(200, Ok(&outcome_with(Some(400))))[0].0,
        Severity::Behaviour
    );
}

#[test]
fn a_result_the_client_left_unlinked_is_its_fault_one_the_gateway_unlinked_is_not() {
    let view = |calls: &[&str], results: &[&str]| RequestView {
        calls: calls
            .iter()
            .map(|id| ((*id).to_string(), "get_weather".to_string()))
            .collect(),
        results: results
            .iter()
            .map(|id| ((*id).to_string(), "get_weather".to_string()))
            .collect(),
        ..RequestView::default()
    };
    let messages = |client: &RequestView, sent: &RequestView| {
        check::results(client, sent)
            .into_iter()
            .map(|f| f.message)
            .collect::<Vec<_>>()
    };
    // The client answered an unknown id and the gateway forwarded it: restating the client.
    let client = view(&["call_1"], &["call_unknown"]);
    assert!(messages(&client, &client).is_empty());
    // The client linked its result; the gateway sent it under another id: the gateway's fault.
    let linked = view(&["call_1"], &["call_1"]);
    assert_eq!(
        messages(&linked, &view(&["call_1"], &["call_2"])),
        ["tool result call_2 (get_weather) answers no call"]
    );
    // One unlinked by the client, a second by the gateway: only the second is a finding.
    let two = view(&["call_1", "call_2"], &["call_1", "call_unknown"]);
    assert_eq!(
        messages(
            &two,
            &view(&["call_1", "call_2"], &["call_x", "call_unknown"])
        )
        .len(),
        1
    );
    // Other checks stay: the gateway dropping the client's (invalid) result is still caught.
    assert_eq!(
        messages(&client, &view(&["call_1"], &[])),
        ["tool results dropped"]
    );
}

#[test]
fn the_client_is_at_fault_only_where_its_own_api_rejects_what_the_case_expects_it_to() {
    let d = crate::case::discover(std::path::Path::new("."));
    let trial = |case: &str, provider: Provider| {
        d.trials
            .iter()
            .find(|t| t.case.name == case && t.provider == provider)
            .unwrap_or_else(|| panic!("cases/{case}.toml has no {provider} trial"))
    };
    let chat_unknown = json!({"model": "m", "messages": [
        {"role": "user", "content": "Weather in Tallinn?"},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_unknown_0001", "content": "4"}
    ]});
    let mut chat_linked = chat_unknown.clone();
    chat_linked["messages"][2]["tool_call_id"] = json!("call_1");
    let c10 = trial("c10_unknown_result_id", Provider::OpenaiChat);
    assert!(super::judge::client_fault(c10, &chat_unknown));
    // The first request of the same trial is valid: normal checks apply to it.
    assert!(!super::judge::client_fault(c10, &chat_linked));
    // Gemini links results by name: the case expects a success, the client is not at fault.
    let gemini_unknown = json!({"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "call_unknown_0001",
            "name": "get_weather", "response": {"result": "4"}}}]}
    ]});
    let c10_gemini = trial("c10_unknown_result_id", Provider::Gemini);
    assert!(!super::judge::client_fault(c10_gemini, &gemini_unknown));
    // An array-root schema in a case expecting the API's 400: the client's fault.
    let array_tool = json!({"model": "m", "messages": [{"role": "user", "content": "Tag"}],
        "tools": [{"type": "function", "function": {"name": "tag_items",
            "parameters": {"type": "array", "items": {"type": "string"}}}}]});
    let c13 = trial("c13_invalid_schema_400", Provider::OpenaiChat);
    assert!(super::judge::client_fault(c13, &array_tool));
    // An error the scenario provokes upstream comes with a valid request: never the client's.
    let c13_rate = trial("c13_rate_limited", Provider::OpenaiChat);
    assert!(!super::judge::client_fault(c13_rate, &chat_linked));
    // The same invalid body where the case expects no error: not excused.
    let c01 = trial("c01_text_and_call", Provider::OpenaiChat);
    assert!(!super::judge::client_fault(c01, &chat_unknown));
}

fn result_with(key: &str, cell: super::Cell) -> super::TrialResult {
    super::TrialResult::unjudged(format!("gateway::x::{key}"), id_of(key), cell)
}

/// The identity of a test trial from its key `case::route::choice::mode`.
fn id_of(key: &str) -> crate::engine::RoutedTrialId {
    let p: Vec<&str> = key.split("::").collect();
    crate::engine::RoutedTrialId {
        case: p[0].to_string(),
        route: p[1].to_string(),
        choice: p[2].to_string(),
        mode: crate::case::Mode::from_slug(p[3]).unwrap(),
    }
}

/// A known failure that fails is known; one that passes fails the run, unless it is flaky.
#[test]
fn known_failures_apply_and_a_pass_fails_unless_flaky() {
    use super::Cell;
    let profile = cause_profile(
        "\n[[known_failure]]\ntrials = \"solid::chat→gemini::auto::*\"\nreason = \"always\"\n\n[[known_failure]]\ntrials = \"racy::chat→gemini::auto::*\"\nreason = \"sometimes\"\nflaky = true\n",
    );
    let applied = |key: &str, cell: Cell| {
        let mut r = result_with(key, cell);
        super::known::apply(&profile, std::slice::from_mut(&mut r));
        r.cell
    };
    let failed = || Cell::Fail("downstream: x".into());
    let solid = "solid::chat→gemini::auto::stream";
    let racy = "racy::chat→gemini::auto::stream";
    assert_eq!(
        applied(solid, failed()),
        Cell::KnownFailure("always".into())
    );
    assert!(
        matches!(applied(solid, Cell::Pass), Cell::Fail(m) if m.contains("known failure now passes: remove it"))
    );
    assert_eq!(
        applied(racy, failed()),
        Cell::KnownFailure("sometimes".into())
    );
    assert_eq!(applied(racy, Cell::Pass), Cell::Pass);
    assert_eq!(
        applied("other::chat→gemini::auto::stream", Cell::Pass),
        Cell::Pass
    );
}

#[test]
fn the_init_skeleton_loads_as_a_profile_and_names_the_base_urls() {
    let tmp = tempfile::Builder::new()
        .prefix("tooltape-skeleton-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let addr: std::net::SocketAddr = "127.0.0.1:8790".parse().unwrap();
    let path = dir.join("acme.toml");
    let text = crate::gateway::skeleton("acme", "acme.toml", addr);
    std::fs::write(&path, &text).unwrap();
    let loaded = crate::gateway::load_gateway(dir, path.to_str().unwrap()).unwrap();
    let routes: Vec<String> = loaded.routes().iter().map(super::Route::name).collect();
    assert_eq!(
        routes,
        [
            "chat→openai-chat",
            "responses→openai-responses",
            "messages→anthropic",
            "generate-content→gemini"
        ]
    );
    assert!(loaded.profile.known_failure.is_empty() && loaded.profile.start.is_none());
    for (p, url) in crate::gateway::base_urls(addr) {
        assert!(text.contains(&url), "{p}: {url}");
    }
    assert!(text.contains("tooltape gateway acme.toml --url"));
    let urls: std::collections::BTreeMap<_, _> =
        crate::gateway::base_urls(addr).into_iter().collect();
    assert_eq!(urls[&Provider::OpenaiChat], "http://127.0.0.1:8790/v1");
    assert_eq!(urls[&Provider::Anthropic], "http://127.0.0.1:8790");
}

/// A continuation delta with `"id": null` and `"name": ""` at a call's index is that call (as a
/// client appending it reads it); a delta naming another id at the same index is a second call.
#[test]
fn an_empty_id_and_name_on_a_continuation_delta_is_the_same_call() {
    let chunk = |tc: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}, "finish_reason": null}]})
        )
    };
    let body = |second: serde_json::Value| {
        let mut s = chunk(json!({"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "get_time", "arguments": ""}}));
        s.push_str(&chunk(second));
        s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
        s.into_bytes()
    };
    let empty = super::events::shape(
        Provider::OpenaiChat,
        &body(
            json!({"index": 0, "id": null, "type": "function", "function": {"name": "", "arguments": "{}"}}),
        ),
    );
    assert_eq!(empty.calls.len(), 1);
    assert_eq!(empty.calls[0].reused_by, None);
    let other = super::events::shape(
        Provider::OpenaiChat,
        &body(
            json!({"index": 0, "id": "call_2", "function": {"name": "get_time", "arguments": "{}"}}),
        ),
    );
    // Another id at the same index is a call of its own, sharing the slot.
    assert_eq!(other.calls.len(), 2);
    assert!(other.calls[1].shared && !other.calls[0].shared);
}

// ---------------------------------------------------------------- root causes of a run

use super::cause::{CauseKey, Ended, key_of};
use super::check::{Finding, FindingKind, Side};
use super::known::stale_causes;
use super::result::TrialResult;
use super::{Cell, causes};

fn cause_tools() -> Vec<String> {
    vec![
        "get_weather".into(),
        "get_time".into(),
        "store_record".into(),
    ]
}

fn cause_finding(kind: FindingKind, severity: Severity, message: &str) -> Finding {
    Finding::new(kind, severity, Side::Upstream, message)
}

/// A failing result of `key` whose findings are `findings`, its cause assigned as the runner
/// assigns it.
fn failing(key: &str, findings: Vec<Finding>, body_len: usize) -> TrialResult {
    let cell = Cell::Fail("x".into());
    let case = key.split("::").next().unwrap();
    let cause_key = key_of(Ended::Failed, &findings, &cause_tools(), case);
    let mut r = TrialResult::unjudged(format!("gateway::x::{key}"), id_of(key), cell);
    r.client_request =
        serde_json::json!({"path": "/v1/chat/completions", "body": {"p": "x".repeat(body_len)}});
    r.downstream_status = Some(200);
    r.findings = findings;
    r.cause = cause_key.as_ref().map(CauseKey::id);
    r.cause_key = cause_key;
    r.tools = cause_tools();
    r
}

fn cause_profile(extra: &str) -> crate::gateway::LoadedGateway {
    let tmp = tempfile::Builder::new()
        .prefix("tooltape-cause-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("gateways")).unwrap();
    let base = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gateways/tooltape.toml"),
    )
    .unwrap();
    let base = base
        .split("\n[[known_failure]]")
        .next()
        .unwrap()
        .to_string();
    std::fs::write(dir.join("gateways/x.toml"), format!("{base}{extra}")).unwrap();
    crate::gateway::load_gateway(dir, "x").unwrap()
}

#[test]
fn findings_group_across_routes_choices_and_modes_with_the_smallest_trial() {
    let refused = |tool: &str| {
        vec![
            cause_finding(FindingKind::Request, Severity::Cosmetic, "schema reshaped"),
            cause_finding(
                FindingKind::Refused,
                Severity::Breaking,
                &format!("upstream refused {tool} with 400: max_tokens: Field required"),
            ),
        ]
    };
    let results = vec![
        failing(
            "weather::chat→anthropic::auto::buffered",
            refused("get_weather"),
            50,
        ),
        failing(
            "time::chat→anthropic::required::stream",
            refused("get_time"),
            10,
        ),
        failing(
            "weather::responses→anthropic::auto::stream",
            refused("get_weather"),
            30,
        ),
        failing(
            "weather::chat→gemini::auto::stream",
            vec![cause_finding(
                FindingKind::Stream,
                Severity::Behaviour,
                "no terminal [DONE]",
            )],
            5,
        ),
    ];
    let p = cause_profile("");
    let found = causes(&p, &results);
    assert_eq!(found.len(), 2, "{found:#?}");
    let first = &found[0];
    assert_eq!(first.trials.len(), 3);
    assert_eq!(first.kind, "refused");
    assert_eq!(first.severity, Severity::Breaking);
    assert_eq!(first.routes, ["chat→anthropic", "responses→anthropic"]);
    assert_eq!(
        first.title,
        "upstream: upstream refused get_time with 400: max_tokens: Field required"
    );
    assert_eq!(
        first.reproducer.trial,
        "time::chat→anthropic::required::stream"
    );
    assert!(
        first
            .reproducer
            .command
            .starts_with("curl -sS \"${GATEWAY}/v1/chat/completions\"")
    );
    assert!(first.reproducer.expected.contains("anthropic"));
    assert_eq!(found[1].severity, Severity::Behaviour);
}

#[test]
fn a_known_failure_by_cause_covers_only_its_cause_and_fails_when_it_is_gone() {
    let refused = vec![cause_finding(
        FindingKind::Refused,
        Severity::Breaking,
        "upstream refused with 400: max_tokens: Field required",
    )];
    let other = vec![cause_finding(
        FindingKind::Request,
        Severity::Breaking,
        "tools dropped: get_time",
    )];
    let id = failing("a::chat→anthropic::auto::buffered", refused.clone(), 1)
        .cause
        .unwrap();
    let p = cause_profile(&format!(
        "\n[[known_failure]]\ncause = \"{id}\"\ntrials = \"*::chat→anthropic::*\"\nreason = \"max_tokens\"\nverdict = \"bug\"\ntracker = \"https://example.invalid/1\"\n"
    ));
    let mut results = vec![
        failing("a::chat→anthropic::auto::buffered", refused.clone(), 1),
        failing("b::chat→anthropic::auto::buffered", other, 1),
        failing("c::chat→gemini::auto::buffered", refused, 1),
    ];
    let mut pass = failing("d::chat→anthropic::auto::stream", Vec::new(), 1);
    pass.cell = Cell::Pass;
    pass.cause = None;
    results.push(pass);
    super::known::apply(&p, &mut results);
    assert_eq!(results[0].cell, Cell::KnownFailure("max_tokens".into()));
    // Another cause on the same route, and the same cause off the pattern, still fail.
    assert!(matches!(results[1].cell, Cell::Fail(_)));
    assert!(matches!(results[2].cell, Cell::Fail(_)));
    // A passing trial of the pattern is not an error: the entry names a cause, not trials.
    assert_eq!(results[3].cell, Cell::Pass);
    assert!(stale_causes(&p, &results, &[]).is_empty());
    let found = causes(&p, &results);
    let known = found
        .iter()
        .find(|c| c.id == id)
        .unwrap()
        .known
        .clone()
        .unwrap();
    assert_eq!(known.tracker.as_deref(), Some("https://example.invalid/1"));
    // The bug is fixed: its entry fails the run, naming where it is.
    let fixed: Vec<TrialResult> = results.into_iter().skip(1).collect();
    let stale = stale_causes(&p, &fixed, &[]);
    assert_eq!(stale.len(), 1, "{stale:?}");
    // A filtered run that left out a trial of the entry's pattern cannot tell: not judged.
    let left_out = ["d::chat→anthropic::auto::buffered".to_string()];
    assert!(stale_causes(&p, &fixed, &left_out).is_empty());
    assert!(
        stale[0].contains("x.toml:") && stale[0].contains(&id),
        "{}",
        stale[0]
    );
    // A flaky cause (a race that strikes some runs) is not stale in a run it spared.
    let racy = cause_profile(&format!(
        "\n[[known_failure]]\ncause = \"{id}\"\ntrials = \"*::*::*::*\"\nreason = \"race\"\nflaky = true\n"
    ));
    assert!(stale_causes(&racy, &fixed, &[]).is_empty());
}

/// A stream trial whose calls differ from its buffered trial's fails by the comparison, which
/// runs before known failures: an entry naming that comparison's cause makes it known.
#[test]
fn a_stream_buffered_difference_can_be_a_known_failure_by_its_cause() {
    let calls = |names: &[&str]| crate::model::Outcome {
        tool_calls: names
            .iter()
            .map(|n| ToolCall::unsigned(format!("call_{n}"), (*n).to_string(), json!({})))
            .collect(),
        ..crate::model::Outcome::default()
    };
    let mut buffered = failing("a::chat→anthropic::auto::buffered", Vec::new(), 1);
    buffered.cell = Cell::Pass;
    buffered.cause = None;
    buffered.downstream_outcome = Some(calls(&["get_weather", "get_time"]));
    let mut stream = failing("a::chat→anthropic::auto::stream", Vec::new(), 1);
    stream.cell = Cell::Pass;
    stream.cause = None;
    stream.downstream_outcome = Some(calls(&["get_weather"]));
    let mut results = vec![buffered, stream];
    super::run::compare_modes(&mut results);
    assert!(matches!(&results[1].cell, Cell::Fail(m) if m.contains("differ from buffered")));
    let id = results[1].cause.clone().expect("the comparison's cause");
    let p = cause_profile(&format!(
        "\n[[known_failure]]\ncause = \"{id}\"\ntrials = \"a::*\"\nreason = \"streams drop the second call\"\n"
    ));
    super::known::apply(&p, &mut results);
    assert_eq!(results[0].cell, Cell::Pass);
    assert_eq!(
        results[1].cell,
        Cell::KnownFailure("streams drop the second call".into())
    );
    assert!(stale_causes(&p, &results, &[]).is_empty());
}

/// The same calls with other arguments (a model server's stream assembling them wrong) differ
/// too; the same arguments spelled otherwise (key order) do not.
#[test]
fn a_stream_whose_arguments_differ_from_buffered_fails() {
    let call = |args: serde_json::Value| crate::model::Outcome {
        tool_calls: vec![ToolCall::unsigned("call_1", "get_weather", args)],
        ..crate::model::Outcome::default()
    };
    let pair = |b: serde_json::Value, s: serde_json::Value| {
        let mut buffered = failing("a::chat::forced-get_weather::buffered", Vec::new(), 1);
        (buffered.cell, buffered.cause) = (Cell::Pass, None);
        buffered.downstream_outcome = Some(call(b));
        let mut stream = failing("a::chat::forced-get_weather::stream", Vec::new(), 1);
        (stream.cell, stream.cause) = (Cell::Pass, None);
        stream.downstream_outcome = Some(call(s));
        let mut results = vec![buffered, stream];
        super::run::compare_modes(&mut results);
        results.remove(1).cell
    };
    let differ = pair(json!({"city": "Paris"}), json!({"city": "Pari"}));
    assert_eq!(
        differ,
        Cell::Fail(
            "downstream: stream arguments of get_weather {\"city\":\"Pari\"} differ from buffered {\"city\":\"Paris\"}".into()
        )
    );
    let same = pair(
        json!({"city": "Paris", "unit": "C"}),
        json!({"unit": "C", "city": "Paris"}),
    );
    assert_eq!(same, Cell::Pass);
    // Cut by the output limit, each mode has what it had when cut: not compared.
    let cut = |o: &mut crate::model::Outcome| o.finish = crate::model::Finish::Length;
    let mut buffered = failing("a::chat::auto::buffered", Vec::new(), 1);
    (buffered.cell, buffered.cause) = (Cell::Pass, None);
    buffered.downstream_outcome = Some(call(json!({})));
    let mut stream = failing("a::chat::auto::stream", Vec::new(), 1);
    (stream.cell, stream.cause) = (Cell::Pass, None);
    stream.downstream_outcome = Some(call(json!({"city": "Por"})));
    buffered.downstream_outcome.as_mut().map(cut);
    stream.downstream_outcome.as_mut().map(cut);
    let mut results = vec![buffered, stream];
    super::run::compare_modes(&mut results);
    assert_eq!(results[1].cell, Cell::Pass);
}

/// The hooks a test way that never reaches upstream does not use: nothing shown or kept, no
/// findings, no rounds.
macro_rules! unused_hooks {
    ($worker:ty, $delivered:ty) => {
        fn shown(&self, _: &super::TrialCtx<'_, ()>) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn keep(
            &self,
            _: &super::TrialCtx<'_, ()>,
            _: &$delivered,
            _: &[super::Exchange],
        ) -> super::Kept {
            super::Kept::default()
        }
        fn unsent(
            &self,
            _: &super::TrialCtx<'_, ()>,
            _: &$delivered,
        ) -> Result<Vec<Finding>, Cell> {
            Ok(Vec::new())
        }
        fn downstream(
            &self,
            _: &super::TrialCtx<'_, ()>,
            _: &super::ReadExchange<'_>,
            _: &$delivered,
        ) -> (Vec<Finding>, Option<crate::model::Outcome>) {
            (Vec::new(), None)
        }
        async fn round(
            &self,
            _: &mut $worker,
            _: &super::TrialCtx<'_, ()>,
            _: super::RoundStep<'_>,
        ) -> crate::run::WatchedStep<Vec<super::Exchange>, super::RoundAnswer> {
            unreachable!()
        }
    };
}

/// A way whose second trial panics: that trial is broken (reported, named), the others run.
struct Panicky(String);

impl super::Way for Panicky {
    type Worker = usize;
    type Request = ();
    type Delivered = ();

    fn worker(&self, _: usize) -> usize {
        0
    }
    fn ask(
        &self,
        trial: &super::RoutedTrial,
        _: &super::Upstream,
    ) -> Result<(super::CallerRequest, ()), Cell> {
        if trial.case.name == self.0 {
            panic!("the way fell over");
        }
        Err(Cell::NotApplicable("nothing to send".into()))
    }
    async fn send(
        &self,
        _: &mut usize,
        _: &super::TrialCtx<'_, ()>,
    ) -> crate::run::WatchedStep<Vec<super::Exchange>, Result<(), String>> {
        unreachable!()
    }
    unused_hooks!(usize, ());
}

#[test]
fn a_panicking_trial_is_a_broken_trial_and_the_others_still_run() {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let cases: Vec<_> = super::cases_of(&discovery)
        .into_iter()
        .filter(|c| c.name.starts_with("c01_"))
        .take(2)
        .collect();
    assert_eq!(cases.len(), 2);
    let boom = cases[1].name.clone();
    let route: super::Route =
        toml::from_str("inbound = \"chat\"\nupstream = \"openai-chat\"\nmodel = \"m\"\n").unwrap();
    let trials = super::trials(&cases, &[route], None);
    assert!(trials.len() >= 2);
    let results = crate::runtime().block_on(async {
        let upstream = std::sync::Arc::new(super::Upstream::start().await.unwrap());
        super::run::run_trials(
            std::sync::Arc::new(Panicky(boom.clone())),
            (super::SystemKind::Gateway, "panicky"),
            2,
            &upstream,
            trials.clone(),
        )
        .await
    });
    assert_eq!(results.len(), trials.len(), "no trial is dropped");
    for r in &results {
        if r.id.key().starts_with(&format!("{boom}::")) {
            assert!(
                matches!(&r.cell, Cell::Broken(m) if m.contains("panicked") && m.contains("the way fell over")),
                "{:?}",
                r.cell
            );
            assert!(r.cause.is_some(), "a broken trial has a root cause");
        } else {
            assert!(matches!(r.cell, Cell::NotApplicable(_)), "{:?}", r.cell);
        }
    }
}

/// The corpus's case continued on another provider (round 2 on Gemini).
fn continued_case() -> Vec<std::sync::Arc<crate::case::Case>> {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    super::cases_of(&discovery)
        .into_iter()
        .filter(|c| c.name == "c20_continue_on_other_provider")
        .collect()
}

#[test]
fn a_case_continued_on_another_provider_runs_from_the_other_routes_with_the_rounds_route_model() {
    let cases = continued_case();
    let route = |inbound: &str, upstream: &str, model: &str| -> super::Route {
        toml::from_str(&format!(
            "inbound = \"{inbound}\"\nupstream = \"{upstream}\"\nmodel = \"{model}\"\n"
        ))
        .unwrap()
    };
    let routes = [
        route("messages", "anthropic", "tt-anthropic"),
        route("messages", "gemini", "tt-gemini"),
        route("generate-content", "anthropic", "tt-anthropic"),
    ];
    let trials = super::trials(&cases, &routes, Some("::buffered"));
    // From messages→anthropic only: messages→gemini starts where round 2 goes, and
    // generate-content has no route to gemini.
    assert_eq!(trials.len(), 1, "{trials:?}");
    let t = &trials[0];
    assert_eq!(t.route.name(), "messages→anthropic");
    assert_eq!(t.model_for(crate::model::Provider::Gemini), "tt-gemini");
    assert_eq!(
        t.model_for(crate::model::Provider::Anthropic),
        "tt-anthropic"
    );
}

#[test]
fn a_library_continues_on_another_provider_through_its_route_to_that_provider() {
    let cases = continued_case();
    // A library's routes speak their upstream's own API (client mode labels them).
    let route = |api: &str, model: &str| -> super::Route {
        let mut r: super::Route = toml::from_str(&format!(
            "inbound = \"{api}\"\nupstream = \"{}\"\nmodel = \"{model}\"\n",
            match api {
                "messages" => "anthropic",
                _ => "gemini",
            }
        ))
        .unwrap();
        r.label = Some(r.upstream.slug().into());
        r
    };
    let routes = [
        route("messages", "tt-anthropic"),
        route("generate-content", "tt-gemini"),
    ];
    let trials = super::trials(&cases, &routes, Some("::buffered"));
    // From the library's Anthropic route, round 2 through its Gemini route; not from Gemini.
    assert_eq!(trials.len(), 1, "{trials:?}");
    assert_eq!(trials[0].route.name(), "anthropic");
    assert_eq!(
        trials[0].model_for(crate::model::Provider::Gemini),
        "tt-gemini"
    );
    // The same routes unlabelled are a gateway's: no route from messages to Gemini.
    let gateway: Vec<_> = (routes.iter().cloned())
        .map(|mut r| {
            r.label = None;
            r
        })
        .collect();
    assert!(super::trials(&cases, &gateway, Some("::buffered")).is_empty());
}

#[test]
fn a_case_with_more_inbound_formats_runs_on_every_gateway_route_to_its_provider() {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let cases: Vec<_> = (super::cases_of(&discovery).into_iter())
        .filter(|c| c.name == "c34_vllm_reasoning_kept")
        .collect();
    let route = |inbound: &str, upstream: &str| -> super::Route {
        toml::from_str(&format!(
            "inbound = \"{inbound}\"\nupstream = \"{upstream}\"\nmodel = \"m\"\n"
        ))
        .unwrap()
    };
    let routes = [
        route("messages", "openai-chat"),
        route("chat", "openai-chat"),
        route("messages", "anthropic"),
    ];
    let names: Vec<String> = (super::trials(&cases, &routes, Some("::buffered")).iter())
        .map(|t| t.route.name())
        .collect();
    // Every inbound format to the case's one provider; never another upstream.
    assert_eq!(names, ["messages→openai-chat", "chat→openai-chat"]);
}

/// A way whose caller has no parallel switch: it refuses a trial that sets one, naming the
/// option, and otherwise sends nothing (no findings: a pass).
struct NoParallelSwitch;

impl super::Way for NoParallelSwitch {
    type Worker = ();
    type Request = ();
    /// Whether the trial set the switch.
    type Delivered = bool;

    fn worker(&self, _: usize) {}
    fn ask(
        &self,
        trial: &super::RoutedTrial,
        _: &super::Upstream,
    ) -> Result<(super::CallerRequest, ()), Cell> {
        let inbound = trial.route.inbound;
        let (base, req) = trial.first_request(inbound);
        let route = (inbound, trial.route.upstream);
        let asked = super::CallerRequest::new(base, route, req, super::Reading::ByMeaning)?;
        Ok((asked, ()))
    }
    async fn send(
        &self,
        _: &mut (),
        ctx: &super::TrialCtx<'_, ()>,
    ) -> crate::run::WatchedStep<Vec<super::Exchange>, Result<bool, String>> {
        crate::run::WatchedStep {
            answer: Ok(ctx.trial.case.file.parallel.is_some()),
            seen: Vec::new(),
            waited: std::time::Duration::ZERO,
        }
    }
    fn not_expressible(&self, switch: &bool) -> Option<super::NotExpressible> {
        switch.then(|| super::NotExpressible {
            detail: "not expressible in no-switch: parallel_tool_calls".into(),
            options: vec![crate::case::CaseOption::Parallel],
        })
    }
    unused_hooks!((), bool);
}

/// A way that cannot carry an option incidental to the case runs the trial without it, the
/// note kept; where the option is the case's subject the trial is not applicable.
#[test]
fn an_incidental_option_is_left_out_and_a_subject_is_not_applicable() {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let cases: Vec<_> = super::cases_of(&discovery)
        .into_iter()
        .filter(|c| {
            ["c20_ids_invalid_for_target", "parallel", "weather"].contains(&c.name.as_str())
        })
        .collect();
    assert_eq!(cases.len(), 3);
    let route: super::Route =
        toml::from_str("inbound = \"chat\"\nupstream = \"anthropic\"\nmodel = \"m\"\n").unwrap();
    let trials = super::trials(&cases, &[route], None);
    let results = crate::runtime().block_on(async {
        let upstream = std::sync::Arc::new(super::Upstream::start().await.unwrap());
        let kind = (super::SystemKind::Client, "no-switch");
        super::run::run_trials(
            std::sync::Arc::new(NoParallelSwitch),
            kind,
            1,
            &upstream,
            trials,
        )
        .await
    });
    for r in &results {
        let case = r.id.case.as_str();
        match case {
            // `subject = []`: the switch only lets the model make its calls.
            "c20_ids_invalid_for_target" => {
                assert_eq!(r.cell, Cell::Pass, "{}", r.name);
                assert_eq!(r.left_out.len(), 1, "{}", r.name);
                assert!(
                    r.left_out[0].starts_with("parallel left out: not expressible in no-switch"),
                    "{}",
                    r.left_out[0]
                );
            }
            // The switch is what the case is about.
            "parallel" => {
                assert!(
                    matches!(r.cell, Cell::NotApplicable(_)),
                    "{}: {:?}",
                    r.name,
                    r.cell
                );
                assert!(r.left_out.is_empty());
            }
            // No switch set: nothing to leave out.
            _ => assert!(r.cell == Cell::Pass && r.left_out.is_empty(), "{}", r.name),
        }
    }
    assert!(results.iter().any(|r| !r.left_out.is_empty()));
}
