//! Unit tests of the simulated text protocol: manifest and choice parsing, well-formed
//! `<tool_call>` answers buffered and streamed, and every malformed form.

use serde_json::{Value, json};

use super::support::{P, assert_status, request, sse_data, time_schema, weather_schema};
use crate::model::{AllowedMode, ToolChoice};
use crate::scenario::{Malformed, Scenario, ScenarioCall};
use crate::simulate::text_protocol::parse_choice;
use crate::simulate::{SimBody, SimResponse, answer};

fn instructions(choice_line: &str) -> String {
    format!(
        "Tool calling instructions:\nTo call a tool, write <tool_call>{{\"name\":...,\"arguments\":\"<JSON string>\"}}</tool_call>.\n\
         Available tools (schema):\n- get_weather: {}\n- get_time: {}\n{choice_line}\n",
        weather_schema(),
        time_schema()
    )
}

fn text_body(choice_line: &str, stream: bool) -> Value {
    json!({"model": "gpt-4.1", "stream": stream, "messages": [
        {"role": "system", "content": instructions(choice_line)},
        {"role": "user", "content": "Weather in Paris?"}]})
}

fn content(resp: &SimResponse, stream: bool) -> (String, String) {
    assert_status(resp, 200, "");
    if !stream {
        let v = resp.json();
        assert!(
            v["choices"][0]["message"]["tool_calls"].is_null(),
            "text protocol: no native calls"
        );
        let c = &v["choices"][0];
        return (
            c["message"]["content"].as_str().unwrap_or("").into(),
            c["finish_reason"].as_str().unwrap_or("").into(),
        );
    }
    let mut text = String::new();
    let mut finish = String::new();
    for e in sse_data(&resp.body.bytes()) {
        text.push_str(
            e.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        if let Some(f) = e
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
        {
            finish = f.into();
        }
    }
    (text, finish)
}

fn run(choice_line: &str, stream: bool, scenario: &Scenario) -> (String, String) {
    let resp = answer(
        &request(P::Chat, &text_body(choice_line, stream), stream),
        scenario,
    );
    content(&resp, stream)
}

const WEATHER: &str = r#"<tool_call>{"name":"get_weather","arguments":"{\"location\":\"example\",\"unit\":\"C\"}"}</tool_call>"#;

#[test]
fn well_formed_calls_buffered_and_streamed_in_small_pieces() {
    for stream in [false, true] {
        assert_eq!(
            run("Tool choice is auto.", stream, &Scenario::default()),
            (WEATHER.to_string(), "stop".to_string())
        );
    }
    let resp = answer(
        &request(P::Chat, &text_body("Tool choice is auto.", true), true),
        &Scenario::default(),
    );
    let SimBody::Chunks(_) = &resp.body else {
        panic!("stream")
    };
    let pieces: Vec<String> = sse_data(&resp.body.bytes())
        .iter()
        .filter_map(|e| {
            e.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .filter(|s| !s.is_empty())
        .collect();
    assert!(
        pieces.iter().all(|p| (1..=9).contains(&p.len())),
        "{pieces:?}"
    );
    assert!(
        pieces
            .iter()
            .any(|p| p.contains('<') && !p.contains("<tool_call>")),
        "tags split: {pieces:?}"
    );
}

#[test]
fn the_choice_line_is_honoured() {
    assert_eq!(
        run("Tool choice is none.", false, &Scenario::default()).0,
        "I can answer that directly without calling a tool."
    );
    let forced = run(
        "Tool choice is forced: get_time.",
        false,
        &Scenario::default(),
    )
    .0;
    assert_eq!(
        forced,
        r#"<tool_call>{"name":"get_time","arguments":"{\"zone\":\"UTC\"}"}</tool_call>"#
    );
    let prefer = Scenario {
        prefer_text: true,
        text: Some("Sure.".into()),
        ..Scenario::default()
    };
    assert_eq!(run("Tool choice is auto.", false, &prefer).0, "Sure.");
    assert!(
        run("Tool choice is required.", false, &prefer)
            .0
            .starts_with("Sure.\n<tool_call>")
    );
}

#[test]
fn choice_lines_parse_tolerantly() {
    let names = vec![
        "say_hello".to_string(),
        "say_hello_world".to_string(),
        "b".to_string(),
    ];
    let cases = [
        (" auto.", ToolChoice::Auto),
        (" none.", ToolChoice::None),
        (" required: call at least one tool.", ToolChoice::Required),
        (
            " forced: say_hello_world.",
            ToolChoice::Forced("say_hello_world".into()),
        ),
        (
            " `say_hello` (you must call it).",
            ToolChoice::Forced("say_hello".into()),
        ),
        (
            " allowed (required): say_hello, b.",
            ToolChoice::Allowed {
                mode: AllowedMode::Required,
                tools: vec!["say_hello".into(), "b".into()],
            },
        ),
        (
            " allowed (auto): b.",
            ToolChoice::Allowed {
                mode: AllowedMode::Auto,
                tools: vec!["b".into()],
            },
        ),
    ];
    for (line, want) in cases {
        assert_eq!(parse_choice(line, &names), want, "{line}");
    }
}

/// The allowed-subset lines tooltape's own instructions write (`inject::choice_line`) read as
/// the subsets they state: one name or several, must-call or not.
#[test]
fn tooltapes_allowed_subset_lines_read_as_allowed() {
    use crate::inject::request::Choice;
    let names = vec![
        "get_weather".to_string(),
        "get_time".into(),
        "store_record".into(),
    ];
    for required in [true, false] {
        for tools in [vec!["get_time"], vec!["get_time", "store_record"]] {
            let tools: Vec<String> = tools.into_iter().map(String::from).collect();
            let choice = Choice::Allowed {
                required,
                tools: tools.clone(),
            };
            let line = crate::inject::choice_line(&choice).unwrap_or_default();
            let rest = line.strip_prefix("Tool choice is").unwrap_or(&line);
            let mode = if required {
                AllowedMode::Required
            } else {
                AllowedMode::Auto
            };
            assert_eq!(
                parse_choice(rest, &names),
                ToolChoice::Allowed { mode, tools },
                "{line}"
            );
        }
    }
}

fn two() -> Scenario {
    let call = |name: &str, args: Value| ScenarioCall {
        name: name.into(),
        arguments: args.as_object().cloned().unwrap_or_default(),
        raw_arguments: None,
        id: None,
    };
    Scenario {
        calls: vec![
            call("get_time", json!({"zone": "CET"})),
            call("get_weather", json!({"location": "Oslo"})),
        ],
        ..Scenario::default()
    }
}

const T: &str = r#"{"name":"get_time","arguments":"{\"zone\":\"CET\"}"}"#;
const W: &str = r#"{"name":"get_weather","arguments":"{\"location\":\"Oslo\"}"}"#;

#[test]
fn every_malformed_form_is_written_as_specified() {
    let cut = |s: &str| s[..s.len() / 2].to_string();
    let cases: Vec<(Malformed, String)> = vec![
        (
            Malformed::ArrayWrapped,
            format!("<tool_call>[{T},{W}]</tool_call>"),
        ),
        (
            Malformed::CodeFence,
            format!(
                "<tool_call>\n```json\n{T}\n```\n</tool_call>\n<tool_call>\n```json\n{W}\n```\n</tool_call>"
            ),
        ),
        (
            Malformed::TrailingGt,
            format!("<tool_call>{T}</tool_call>>\n<tool_call>{W}</tool_call>>"),
        ),
        (
            Malformed::RepeatedCloseTag,
            format!(
                "<tool_call>{T}</tool_call></tool_call>\n<tool_call>{W}</tool_call></tool_call>"
            ),
        ),
        (
            Malformed::ExtraBrace,
            format!("<tool_call>{T}}}</tool_call>\n<tool_call>{W}}}</tool_call>"),
        ),
        (
            Malformed::MissingBrace,
            format!(
                "<tool_call>{}</tool_call>\n<tool_call>{}</tool_call>",
                &T[..T.len() - 1],
                &W[..W.len() - 1]
            ),
        ),
        (
            Malformed::MissingCloseTag,
            format!("<tool_call>{T}</tool_call>\n<tool_call>{W}"),
        ),
        (
            Malformed::ArgumentsObject,
            r#"<tool_call>{"name":"get_time","arguments":{"zone":"CET"}}</tool_call>"#.to_string()
                + "\n"
                + r#"<tool_call>{"name":"get_weather","arguments":{"location":"Oslo"}}</tool_call>"#,
        ),
        (
            Malformed::UnknownTool,
            r#"<tool_call>{"name":"get_tim","arguments":"{\"zone\":\"CET\"}"}</tool_call>"#
                .to_string()
                + "\n"
                + r#"<tool_call>{"name":"get_weathe","arguments":"{\"location\":\"Oslo\"}"}</tool_call>"#,
        ),
        (
            Malformed::InvalidJson,
            r#"<tool_call>{name: "get_time", arguments: "{\"zone\":\"CET\"}"}</tool_call>"#
                .to_string()
                + "\n"
                + r#"<tool_call>{name: "get_weather", arguments: "{\"location\":\"Oslo\"}"}</tool_call>"#,
        ),
        (
            Malformed::Truncated,
            format!("<tool_call>{T}</tool_call>\n<tool_call>{}", cut(W)),
        ),
    ];
    for (form, want) in cases {
        let scenario = Scenario {
            malformed: Some(form),
            ..two()
        };
        for stream in [false, true] {
            let (text, finish) = run("Tool choice is auto.", stream, &scenario);
            assert_eq!(text, want, "{form:?} stream={stream}");
            let want_finish = if form == Malformed::Truncated {
                "length"
            } else {
                "stop"
            };
            assert_eq!(finish, want_finish, "{form:?}");
        }
    }
}

#[test]
fn near_misses_are_never_real_tool_names() {
    let mut ask = crate::simulate::decide::Ask::new("m");
    for n in ["abcd", "abc", "abcds"] {
        ask.tools.push(crate::simulate::decide::FnTool {
            name: n.into(),
            schema: json!({}),
            strict: false,
        });
    }
    let miss = crate::simulate::text_protocol::near_miss("abcd", &ask);
    assert!(!ask.has_tool(&miss) && miss.starts_with("abc"), "{miss}");
}

#[test]
fn tool_results_get_a_text_answer() {
    let mut b = text_body("Tool choice is auto.", false);
    if let Some(m) = b["messages"].as_array_mut() {
        m.push(json!({"role": "assistant", "content": WEATHER}));
        m.push(json!({"role": "user", "content": "<tool_result name=\"get_weather\">{\"temp_c\":18}</tool_result>"}));
    }
    let (text, finish) = content(
        &answer(&request(P::Chat, &b, false), &Scenario::default()),
        false,
    );
    assert!(
        text.contains("temp_c") && !text.contains("<tool_call>"),
        "{text}"
    );
    assert_eq!(finish, "stop");
}

#[test]
fn native_tools_win_over_instructions() {
    let mut b = text_body("Tool choice is auto.", false);
    b["tools"] = json!([{"type": "function", "function": {"name": "get_time", "parameters": time_schema()}}]);
    let v = answer(&request(P::Chat, &b, false), &Scenario::default()).json();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "get_time"
    );
}

#[test]
fn tools_on_the_strict_line_get_every_required_key_as_constrained_decoding_would() {
    // The strict-rewritten schema (optional `unit` made required and nullable), as a Responses
    // client sends it and the text protocol's injected block lists it.
    let strict = r#"{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":["string","null"]}},"required":["city","unit"],"additionalProperties":false}"#;
    let body = |strict_line: &str| {
        json!({"model": "gpt-4.1", "messages": [
            {"role": "system", "content": format!(
                "Tool calling instructions:\nTo call a tool, write <tool_call>{{\"name\":...,\"arguments\":\"<JSON string>\"}}</tool_call>.\n\
                 Available tools (schema):\n- get_weather: {strict}\nTool choice is auto.\n{strict_line}\n")},
            {"role": "user", "content": "Weather in Oslo?"}]})
    };
    let scenario = Scenario {
        calls: vec![ScenarioCall {
            name: "get_weather".into(),
            arguments: json!({"city": "Oslo"}).as_object().cloned().unwrap(),
            raw_arguments: None,
            id: None,
        }],
        ..Scenario::default()
    };
    let text = |line: &str| {
        let resp = answer(&request(P::Chat, &body(line), false), &scenario);
        content(&resp, false).0
    };
    assert_eq!(
        text("Strict tools: get_weather. Arguments MUST conform exactly to schema."),
        r#"<tool_call>{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"unit\":null}"}</tool_call>"#
    );
    assert_eq!(
        text(""),
        r#"<tool_call>{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}</tool_call>"#
    );
}
