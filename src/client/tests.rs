//! The driver protocol's documents: a trial reads back as the request it was made of; every
//! tool choice survives its protocol spelling; libraries' finish spellings read as one. And
//! which thinking trials a route's OpenAI model cannot run.

use std::collections::BTreeMap;

use serde_json::json;

use super::protocol::{DriverResult, DriverTrial, Next, choice_of, choice_value};
use crate::engine::finish_of;
use crate::model::{ChatRequest, Finish, Message, Provider, StrictPolicy, Tool, ToolChoice};
use crate::providers::testkit::{every_choice, weather_call, weather_result};

fn request() -> ChatRequest {
    let system = Message::System {
        content: "be brief".into(),
    };
    let called = Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![weather_call("call_1", json!({"city": "Oslo"}))],
        opaque: Vec::new(),
    };
    let mut req = ChatRequest::new("m")
        .with_stream(true)
        .with_messages([system])
        .with_user("weather?")
        .with_messages([called, weather_result("call_1", "12C", false)])
        .with_tool(Tool {
            allowed_callers: Vec::new(),
            output_schema: None,
            name: "get_weather".into(),
            description: Some("Weather".into()),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            strict: None,
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
        })
        .with_choice(ToolChoice::Required)
        .with_strict(StrictPolicy::Require);
    req.parallel_tool_calls = Some(false);
    req
}

#[test]
fn a_trial_reads_back_as_its_request() {
    let req = request();
    let trial = DriverTrial::of(
        "t".into(),
        Provider::OpenaiChat,
        "http://127.0.0.1:1".into(),
        BTreeMap::new(),
        &req,
    );
    assert_eq!(trial.api, "openai-chat");
    assert!(trial.strict);
    // Strict on OpenAI: the strict dialect travels beside the schema as written.
    let strict = trial.tools[0].strict_parameters.as_ref().unwrap();
    assert_eq!(strict["additionalProperties"], json!(false));
    let back = trial.request();
    assert_eq!(back.messages, req.messages);
    assert_eq!(back.tools[0].parameters, req.tools[0].parameters);
    assert_eq!(back.tool_choice, req.tool_choice);
    assert_eq!(back.parallel_tool_calls, Some(false));
    // Through JSON, as a driver reads it.
    let line = serde_json::to_string(&trial).unwrap();
    let read: DriverTrial = serde_json::from_str(&line).unwrap();
    assert_eq!(read, trial);
}

#[test]
fn the_eager_switch_is_asked_on_anthropic_only() {
    let mut req = request();
    req.tools[0].eager_input_streaming = true;
    let of = |api| DriverTrial::of("t".into(), api, "http://x".into(), BTreeMap::new(), &req);
    let anthropic = of(Provider::Anthropic);
    assert!(anthropic.tools[0].eager_input_streaming);
    assert!(anthropic.request().tools[0].eager_input_streaming);
    let line = serde_json::to_value(&anthropic).unwrap();
    assert_eq!(line["tools"][0]["eager_input_streaming"], json!(true));
    // The other APIs have no such switch: the field is left out, as for a tool not eager.
    let chat = serde_json::to_value(of(Provider::OpenaiChat)).unwrap();
    assert!(chat["tools"][0].get("eager_input_streaming").is_none());
}

#[test]
fn every_choice_survives_its_spelling() {
    for c in every_choice() {
        assert_eq!(choice_of(&choice_value(&c)), Some(c));
    }
    assert_eq!(choice_of(&json!("sometimes")), None);
}

#[test]
fn finish_spellings_of_the_libraries() {
    for (raw, f) in [
        ("tool_calls", Finish::ToolCalls),
        ("tool-calls", Finish::ToolCalls),
        ("tool_use", Finish::ToolCalls),
        ("TOOL_CALL", Finish::ToolCalls),
        ("end_turn", Finish::Stop),
        ("STOP", Finish::Stop),
        ("completed", Finish::Stop),
        ("max_tokens", Finish::Length),
        ("MAX_TOKENS", Finish::Length),
        ("content-filter", Finish::ContentFilter),
        ("unknown", Finish::Other),
    ] {
        assert_eq!(finish_of(raw), f, "{raw}");
    }
}

#[test]
fn the_next_documents_are_told_apart() {
    let done: Next = serde_json::from_str(r#"{"done": true}"#).unwrap();
    assert_eq!(done, Next::Done { done: true });
    let results: Next = serde_json::from_str(
        r#"{"results": [{"role": "tool", "call_id": "c", "content": "x"}], "tool_choice": "auto"}"#,
    )
    .unwrap();
    assert!(matches!(
        results,
        Next::Results {
            tool_choice: Some(_),
            tools: None,
            ..
        }
    ));
    // A round that changes the tools in force carries them.
    let changed: Next = serde_json::from_str(
        r#"{"results": [], "tools": [{"name": "get_time", "parameters": {"type": "object"}}]}"#,
    )
    .unwrap();
    let Next::Results {
        tools: Some(tools), ..
    } = changed
    else {
        panic!("{changed:?}");
    };
    assert_eq!(tools[0].neutral().name, "get_time");
    // A result with only an error reads; unknown fields a driver adds are ignored.
    let r: DriverResult =
        serde_json::from_str(r#"{"error": {"type": "X", "message": "m"}, "extra": 1}"#).unwrap();
    assert_eq!(r.error.unwrap().kind, "X");
}

#[test]
fn a_thinking_trial_on_an_openai_model_that_does_not_reason_is_not_applicable() {
    use super::way::thinking_without_reasoning as check;
    use crate::engine::Cell;
    let chat = [(Provider::OpenaiChat, "gpt-4.1-mini")];
    let Some(Cell::NotApplicable(why)) = check(Some(1024), &chat) else {
        panic!("gpt-4.1-mini does not reason");
    };
    assert!(
        why.contains("openai-chat route's model `gpt-4.1-mini`"),
        "{why}"
    );
    assert!(check(None, &chat).is_none(), "thinking off: any model");
    // Reasoning models, other APIs (whatever their model's name) and a round moved to a route
    // whose model does not reason.
    let reasoning = [
        (Provider::OpenaiResponses, "gpt-5-mini"),
        (Provider::OpenaiChat, "o4-mini"),
    ];
    assert!(check(Some(1024), &reasoning).is_none());
    assert!(check(Some(1024), &[(Provider::Anthropic, "gpt-4.1-mini")]).is_none());
    let moved = [
        (Provider::Anthropic, "claude-haiku-4-5"),
        (Provider::OpenaiResponses, "gpt-4o"),
    ];
    assert!(check(Some(1024), &moved).is_some());
}

#[test]
fn an_unsupported_entry_names_the_option_a_trial_can_run_without() {
    use crate::case::CaseOption;
    let named = super::way::option_named;
    assert_eq!(named("parallel_tool_calls"), Some(CaseOption::Parallel));
    assert_eq!(named("max_tokens"), Some(CaseOption::MaxTokens));
    // A library's own refusal, quoting the field (any-llm, LiteLLM).
    let any_llm = "[gemini] 'parallel_tool_calls' is not supported for gemini";
    assert_eq!(named(any_llm), Some(CaseOption::Parallel));
    // A field no trial can run without, two fields, a word that only contains one, nothing.
    assert_eq!(named("thinking"), None);
    assert_eq!(named("tool_choice allowed"), None);
    assert_eq!(named("['parallel_tool_calls', 'thinking']"), None);
    assert_eq!(named("my_parallel_tool_calls_flag"), None);
    assert_eq!(named("tool without description (StructuredTool)"), None);
}
