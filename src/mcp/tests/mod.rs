//! Unit tests of the MCP verdicts on handwritten schemas, one per shape real MCP servers send
//! (issue 31): `default`, optional properties, open objects, `oneOf`, `format: uri`,
//! `propertyNames`, `$schema`, `$defs`/`$ref`, `const`, type arrays with null, bare `{}`, long
//! descriptions and long names; plus the report's forms and `--require`'s targets.

use rstest::rstest;
use serde_json::{Value, json};

use super::{ListedTool, Listing, Report, ServerInfo, Target, ToolVerdict, judge, judge_all};
use crate::model::Tool;

fn tool(parameters: Value) -> Tool {
    Tool {
        allowed_callers: Vec::new(),
        output_schema: None,
        name: "t".into(),
        description: Some("A tool.".into()),
        parameters,
        strict: None,
        eager_input_streaming: false,
        defer_loading: false,
        namespace: None,
    }
}

/// `target=word` for every target, space-separated, in [`Target::ALL`] order.
fn words(t: &Tool) -> String {
    judge_all(t)
        .iter()
        .map(|(target, v)| format!("{}={}", target.slug(), v.word()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn object(props: &Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn reason(t: &Tool, target: Target) -> String {
    match judge(t, target) {
        ToolVerdict::Refused { reason } => reason,
        other => panic!("{} not refused: {other:?}", target.slug()),
    }
}

/// Every target sends `t` as written or after a lossless rewrite.
fn assert_sent_without_loss(t: &Tool) {
    for (target, v) in judge_all(t) {
        assert!(
            matches!(v, ToolVerdict::AsWritten | ToolVerdict::Lossless { .. }),
            "{}: {v:?}",
            target.slug()
        );
    }
}

fn lost(t: &Tool, target: Target) -> Vec<String> {
    match judge(t, target) {
        ToolVerdict::Lossy { lost, .. } => lost,
        other => panic!("{} not lossy: {other:?}", target.slug()),
    }
}

#[test]
fn a_closed_object_with_every_property_required_is_sent_as_written_where_it_can() {
    let mut closed = object(&json!({"q": {"type": "string"}}), &["q"]);
    closed["additionalProperties"] = json!(false);
    let t = tool(closed);
    assert_eq!(
        words(&t),
        "openai-chat=as-written openai-chat-strict=as-written openai-responses=as-written \
         openai-responses-strict=as-written anthropic=as-written anthropic-strict=as-written \
         gemini=lossless text-protocol=as-written"
    );
    // Gemini's `parameters` dialect has no additionalProperties: dropping `false` keeps the
    // meaning (a property outside the list cannot be produced by the declaration anyway).
    assert!(matches!(
        judge(&t, Target::Gemini),
        ToolVerdict::Lossless { .. }
    ));
}

#[test]
fn optional_properties_become_required_and_nullable_for_openai_strict_only() {
    let t = tool(object(
        &json!({"q": {"type": "string"}, "n": {"type": "integer"}}),
        &["q"],
    ));
    let ToolVerdict::Lossless { changes } = judge(&t, Target::OpenaiResponsesStrict) else {
        panic!("{:?}", judge(&t, Target::OpenaiResponsesStrict));
    };
    assert!(
        changes.iter().any(|c| c.contains("type list")),
        "{changes:?}"
    );
    assert_eq!(judge(&t, Target::OpenaiResponses), ToolVerdict::AsWritten);
    assert_eq!(judge(&t, Target::Anthropic), ToolVerdict::AsWritten);
}

#[test]
fn a_default_is_a_reported_loss_for_openai_strict_and_kept_by_anthropic_and_gemini() {
    let t = tool(object(
        &json!({"q": {"type": "string", "default": "x"}}),
        &["q"],
    ));
    // Strict mode refuses `default`: the transform drops it (into the description), and says so.
    for target in [Target::OpenaiChatStrict, Target::OpenaiResponsesStrict] {
        let l = lost(&t, target);
        assert!(l[0].starts_with("default"), "{l:?}");
    }
    for target in [Target::AnthropicStrict, Target::Gemini] {
        assert_ne!(judge(&t, target).word(), "lossy", "{}", target.slug());
        assert_ne!(judge(&t, target).word(), "refused", "{}", target.slug());
    }
}

/// A property a strict target cannot express: refused there with the reason's word, sent as
/// written where nothing is strict.
#[rstest]
#[case::an_open_map(
    json!({"type": "object", "additionalProperties": {"type": "string"}}),
    &[
        (Target::OpenaiChatStrict, "STRICT_SCHEMA"),
        (Target::OpenaiResponsesStrict, "STRICT_SCHEMA"),
        (Target::AnthropicStrict, "additionalProperties"),
    ],
    Target::OpenaiChat
)]
#[case::an_overlapping_one_of(
    json!({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 2}]}),
    &[(Target::OpenaiResponsesStrict, "oneOf")],
    Target::OpenaiResponses
)]
#[case::property_names(
    json!({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}),
    &[(Target::OpenaiResponsesStrict, "propertyNames")],
    Target::OpenaiResponses
)]
fn a_property_strict_cannot_express_is_refused_there(
    #[case] property: Value,
    #[case] refused: &[(Target, &str)],
    #[case] as_written: Target,
) {
    let t = tool(object(&json!({"p": property}), &["p"]));
    for (target, word) in refused {
        let why = reason(&t, *target);
        assert!(why.contains(word), "{}: {why}", target.slug());
    }
    assert_eq!(judge(&t, as_written), ToolVerdict::AsWritten);
}

#[test]
fn an_open_map_is_kept_by_gemini_as_json_schema() {
    let t = tool(object(
        &json!({"tags": {"type": "object", "additionalProperties": {"type": "string"}}}),
        &["tags"],
    ));
    let ToolVerdict::Lossless { changes } = judge(&t, Target::Gemini) else {
        panic!("{:?}", judge(&t, Target::Gemini));
    };
    assert_eq!(changes, ["sent as parametersJsonSchema"]);
}

#[test]
fn a_disjoint_one_of_becomes_any_of_without_loss() {
    let t = tool(object(
        &json!({"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}),
        &["v"],
    ));
    assert_eq!(judge(&t, Target::OpenaiResponsesStrict).word(), "lossless");
}

#[test]
fn format_uri_is_a_reported_loss_for_openai_strict_and_gemini_kept_by_anthropic() {
    let t = tool(object(
        &json!({"url": {"type": "string", "format": "uri"}}),
        &["url"],
    ));
    assert_ne!(judge(&t, Target::AnthropicStrict).word(), "refused");
    for target in [Target::OpenaiChatStrict, Target::Gemini] {
        let l = lost(&t, target);
        assert!(
            l[0].starts_with("format") && l[0].contains("/properties/url"),
            "{l:?}"
        );
    }
}

#[test]
fn dollar_schema_is_dropped_for_gemini_without_loss() {
    let t = tool(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"]
    }));
    let ToolVerdict::Lossless { changes } = judge(&t, Target::Gemini) else {
        panic!("{:?}", judge(&t, Target::Gemini));
    };
    assert!(changes.iter().any(|c| c.contains("$schema")), "{changes:?}");
    assert_eq!(judge(&t, Target::OpenaiChat), ToolVerdict::AsWritten);
}

#[test]
fn defs_and_refs_are_sent_to_every_target() {
    let t = tool(json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/point"}},
        "required": ["p"],
        "$defs": {"point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"]
        }}
    }));
    assert_sent_without_loss(&t);
}

#[test]
fn const_is_sent_to_every_target_without_loss() {
    let t = tool(object(
        &json!({"kind": {"type": "string", "const": "a"}}),
        &["kind"],
    ));
    assert_sent_without_loss(&t);
}

#[test]
fn a_type_array_with_null_is_nullable_for_gemini() {
    let t = tool(object(&json!({"q": {"type": ["string", "null"]}}), &["q"]));
    assert_eq!(judge(&t, Target::Gemini).word(), "lossless");
    assert_eq!(judge(&t, Target::OpenaiResponsesStrict).word(), "lossless");
}

#[test]
fn a_bare_empty_schema_is_a_tool_without_arguments() {
    let t = tool(json!({}));
    assert_eq!(judge(&t, Target::OpenaiChat), ToolVerdict::AsWritten);
    assert_eq!(judge(&t, Target::OpenaiChatStrict).word(), "lossless");
    let ToolVerdict::Lossless { changes } = judge(&t, Target::Gemini) else {
        panic!("{:?}", judge(&t, Target::Gemini));
    };
    assert_eq!(
        changes,
        ["parameters omitted (the tool takes no arguments)"]
    );
}

#[test]
fn a_description_over_1024_characters_is_refused_by_openai_only() {
    let mut t = tool(object(&json!({"q": {"type": "string"}}), &["q"]));
    t.description = Some("é".repeat(1025));
    let r = reason(&t, Target::OpenaiChat);
    assert_eq!(
        r,
        "Invalid 'tools[0].function.description': string too long. Expected a string with \
         maximum length 1024, but got a string with length 1025 instead."
    );
    assert!(reason(&t, Target::OpenaiResponsesStrict).contains("'tools[0].description'"));
    assert_eq!(judge(&t, Target::Anthropic), ToolVerdict::AsWritten);
    t.description = Some("é".repeat(1024));
    assert_eq!(judge(&t, Target::OpenaiChat), ToolVerdict::AsWritten);
}

#[test]
fn a_name_over_64_characters_is_refused_by_openai_and_anthropic_not_gemini() {
    let mut t = tool(object(&json!({"q": {"type": "string"}}), &["q"]));
    t.name = "n".repeat(65);
    for target in [
        Target::OpenaiChat,
        Target::OpenaiResponses,
        Target::Anthropic,
    ] {
        assert!(
            reason(&t, target).starts_with("TOOL_NAME"),
            "{}",
            target.slug()
        );
    }
    assert_ne!(judge(&t, Target::Gemini).word(), "refused");
    t.name = "n".repeat(64);
    assert_eq!(judge(&t, Target::OpenaiChat), ToolVerdict::AsWritten);
}

#[test]
fn a_root_that_is_not_an_object_is_refused_everywhere_but_the_text_protocol() {
    let t = tool(json!({"type": "string"}));
    for (target, v) in judge_all(&t) {
        let refused = matches!(v, ToolVerdict::Refused { .. });
        assert_eq!(
            refused,
            target != Target::TextProtocol,
            "{}: {v:?}",
            target.slug()
        );
    }
}

#[test]
fn targets_are_named_by_their_slugs() {
    for t in Target::ALL {
        assert_eq!(Target::from_slug(t.slug()), Some(t));
    }
    assert_eq!(Target::from_slug("anthropic"), Some(Target::Anthropic));
    assert_eq!(Target::from_slug("bedrock"), None);
}

fn listing(tools: Vec<Tool>) -> Listing {
    Listing {
        server: ServerInfo {
            name: "s".into(),
            version: "1".into(),
        },
        tools: tools
            .into_iter()
            .map(|tool| ListedTool {
                tool,
                oversized_schema: None,
            })
            .collect(),
        truncated: None,
    }
}

#[test]
fn the_report_counts_verdicts_and_lists_refusals_for_required_targets() {
    let ok = tool(object(&json!({"q": {"type": "string"}}), &["q"]));
    let mut uri = tool(object(
        &json!({"u": {"type": "string", "format": "uri", "examples": ["x"]}, "o": {"type": "object"}}),
        &["u"],
    ));
    uri.name = "u".into();
    let report = Report::of(&listing(vec![ok, uri]));
    let refusals = report.refusals_for(&[Target::OpenaiResponsesStrict]);
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].0, "u");
    let doc: Value = serde_json::from_str(&super::json(&report)).unwrap();
    assert_eq!(doc["summary"]["openai-responses-strict"]["refused"], 1);
    // An object without properties: Gemini gets the whole schema as `parametersJsonSchema`.
    assert_eq!(doc["tools"][1]["verdicts"]["gemini"]["verdict"], "lossless");
    let md = super::markdown(&report);
    assert!(md.contains("| `u` |"), "{md}");
    let xml = super::junit(&report, "2026-01-01T00:00:00");
    assert!(xml.contains(r#"tests="16" failures="3""#), "{xml}");
    assert!(super::terminal(&report).contains("u → openai-chat-strict: refused:"));
}

#[test]
fn an_oversized_schema_is_refused_everywhere_without_being_judged() {
    let mut l = listing(vec![tool(json!({}))]);
    l.tools[0].oversized_schema = Some(5_000_000);
    let report = Report::of(&l);
    assert_eq!(report.refusals_for(&Target::ALL).len(), Target::ALL.len());
}

#[test]
fn a_nested_object_without_properties_never_goes_to_gemini_parameters_as_is() {
    // Gemini's `parameters` answers 400 "should be non-empty for OBJECT type".
    let t = tool(object(&json!({"meta": {"type": "object"}}), &["meta"]));
    let v = judge(&t, Target::Gemini);
    assert!(
        matches!(&v, ToolVerdict::Lossless { changes } if changes.iter().any(|c| c == "sent as parametersJsonSchema"))
            || matches!(v, ToolVerdict::Refused { .. }),
        "{v:?}"
    );
}

#[test]
fn generated_arguments_validate_against_the_schemas_real_servers_send() {
    let schemas = [
        object(&json!({"q": {"type": "string", "minLength": 12}}), &["q"]),
        object(
            &json!({"when": {"type": "string", "format": "date-time"},
                   "who": {"type": "string", "format": "email"},
                   "url": {"type": "string", "format": "uri"}}),
            &["when", "who", "url"],
        ),
        object(
            &json!({"n": {"type": "integer", "minimum": 5, "maximum": 9},
                   "x": {"type": "number", "exclusiveMinimum": 0}}),
            &["n", "x"],
        ),
        object(
            &json!({"kind": {"enum": ["a", "b"]}, "c": {"const": 3}, "d": {"type": "boolean", "default": false}}),
            &["kind", "c", "d"],
        ),
        object(
            &json!({"tags": {"type": "array", "minItems": 2, "items": {"type": "string"}}}),
            &["tags"],
        ),
        json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/point"}, "v": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "required": ["p", "v"],
            "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        }),
        object(&json!({"opt": {"type": ["string", "null"]}}), &["opt"]),
        json!({}),
    ];
    for s in schemas {
        let args = crate::simulate::generate_arguments(&s);
        assert!(super::valid_against(&s, &args), "{args} against {s}");
    }
}

#[test]
fn case_files_are_a_tool_and_a_case_that_load_with_every_choice() {
    let mut a = tool(object(
        &json!({"q": {"type": "string"}, "n": {"type": ["integer", "null"]}}),
        &["q", "n"],
    ));
    a.name = "search-docs".into();
    let mut nothing = tool(object(&json!({"z": {"type": "null"}}), &["z"]));
    nothing.name = "nothing".into();
    let mut bad = tool(json!({}));
    bad.name = "files/read".into();
    let (files, skipped) = super::case_files(&listing(vec![a, nothing, bad]));
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].starts_with("files/read:"));
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "tools/search-docs.json",
            "mcp_search_docs.toml",
            "tools/nothing.json",
            "mcp_nothing.toml"
        ]
    );
    assert!(
        files[1]
            .text
            .contains(r#"arguments = { "q" = "example", "n" = 1 }"#),
        "{}",
        files[1].text
    );
    // TOML has no null: such arguments are written as their JSON text.
    assert!(
        files[3].text.contains(r#"raw_arguments = "{\"z\":null}""#),
        "{}",
        files[3].text
    );
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tools")).unwrap();
    for f in &files {
        std::fs::write(dir.path().join(&f.path), &f.text).unwrap();
    }
    let found = crate::case::discover_with(root.path(), Some(dir.path()));
    assert!(
        found
            .broken
            .iter()
            .all(|(name, _)| !name.starts_with("mcp_")),
        "{:?}",
        found.broken
    );
    let trials = found
        .trials
        .iter()
        .filter(|t| t.case.name == "mcp_search_docs")
        .count();
    // 5 providers × 4 choices (auto, required, none, forced) × 2 modes.
    assert_eq!(trials, 40);
}

#[test]
fn control_characters_a_server_sends_never_reach_the_terminal() {
    let mut t = tool(json!({"type": "string"}));
    t.name = "evil\u{1b}[2J\nname".into();
    let mut l = listing(vec![t]);
    l.server.name = "srv\u{1b}]0;title\u{7}".into();
    let report = Report::of(&l);
    for text in [super::terminal(&report), super::markdown(&report)] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains("evil\\u{1b}[2J\\u{0a}name"), "{text}");
    }
}

#[test]
fn every_annotation_the_strict_transform_drops_makes_the_verdict_lossy() {
    let t = tool(object(
        &json!({"q": {"type": "string", "deprecated": true, "readOnly": true}}),
        &["q"],
    ));
    let l = lost(&t, Target::OpenaiResponsesStrict);
    assert!(
        l.iter().any(|x| x.starts_with("deprecated"))
            && l.iter().any(|x| x.starts_with("readOnly")),
        "{l:?}"
    );
}

mod serve;
