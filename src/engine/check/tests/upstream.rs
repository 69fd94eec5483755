//! The upstream checks (`upstream`, `results`, `injected`): each finding, and silence on the
//! faithful request.

use serde_json::{Value, json};

use super::{one, silent};
use crate::engine::check::{
    Finding, FindingKind, RequestView, Side, injected, results, strict_omitted, upstream,
};
use crate::model::{AllowedMode, Provider, Severity, Tool, ToolChoice};

fn weather() -> Tool {
    Tool {
        allowed_callers: Vec::new(),
        output_schema: None,
        name: "get_weather".into(),
        description: Some("The weather in a city".into()),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string",
            "minLength": 1}}, "required": ["city"]}),
        strict: None,
        eager_input_streaming: false,
        defer_loading: false,
        namespace: None,
    }
}

fn named(name: &str) -> Tool {
    Tool {
        name: name.into(),
        ..weather()
    }
}

fn with_tools(tools: Vec<Tool>) -> RequestView {
    RequestView {
        tools,
        ..RequestView::default()
    }
}

/// `upstream` to Chat Completions, without the encoder's reference, a rejection or grounding.
fn check(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    upstream(client, sent, None, (Provider::OpenaiChat, None), false)
}

#[track_caller]
fn request(found: &[Finding], severity: Severity, gist: &str) {
    one(found, FindingKind::Request, Side::Upstream, severity, gist);
}

#[track_caller]
fn tool_result(found: &[Finding], gist: &str) {
    one(
        found,
        FindingKind::ToolResult,
        Side::Upstream,
        Severity::Breaking,
        gist,
    );
}

/// A request with every part the upstream checks read set.
fn full() -> RequestView {
    RequestView {
        tools: vec![
            Tool {
                strict: Some(true),
                ..weather()
            },
            named("get_time"),
        ],
        choice: Some(ToolChoice::Forced("get_weather".into())),
        parallel: Some(false),
        hosted_search: true,
        calls: vec![("call_1".into(), "get_weather".into())],
        results: vec![("call_1".into(), "get_weather".into())],
        result_texts: vec!["sunny".into()],
    }
}

#[test]
fn a_faithful_request_is_silent() {
    let client = full();
    silent(&upstream(
        &client,
        &client.clone(),
        Some(&client),
        (Provider::OpenaiChat, None),
        true,
    ));
    silent(&check(&client, &client));
}

#[test]
fn a_dropped_tool_is_breaking() {
    let client = with_tools(vec![weather(), named("get_time")]);
    request(
        &check(&client, &with_tools(vec![weather()])),
        Severity::Breaking,
        "tools dropped: get_time",
    );
}

/// A namespaced tool declared as `NAMESPACE__NAME` on a target without namespaces is kept
/// (LiteLLM's Responses bridge qualifies the name and maps calls back); another name is not.
#[test]
fn a_namespaced_tool_under_its_qualified_name_is_kept() {
    let crm = Tool {
        namespace: Some("crm".into()),
        ..named("lookup_customer")
    };
    let client = with_tools(vec![weather(), crm]);
    silent(&check(
        &client,
        &with_tools(vec![weather(), named("crm__lookup_customer")]),
    ));
    request(
        &check(&client, &with_tools(vec![weather(), named("crm_lookup")])),
        Severity::Breaking,
        "tools dropped: lookup_customer",
    );
}

#[test]
fn tool_choice_none_may_be_sent_by_leaving_the_tools_out() {
    let client = RequestView {
        choice: Some(ToolChoice::None),
        ..with_tools(vec![weather()])
    };
    silent(&check(&client, &RequestView::default()));
    // `none` sent as `auto` with the tools is another meaning.
    let sent = RequestView {
        choice: Some(ToolChoice::Auto),
        ..with_tools(vec![weather()])
    };
    request(
        &check(&client, &sent),
        Severity::Breaking,
        "tool_choice none sent as auto",
    );
}

#[test]
fn a_changed_description_is_behaviour_unless_the_encoder_changes_it_too() {
    let client = with_tools(vec![weather()]);
    let sent = with_tools(vec![Tool {
        description: Some("Weather".into()),
        ..weather()
    }]);
    request(
        &check(&client, &sent),
        Severity::Behaviour,
        "description of get_weather changed",
    );
    let to =
        |ours: &RequestView| upstream(&client, &sent, Some(ours), (Provider::Gemini, None), false);
    silent(&to(&sent));
}

#[test]
fn a_schema_that_lost_a_keyword_is_behaviour_unless_the_encoder_drops_it_too() {
    let client = with_tools(vec![weather()]);
    let mut lost = weather();
    lost.parameters["properties"]["city"] = json!({"type": "string"});
    let sent = with_tools(vec![lost]);
    request(
        &check(&client, &sent),
        Severity::Behaviour,
        "schema of get_weather lost /properties/city/minLength",
    );
    // The target's sanitizer drops it as well (its schema otherwise differs from the one sent):
    // only what even the sanitizer keeps counts as lost, so this is a reshape.
    let mut sanitized = sent.clone();
    sanitized.tools[0].parameters["required"] = json!(["city", "x"]);
    let found = upstream(
        &client,
        &sent,
        Some(&sanitized),
        (Provider::Gemini, None),
        false,
    );
    request(
        &found,
        Severity::Cosmetic,
        "schema of get_weather reshaped (same keywords)",
    );
    silent(&upstream(
        &client,
        &sent,
        Some(&sent),
        (Provider::Gemini, None),
        false,
    ));
}

#[test]
fn a_schema_reshaped_with_the_same_keywords_is_cosmetic() {
    let bare = |parameters: Value| {
        with_tools(vec![Tool {
            parameters,
            ..weather()
        }])
    };
    // An empty `properties` constrains nothing: leaving it out loses no keyword.
    let client = bare(json!({"type": "object", "properties": {}, "required": ["a", "b"]}));
    let sent = bare(json!({"type": "object", "required": ["b", "a"]}));
    request(
        &check(&client, &sent),
        Severity::Cosmetic,
        "schema of get_weather reshaped (same keywords)",
    );
}

/// A tool whose `city` property is `city`: the rest of the weather schema as written.
fn with_city(city: Value) -> RequestView {
    let mut t = weather();
    t.parameters["properties"]["city"] = city;
    with_tools(vec![t])
}

/// The caller's `city`: a string or null, with two more keywords.
fn nullable_city() -> RequestView {
    with_city(json!({"type": ["string", "null"], "description": "City", "minLength": 1}))
}

/// `client` and `sent` are the same schema, read either way round; `gemini` in Gemini's proto
/// spelling too.
fn same_schema(client: &RequestView, sent: &[Value], gemini: Value) {
    for sent in sent {
        let sent = with_city(sent.clone());
        for (a, b) in [(client, &sent), (&sent, client)] {
            request(
                &check(a, b),
                Severity::Cosmetic,
                "schema of get_weather reshaped (same keywords)",
            );
        }
    }
    request(
        &upstream(
            client,
            &with_city(gemini),
            None,
            (Provider::Gemini, None),
            false,
        ),
        Severity::Cosmetic,
        "schema of get_weather reshaped (same keywords)",
    );
}

#[test]
fn a_type_list_spelled_as_any_of_is_the_same_schema() {
    let client = nullable_city();
    let same = [
        // The other keywords copied into every branch (LiteLLM's rewrite for Gemini).
        json!({"anyOf": [{"type": "string", "description": "City", "minLength": 1},
                         {"type": "null", "description": "City", "minLength": 1}]}),
        // The other keywords beside the anyOf.
        json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "City", "minLength": 1}),
        // Both, agreeing.
        json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null", "minLength": 1}],
               "description": "City", "minLength": 1}),
    ];
    // Gemini's proto spelling of the keyword.
    let gemini = json!({"any_of": [{"type": "STRING"}, {"type": "NULL"}],
                        "description": "City", "min_length": 1});
    same_schema(&client, &same, gemini);
}

/// `sent` for the caller's nullable `city` loses keywords, as `gist` says.
fn loses(sent: Value, gist: &str) {
    request(
        &check(&nullable_city(), &with_city(sent)),
        Severity::Behaviour,
        gist,
    );
}

#[test]
fn an_any_of_that_is_not_the_type_list_still_loses_keywords() {
    // A keyword left out of the rewrite is lost.
    loses(
        json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "City"}),
        "schema of get_weather lost /properties/city/minLength",
    );
    // Branches that differ in their other keywords are not one type list: the property's own
    // keywords are gone.
    loses(
        json!({"anyOf": [{"type": "string", "description": "City", "minLength": 1},
                         {"type": "null", "minLength": 1}]}),
        "schema of get_weather lost /properties/city/description, /properties/city/minLength, /properties/city/type",
    );
    // A keyword beside the anyOf that disagrees with the branches' is not folded either.
    loses(
        json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null", "minLength": 1}],
               "description": "City", "minLength": 2}),
        "schema of get_weather lost /properties/city/type",
    );
}

#[test]
fn a_null_beside_one_schema_is_one_meaning_whatever_its_spelling() {
    let same = [
        // A one-branch anyOf and `nullable` beside it.
        json!({"anyOf": [{"type": "string", "description": "City", "minLength": 1}], "nullable": true}),
        // The branch and a `null` branch.
        json!({"anyOf": [{"type": "string", "description": "City", "minLength": 1}, {"type": "null"}]}),
        // The same, the other keywords beside the anyOf.
        json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "description": "City"}),
        // The schema itself with `nullable` (OpenAPI's and Gemini's spelling).
        json!({"type": "string", "nullable": true, "description": "City", "minLength": 1}),
        // A one-branch anyOf whose branch is nullable (LiteLLM's rewrite for Gemini).
        json!({"anyOf": [{"type": "string", "nullable": true, "description": "City", "minLength": 1}]}),
    ];
    // Gemini's proto spelling, upper-case types.
    let gemini = json!({"any_of": [{"type": "STRING", "nullable": true,
                                   "description": "City", "min_length": 1}]});
    same_schema(&nullable_city(), &same, gemini);
}

#[test]
fn a_one_branch_any_of_that_is_not_the_schema_still_loses_keywords() {
    // A keyword beside the anyOf that disagrees with its branch's is not merged.
    loses(
        json!({"anyOf": [{"type": "string", "description": "Town"}],
               "description": "City", "minLength": 1}),
        "schema of get_weather lost /properties/city/type",
    );
    // Two branches besides the null one are not one schema.
    loses(
        json!({"anyOf": [{"type": "string", "description": "City", "minLength": 1},
                         {"type": "integer"}, {"type": "null"}]}),
        "schema of get_weather lost /properties/city/description, /properties/city/minLength, /properties/city/type",
    );
    // A keyword left out of the merged branch is lost.
    loses(
        json!({"anyOf": [{"type": "string", "nullable": true, "description": "City"}]}),
        "schema of get_weather lost /properties/city/minLength",
    );
}

#[test]
fn strict_dropped_is_behaviour_where_the_target_takes_it() {
    let client = with_tools(vec![Tool {
        strict: Some(true),
        ..weather()
    }]);
    let sent = with_tools(vec![weather()]);
    request(
        &check(&client, &sent),
        Severity::Behaviour,
        "strict dropped for get_weather",
    );
    silent(&upstream(
        &client,
        &sent,
        None,
        (Provider::Gemini, None),
        false,
    ));
}

#[test]
fn a_changed_tool_choice_is_breaking() {
    let with_choice = |choice: Option<ToolChoice>| RequestView {
        choice,
        ..with_tools(vec![weather(), named("get_time"), named("get_date")])
    };
    request(
        &check(
            &with_choice(Some(ToolChoice::Required)),
            &with_choice(Some(ToolChoice::Auto)),
        ),
        Severity::Breaking,
        "tool_choice required sent as auto",
    );
    request(
        &check(
            &with_choice(Some(ToolChoice::Forced("get_time".into()))),
            &with_choice(None),
        ),
        Severity::Breaking,
        "tool_choice forced-get_time sent as omitted",
    );
    // Omitted is auto; `required` over one allowed tool forces it; allowed lists in any order.
    silent(&check(
        &with_choice(None),
        &with_choice(Some(ToolChoice::Auto)),
    ));
    let allowed = |mode, tools: &[&str]| {
        Some(ToolChoice::Allowed {
            mode,
            tools: tools.iter().map(|t| (*t).to_string()).collect(),
        })
    };
    silent(&check(
        &with_choice(allowed(AllowedMode::Required, &["get_time"])),
        &with_choice(Some(ToolChoice::Forced("get_time".into()))),
    ));
    silent(&check(
        &with_choice(allowed(AllowedMode::Auto, &["get_weather", "get_time"])),
        &with_choice(allowed(AllowedMode::Auto, &["get_time", "get_weather"])),
    ));
    request(
        &check(
            &with_choice(allowed(AllowedMode::Auto, &["get_time"])),
            &with_choice(allowed(AllowedMode::Required, &["get_time"])),
        ),
        Severity::Breaking,
        "tool_choice allowed-auto-get_time sent as allowed-required-get_time",
    );
}

/// An allowed list naming every tool sent means plain `auto` / `required` — on both sides: the
/// same list passed through unchanged is the same choice, and so is its plain spelling.
#[test]
fn an_allowed_list_of_every_tool_passed_through_is_kept() {
    let all = ["get_weather", "get_time", "get_date"];
    let with_choice = |choice: Option<ToolChoice>| RequestView {
        choice,
        ..with_tools(vec![weather(), named("get_time"), named("get_date")])
    };
    for mode in [AllowedMode::Auto, AllowedMode::Required] {
        let list = Some(ToolChoice::Allowed {
            mode,
            tools: all.iter().map(|t| (*t).to_string()).collect(),
        });
        let plain = Some(match mode {
            AllowedMode::Auto => ToolChoice::Auto,
            AllowedMode::Required => ToolChoice::Required,
        });
        silent(&check(
            &with_choice(list.clone()),
            &with_choice(list.clone()),
        ));
        silent(&check(
            &with_choice(list.clone()),
            &with_choice(plain.clone()),
        ));
        silent(&check(&with_choice(plain), &with_choice(list)));
    }
}

#[test]
fn a_dropped_parallel_switch_is_behaviour() {
    let client = RequestView {
        parallel: Some(false),
        ..with_tools(vec![weather()])
    };
    request(
        &check(&client, &with_tools(vec![weather()])),
        Severity::Behaviour,
        "parallel_tool_calls false dropped",
    );
    // Without tools the switch means nothing.
    let no_tools = RequestView {
        parallel: Some(false),
        ..RequestView::default()
    };
    silent(&check(&no_tools, &RequestView::default()));
}

#[test]
fn required_grounding_forwarded_without_search_is_breaking() {
    let client = RequestView {
        hosted_search: true,
        ..RequestView::default()
    };
    let found = upstream(
        &client,
        &RequestView::default(),
        None,
        (Provider::OpenaiChat, None),
        true,
    );
    request(
        &found,
        Severity::Breaking,
        "REQUIRED hosted search forwarded without the search tool",
    );
    silent(&upstream(
        &client,
        &client,
        None,
        (Provider::OpenaiChat, None),
        true,
    ));
}

#[test]
fn a_request_the_target_would_reject_is_breaking() {
    let view = with_tools(vec![weather()]);
    let found = upstream(
        &view,
        &view,
        None,
        (Provider::Anthropic, Some("tools.0: bad schema".into())),
        false,
    );
    request(
        &found,
        Severity::Breaking,
        "anthropic would reject it: tools.0: bad schema",
    );
}

// ---------------------------------------------------------------- tool results

/// A conversation of `calls` and `results` (`(id, name)`), each result's text `sunny`.
fn conversation(calls: &[(&str, &str)], results: &[(&str, &str)]) -> RequestView {
    let pairs = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(id, name)| ((*id).to_string(), (*name).to_string()))
            .collect()
    };
    RequestView {
        calls: pairs(calls),
        results: pairs(results),
        result_texts: vec!["sunny".into(); results.len()],
        ..RequestView::default()
    }
}

#[test]
fn linked_results_are_silent_by_id_or_by_name() {
    let by_id = conversation(&[("call_1", "get_weather")], &[("call_1", "get_weather")]);
    silent(&results(&by_id, &by_id));
    // Gemini and the text protocol carry no ids: a result answers the call of its name.
    let by_name = conversation(&[("", "get_weather")], &[("", "get_weather")]);
    silent(&results(&by_name, &by_name));
}

#[test]
fn a_result_the_gateway_unlinked_is_breaking_and_named_as_the_wire_names_it() {
    let client = conversation(&[("call_1", "get_weather")], &[("call_1", "get_weather")]);
    let sent = |result: (&str, &str)| conversation(&[("call_1", "get_weather")], &[result]);
    tool_result(
        &results(&client, &sent(("call_2", "get_weather"))),
        "tool result call_2 (get_weather) answers no call",
    );
    tool_result(
        &results(&client, &sent(("call_2", ""))),
        "tool result call_2 answers no call",
    );
    let client = conversation(&[("", "get_weather")], &[("", "get_weather")]);
    let sent = conversation(&[("", "get_weather")], &[("", "get_time")]);
    tool_result(
        &results(&client, &sent),
        "tool result for get_time answers no call",
    );
}

#[test]
fn a_dropped_result_is_breaking() {
    let client = conversation(&[("call_1", "get_weather")], &[("call_1", "get_weather")]);
    let sent = conversation(&[("call_1", "get_weather")], &[]);
    tool_result(&results(&client, &sent), "tool results dropped");
}

#[test]
fn a_changed_result_text_is_breaking_and_a_wrapped_one_is_not() {
    let client = conversation(&[("call_1", "get_weather")], &[("call_1", "get_weather")]);
    let with_text = |text: &str| RequestView {
        result_texts: vec![text.into()],
        ..client.clone()
    };
    tool_result(
        &results(&client, &with_text("rainy")),
        "tool result text for get_weather changed: \"sunny\" → \"rainy\"",
    );
    // Surrounding space, and an object wrapping the text (Gemini's `response`), keep it.
    silent(&results(&client, &with_text("  sunny\n")));
    silent(&results(&client, &with_text(r#"{"result": "sunny"}"#)));
    // The same JSON spelled otherwise, and JSON wrapped in an object, keep it too.
    let json_client = RequestView {
        result_texts: vec![r#"{"t": 1}"#.into()],
        ..client.clone()
    };
    silent(&results(&json_client, &with_text(r#"{ "t":1 }"#)));
    silent(&results(
        &json_client,
        &with_text(r#"{"content": {"t": 1}}"#),
    ));
    // Text blocks in a JSON response (Gemini's), one a line, beside a named part.
    let blocks =
        r#"{"output": [{"type": "text", "text": "sunny", "id": "lc_1"}, {"$ref": "a-1"}]}"#;
    silent(&results(&client, &with_text(blocks)));
    tool_result(
        &results(
            &client,
            &with_text(r#"{"output": [{"type": "image", "text": "sunny"}]}"#),
        ),
        "tool result text for get_weather changed",
    );
}

#[test]
fn a_result_linked_by_name_under_another_id_has_its_text_compared() {
    // Gemini's decoder makes ids of its own: the client's result id is not the sent one's.
    let client = conversation(&[("call_1", "get_weather")], &[("call_1", "get_weather")]);
    let sent = RequestView {
        result_texts: vec!["rainy".into()],
        ..conversation(
            &[("gemini-call-0", "get_weather")],
            &[("gemini-call-0", "get_weather")],
        )
    };
    tool_result(
        &results(&client, &sent),
        "tool result text for get_weather changed: \"sunny\" → \"rainy\"",
    );
}

#[test]
fn a_result_finding_keeps_its_kind_through_the_upstream_check() {
    let client = conversation(&[("call_1", "get_weather")], &[("call_1", "get_weather")]);
    let sent = conversation(&[("call_1", "get_weather")], &[("call_2", "get_weather")]);
    tool_result(&check(&client, &sent), "tool result call_2");
}

// ---------------------------------------------------------------- the text protocol's injected prose

fn body(system: &str, messages: usize) -> Value {
    let mut all = vec![json!({"role": "system", "content": system})];
    all.extend((1..messages).map(|i| json!({"role": "user", "content": format!("m{i}")})));
    json!({"model": "m", "messages": all})
}

#[test]
fn injected_instructions_as_the_encoder_builds_them_are_silent() {
    let ours = body("You may call tools.", 3);
    silent(&injected(&ours, Some(&ours)));
    // Without the encoder's body there is nothing to hold the gateway to.
    silent(&injected(&body("other", 1), None));
}

#[test]
fn other_injected_instructions_are_breaking() {
    one(
        &injected(
            &body("Call tools.", 3),
            Some(&body("You may call tools.", 3)),
        ),
        FindingKind::Injected,
        Side::Upstream,
        Severity::Breaking,
        "injected instructions differ from the ones src/inject/ builds",
    );
}

#[test]
fn another_message_count_is_breaking() {
    one(
        &injected(&body("s", 2), Some(&body("s", 3))),
        FindingKind::Injected,
        Side::Upstream,
        Severity::Breaking,
        "2 messages sent, the text protocol sends 3",
    );
}

#[test]
fn responses_tools_without_strict_for_a_non_strict_caller_are_found() {
    let sent = with_tools(vec![weather()]);
    request(
        &strict_omitted(false, &sent, Provider::OpenaiResponses),
        Severity::Behaviour,
        "get_weather sent to the Responses API without `strict`",
    );
}

#[test]
fn strict_omitted_is_silent_on_an_explicit_switch_another_api_or_a_strict_caller() {
    let explicit = with_tools(vec![Tool {
        strict: Some(false),
        ..weather()
    }]);
    silent(&strict_omitted(false, &explicit, Provider::OpenaiResponses));
    let bare = with_tools(vec![weather()]);
    silent(&strict_omitted(false, &bare, Provider::OpenaiChat));
    silent(&strict_omitted(true, &bare, Provider::OpenaiResponses));
}
