use super::super::check::{Finding, FindingKind, Side};
use super::super::suite::{Cell, TrialResult, apply_known, stale_causes};
use super::{CauseKey, causes, key_of, normalize};
use crate::model::Severity;

fn tools() -> Vec<String> {
    vec![
        "get_weather".into(),
        "get_time".into(),
        "store_record".into(),
    ]
}

#[test]
fn normalize_abstracts_tools_case_ids_numbers_quotes_and_json() {
    let t = tools();
    assert_eq!(
        normalize("tools dropped: get_weather, get_time", &t, "weather"),
        "tools dropped: TOOL, …"
    );
    // A case name inside a choice slug stays; a tool name inside a longer name stays.
    assert_eq!(
        normalize(
            "tool_choice allowed-auto-get_weather+get_time sent as omitted",
            &t,
            "allowed"
        ),
        "tool_choice allowed-auto-TOOL sent as omitted"
    );
    assert_eq!(
        normalize("description of get_weather_v2 changed", &t, "x"),
        "description of get_weather_vN changed"
    );
    // Statuses stay, other numbers and ids go; quoted text and JSON collapse, clipped too.
    assert_eq!(
        normalize(
            "upstream refused the gateway's request with 400: Unknown name \"const\" at 'tools[0]'",
            &t,
            "x"
        ),
        "upstream refused the gateway's request with 400: Unknown name \"…\" at '…'"
    );
    // Escaped quotes inside a quote (Debug-printed text) do not end it.
    assert_eq!(
        normalize(
            r#"round 1: tool result text for get_time changed: "a" → "\"a\" \\""#,
            &t,
            "x"
        ),
        "round N: tool result text for TOOL changed: \"…\" → \"…\""
    );
    assert_eq!(
        normalize("tool result call_8f2a (get_time) answers no call", &t, "x"),
        "tool result ID (TOOL) answers no call"
    );
    assert_eq!(
        normalize(
            "arguments of store_record changed: {\"a\":{\"b\":1.5… → {\"a\":{\"b\":1}}",
            &t,
            "x"
        ),
        "arguments of TOOL changed: {…} → {…}"
    );
    assert_eq!(
        normalize(
            "arguments held back: upstream sent 3 fragments, the gateway 1",
            &t,
            "x"
        ),
        "arguments held back: upstream sent N fragments, the gateway N"
    );
    assert_eq!(
        normalize(
            "schema of get_time lost /$defs, /properties/a/type, /x\nTraceback: …",
            &t,
            "x"
        ),
        "schema of TOOL lost …"
    );
    assert_eq!(
        normalize("calls [get_weather, get_time] answered as []", &t, "x"),
        "calls [TOOL, …] answered as []"
    );
    // Fewer calls and more calls are two causes; how many is not.
    assert_eq!(
        normalize(
            "calls [get_weather, get_time, get_time] answered as [get_time]",
            &t,
            "x"
        ),
        normalize(
            "calls [get_time, get_time] answered as [get_weather]",
            &t,
            "x"
        ),
    );
    assert_ne!(
        normalize("calls [get_time] answered as [get_time, get_time]", &t, "x"),
        normalize("calls [get_time, get_time] answered as [get_time]", &t, "x"),
    );
}

#[test]
fn ids_are_stable_and_tell_side_kind_and_detail_apart() {
    let key = |side: &str, kind: &str, detail: &str| CauseKey {
        side: side.into(),
        kind: kind.into(),
        detail: detail.into(),
    };
    let a = key("upstream", "refused", "max_tokens: Field required");
    // The id is part of profiles: it must not change between runs or builds.
    assert_eq!(a.id(), a.clone().id());
    assert!(a.id().starts_with("refused-") && a.id().len() == "refused-".len() + 8);
    assert_ne!(a.id(), key("downstream", "refused", &a.detail).id());
    assert_ne!(a.id(), key("upstream", "request", &a.detail).id());
    assert_ne!(a.id(), key("upstream", "refused", "max_tokens: other").id());
}

fn finding(kind: FindingKind, severity: Severity, message: &str) -> Finding {
    Finding::new(kind, severity, Side::Upstream, message)
}

/// A failing result of `key` whose findings are `findings`, its cause assigned as the runner
/// assigns it.
fn failing(key: &str, findings: Vec<Finding>, body_len: usize) -> TrialResult {
    let cell = Cell::Fail("x".into());
    let case = key.split("::").next().unwrap();
    let cause_key = key_of(&cell, &findings, &tools(), case);
    TrialResult {
        name: format!("gateway::x::{key}"),
        key: key.to_string(),
        row: String::new(),
        route: key.split("::").nth(1).unwrap().to_string(),
        client_request: serde_json::json!({"path": "/v1/chat/completions", "body": {"p": "x".repeat(body_len)}}),
        upstream_request: None,
        upstream_answer: None,
        downstream_status: Some(200),
        downstream_outcome: None,
        findings,
        cell,
        cause: cause_key.as_ref().map(CauseKey::id),
        cause_key,
        tools: tools(),
        own_time: std::time::Duration::ZERO,
        downstream_body: Vec::new(),
        requests: Vec::new(),
    }
}

fn profile(extra: &str) -> super::super::LoadedProfile {
    let dir = std::env::temp_dir().join(format!(
        "tooltape-cause-{}-{}",
        std::process::id(),
        extra.len()
    ));
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
    let p = super::super::load_profile(&dir, "x").unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    p
}

#[test]
fn findings_group_across_routes_choices_and_modes_with_the_smallest_trial() {
    let refused = |tool: &str| {
        vec![
            finding(FindingKind::Request, Severity::Cosmetic, "schema reshaped"),
            finding(
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
            vec![finding(
                FindingKind::Stream,
                Severity::Behaviour,
                "no terminal [DONE]",
            )],
            5,
        ),
    ];
    let p = profile("");
    let found = causes(&p, &results);
    assert_eq!(found.len(), 2, "{found:#?}");
    let first = &found[0];
    assert_eq!(first.trials.len(), 3);
    assert_eq!(first.kind, "refused");
    assert_eq!(first.severity, Severity::Breaking);
    assert_eq!(first.routes, ["chat→anthropic", "responses→anthropic"]);
    assert_eq!(
        first.title,
        "upstream: upstream refused TOOL with 400: max_tokens: Field required"
    );
    assert_eq!(
        first.reproducer.trial,
        "time::chat→anthropic::required::stream"
    );
    assert!(
        first
            .reproducer
            .curl
            .starts_with("curl -sS \"${GATEWAY}/v1/chat/completions\"")
    );
    assert!(first.reproducer.expected.contains("anthropic"));
    assert_eq!(found[1].severity, Severity::Behaviour);
}

#[test]
fn a_known_failure_by_cause_covers_only_its_cause_and_fails_when_it_is_gone() {
    let refused = vec![finding(
        FindingKind::Refused,
        Severity::Breaking,
        "upstream refused with 400: max_tokens: Field required",
    )];
    let other = vec![finding(
        FindingKind::Request,
        Severity::Breaking,
        "tools dropped: get_time",
    )];
    let id = failing("a::chat→anthropic::auto::buffered", refused.clone(), 1)
        .cause
        .unwrap();
    let p = profile(&format!(
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
    for r in &mut results {
        apply_known(&p, r);
    }
    assert_eq!(results[0].cell, Cell::Known("max_tokens".into()));
    // Another cause on the same route, and the same cause off the pattern, still fail.
    assert!(matches!(results[1].cell, Cell::Fail(_)));
    assert!(matches!(results[2].cell, Cell::Fail(_)));
    // A passing trial of the pattern is not an error: the entry names a cause, not trials.
    assert_eq!(results[3].cell, Cell::Pass);
    assert!(stale_causes(&p, &results).is_empty());
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
    let stale = stale_causes(&p, &fixed);
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(
        stale[0].contains("x.toml:") && stale[0].contains(&id),
        "{}",
        stale[0]
    );
}
