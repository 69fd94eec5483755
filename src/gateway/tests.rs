use super::check::{self, RequestView};
use super::profile::fill;
use crate::model::Severity;
use crate::model::{ChatRequest, Message, Provider, StrictPolicy, Tool, ToolCall};
use serde_json::json;

/// A request of `messages` with nothing else set.
fn with_messages(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        messages,
        model: "m".into(),
        tools: vec![],
        hosted: vec![],
        tool_choice: None,
        parallel_tool_calls: None,
        stream: false,
        max_tokens: None,
        strict: StrictPolicy::Off,
        thinking: None,
    }
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
    let call = ToolCall {
        id: "call_1".into(),
        name: "get_weather".into(),
        arguments: json!({"city": "Paris"}),
        thought_signature: None,
    };
    let result = |id: &str| Message::Tool {
        call_id: id.into(),
        name: "get_weather".into(),
        content: "sunny".into(),
        is_error: false,
    };
    let request = |id: &str| {
        with_messages(vec![
            Message::Assistant {
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
    let kept = check::upstream(&client, &client, None, Provider::OpenaiChat, None, false);
    assert!(kept.is_empty(), "{kept:?}");
    let moved = RequestView::of(&request("call_2"));
    let found = check::upstream(&client, &moved, None, Provider::OpenaiChat, None, false);
    assert!(
        found
            .iter()
            .any(|f| f.severity == Severity::Breaking && f.message.contains("answers no call")),
        "{found:?}"
    );
}

#[test]
fn text_protocol_calls_and_results_are_read_from_the_prose() {
    let call = |id: &str, name: &str| ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: json!({"city": "Paris \"<&>\""}),
        thought_signature: None,
    };
    let result = |id: &str, name: &str| Message::Tool {
        call_id: id.into(),
        name: name.into(),
        content: "<b>sunny</b>".into(),
        is_error: true,
    };
    let request = with_messages(vec![
        Message::User {
            content: "weather?".into(),
        },
        Message::Assistant {
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
        name: "book".into(),
        description: None,
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
        strict,
    };
    let view = |strict: Option<bool>| RequestView {
        tools: vec![tool(strict)],
        ..RequestView::default()
    };
    let (client, sent) = (view(Some(true)), view(None));
    let found = |ours: Option<&RequestView>| {
        check::upstream(&client, &sent, ours, Provider::Anthropic, None, false)
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
    super::TrialResult {
        name: format!("gateway::x::{key}"),
        key: key.to_string(),
        row: String::new(),
        route: String::new(),
        client_request: serde_json::Value::Null,
        upstream_request: None,
        upstream_answer: None,
        downstream_status: None,
        downstream_outcome: None,
        findings: Vec::new(),
        cell,
        own_time: std::time::Duration::ZERO,
        downstream_body: Vec::new(),
        requests: Vec::new(),
    }
}

/// A known failure that fails is known; one that passes fails the run, unless it is flaky.
#[test]
fn known_failures_apply_and_a_pass_fails_unless_flaky() {
    use super::Cell;
    let dir = std::env::temp_dir().join(format!("tooltape-known-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("gateways")).unwrap();
    let base = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("gateways/tooltape.toml"),
    )
    .unwrap();
    let extra = "\n[[known_failure]]\ntrials = \"solid::chat→gemini::auto::*\"\nreason = \"always\"\n\n[[known_failure]]\ntrials = \"racy::chat→gemini::auto::*\"\nreason = \"sometimes\"\nflaky = true\n";
    std::fs::write(dir.join("gateways/x.toml"), format!("{base}{extra}")).unwrap();
    let profile = super::load_profile(&dir, "x").unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let applied = |key: &str, cell: Cell| {
        let mut r = result_with(key, cell);
        super::suite::apply_known(&profile, &mut r);
        r.cell
    };
    let failed = || Cell::Fail("downstream: x".into());
    let solid = "solid::chat→gemini::auto::stream";
    let racy = "racy::chat→gemini::auto::stream";
    assert_eq!(applied(solid, failed()), Cell::Known("always".into()));
    assert!(
        matches!(applied(solid, Cell::Pass), Cell::Fail(m) if m.contains("known failure now passes: remove it"))
    );
    assert_eq!(applied(racy, failed()), Cell::Known("sometimes".into()));
    assert_eq!(applied(racy, Cell::Pass), Cell::Pass);
    assert_eq!(
        applied("other::chat→gemini::auto::stream", Cell::Pass),
        Cell::Pass
    );
}

#[test]
fn the_init_skeleton_loads_as_a_profile_and_names_the_base_urls() {
    let dir = std::env::temp_dir().join(format!("tooltape-skeleton-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let addr: std::net::SocketAddr = "127.0.0.1:8790".parse().unwrap();
    let path = dir.join("acme.toml");
    let text = super::skeleton("acme", "acme.toml", addr);
    std::fs::write(&path, &text).unwrap();
    let loaded = super::load_profile(&dir, path.to_str().unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
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
    for (p, url) in super::base_urls(addr) {
        assert!(text.contains(&url), "{p}: {url}");
    }
    assert!(text.contains("tooltape gateway acme.toml --url"));
    let urls: std::collections::BTreeMap<_, _> = super::base_urls(addr).into_iter().collect();
    assert_eq!(urls[&Provider::OpenaiChat], "http://127.0.0.1:8790/v1");
    assert_eq!(urls[&Provider::Anthropic], "http://127.0.0.1:8790");
}
