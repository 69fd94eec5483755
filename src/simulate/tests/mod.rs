//! Unit tests of the simulator's pure core: every API × {buffered, stream} × tool choice,
//! tool results, parallel switch, scenarios, determinism and stream shapes.
//! Children: `eager` (Anthropic's fine-grained tool streaming), `errors` (validation envelopes),
//! `foreign` (reasoning another API made), `search` (hosted web search), `server` (loopback server
//! and faults), `signatures` (Gemini thought signatures per model), `store` (Responses
//! conversations), `text` (text protocol), `tool_changes` (Anthropic's mid-conversation tool
//! changes), `support` (request builders, readers).

mod eager;
mod errors;
mod foreign;
mod items;
mod named;
mod reasoning_models;
mod search;
mod server;
mod signatures;
mod store;
mod support;
mod text;
mod tool_changes;

use serde_json::{Value, json};

use super::{SIMULATOR_HEADER, SimBody, VERSION, answer};
use crate::model::{AllowedMode, ToolChoice};
use crate::scenario::{Scenario, ScenarioCall};
use support::{ALL, Got, Opts, P, ask, body, read, request, sse_data};

fn opts(choice: Option<ToolChoice>, stream: bool) -> Opts {
    Opts {
        choice,
        stream,
        ..Opts::default()
    }
}

fn call_finish(p: P) -> &'static str {
    match p {
        P::Chat => "tool_calls",
        P::Responses => "completed",
        P::Anthropic => "tool_use",
        P::Gemini => "STOP",
    }
}

fn text_finish(p: P) -> &'static str {
    match p {
        P::Chat => "stop",
        P::Responses => "completed",
        P::Anthropic => "end_turn",
        P::Gemini => "STOP",
    }
}

fn weather_args() -> Value {
    json!({"location": "example", "unit": "C"})
}

fn each(mut f: impl FnMut(P, bool)) {
    for p in ALL {
        for stream in [false, true] {
            f(p, stream);
        }
    }
}

#[test]
fn auto_and_omitted_call_the_first_tool_with_generated_arguments() {
    each(|p, stream| {
        for choice in [None, Some(ToolChoice::Auto)] {
            let (_, got) = ask(p, &opts(choice.clone(), stream), &Scenario::default());
            assert_eq!(
                got.calls,
                vec![("get_weather".into(), weather_args())],
                "{p:?} {stream} {choice:?}"
            );
            assert_eq!(got.finish, call_finish(p), "{p:?} {stream}");
        }
    });
}

#[test]
fn none_answers_in_text_only() {
    each(|p, stream| {
        let (_, got) = ask(
            p,
            &opts(Some(ToolChoice::None), stream),
            &Scenario::default(),
        );
        assert!(got.calls.is_empty(), "{p:?} {stream}");
        assert!(!got.text.is_empty(), "{p:?} {stream}");
        assert_eq!(got.finish, text_finish(p));
    });
}

#[test]
fn required_calls_even_when_the_model_prefers_text() {
    let scenario = Scenario {
        prefer_text: true,
        ..Scenario::default()
    };
    each(|p, stream| {
        let (_, got) = ask(p, &opts(Some(ToolChoice::Required), stream), &scenario);
        assert_eq!(got.names(), ["get_weather"], "{p:?} {stream}");
        let (_, got) = ask(p, &opts(Some(ToolChoice::Auto), stream), &scenario);
        assert!(
            got.calls.is_empty() && !got.text.is_empty(),
            "{p:?} {stream} prefer_text"
        );
    });
}

#[test]
fn forced_calls_exactly_that_tool_even_when_the_scenario_pins_others() {
    let scenario = Scenario {
        calls: vec![ScenarioCall {
            name: "get_weather".into(),
            arguments: Default::default(),
            raw_arguments: None,
            id: None,
        }],
        ..Scenario::default()
    };
    each(|p, stream| {
        let (_, got) = ask(
            p,
            &opts(Some(ToolChoice::Forced("get_time".into())), stream),
            &scenario,
        );
        assert_eq!(
            got.calls,
            vec![("get_time".into(), json!({"zone": "UTC"}))],
            "{p:?} {stream}"
        );
    });
}

#[test]
fn allowed_tools_restrict_the_calls() {
    each(|p, stream| {
        if p == P::Anthropic {
            return; // Anthropic has no allowed-tools choice
        }
        let choice = ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools: vec!["get_time".into()],
        };
        let (_, got) = ask(p, &opts(Some(choice), stream), &Scenario::default());
        assert_eq!(got.names(), ["get_time"], "{p:?} {stream}");
    });
}

fn two_calls() -> Scenario {
    let call = |city: &str| ScenarioCall {
        name: "get_weather".into(),
        arguments: json!({"location": city, "unit": "C"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        raw_arguments: None,
        id: None,
    };
    Scenario {
        calls: vec![
            call("Paris"),
            call("Rome"),
            ScenarioCall {
                name: "not_offered".into(),
                arguments: Default::default(),
                raw_arguments: None,
                id: None,
            },
        ],
        text: Some("Let me check both.".into()),
        ..Scenario::default()
    }
}

#[test]
fn scenario_calls_are_filtered_and_parallel_off_keeps_one() {
    each(|p, stream| {
        let (_, got) = ask(p, &opts(None, stream), &two_calls());
        assert_eq!(
            got.calls.len(),
            2,
            "{p:?} {stream}: unknown names are dropped"
        );
        assert_eq!(got.calls[1].1["location"], "Rome");
        assert_eq!(got.text, "Let me check both.", "{p:?} {stream}");
        if p == P::Gemini {
            return; // no parallel switch
        }
        let o = Opts {
            choice: Some(ToolChoice::Auto),
            parallel: Some(false),
            stream,
            ..Opts::default()
        };
        let (_, got) = ask(p, &o, &two_calls());
        assert_eq!(got.calls.len(), 1, "{p:?} {stream}");
        assert_eq!(got.calls[0].1["location"], "Paris");
    });
}

#[test]
fn a_tool_result_gets_a_text_answer_quoting_it() {
    each(|p, stream| {
        let o = Opts {
            tool_result: true,
            stream,
            ..Opts::default()
        };
        let (_, got) = ask(p, &o, &Scenario::default());
        assert!(got.calls.is_empty(), "{p:?} {stream}");
        assert!(got.text.contains("temp_c"), "{p:?} {stream}: {}", got.text);
        assert_eq!(got.finish, text_finish(p));
        let final_text = Scenario {
            final_text: Some("It is 18 °C.".into()),
            ..Scenario::default()
        };
        let (_, got) = ask(p, &o, &final_text);
        assert_eq!(got.text, "It is 18 °C.");
    });
}

#[test]
fn identical_requests_give_identical_bytes_and_ids_follow_the_body() {
    each(|p, stream| {
        let o = opts(None, stream);
        let (a, _) = ask(p, &o, &two_calls());
        let (b, _) = ask(p, &o, &two_calls());
        assert_eq!(a, b, "{p:?} {stream}");
        let mut other = body(p, &o);
        other["metadata_probe"] = json!(1);
        let c = answer(&request(p, &other, stream), &two_calls());
        assert_ne!(a.body, c.body, "{p:?} {stream}: ids derive from the body");
    });
}

#[test]
fn answers_carry_the_simulator_header_and_a_content_type() {
    each(|p, stream| {
        let (resp, _) = ask(p, &opts(None, stream), &Scenario::default());
        assert_eq!(resp.header(SIMULATOR_HEADER), Some(VERSION));
        let ct = resp.header("content-type").unwrap_or("");
        let want = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        assert!(ct.starts_with(want), "{p:?} {stream}: {ct}");
        assert_eq!(matches!(resp.body, SimBody::Chunks(_)), stream);
    });
}

#[test]
fn models_are_echoed() {
    for p in ALL {
        let (resp, _) = ask(p, &opts(None, false), &Scenario::default());
        let v = resp.json();
        let m = if p == P::Gemini {
            &v["modelVersion"]
        } else {
            &v["model"]
        };
        assert_eq!(m, support::model(p));
    }
}

#[test]
fn chat_stream_has_role_first_ids_once_usage_and_done() {
    let mut b = body(P::Chat, &opts(None, true));
    b["stream_options"] = json!({"include_usage": true});
    let resp = answer(&request(P::Chat, &b, true), &two_calls());
    let SimBody::Chunks(chunks) = &resp.body else {
        panic!("stream")
    };
    assert_eq!(
        chunks.last().map(Vec::as_slice),
        Some(&b"data: [DONE]\n\n"[..])
    );
    let events = sse_data(&resp.body.bytes());
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    let with_ids = events
        .iter()
        .filter(|e| e.pointer("/choices/0/delta/tool_calls/0/id").is_some())
        .count();
    assert_eq!(with_ids, 2);
    let usage = events.last().unwrap_or(&Value::Null);
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64() > Some(0));
    assert!(
        events[..events.len() - 1]
            .iter()
            .all(|e| e["usage"].is_null())
    );
    for e in &events {
        if let Some(f) = e
            .pointer("/choices/0/delta/tool_calls/0/function/arguments")
            .and_then(Value::as_str)
        {
            assert!(f.len() <= 12, "small fragments: {f:?}");
        }
    }
}

#[test]
fn responses_stream_is_sequenced_and_completes_with_the_buffered_snapshot() {
    let streamed = answer(
        &request(P::Responses, &body(P::Responses, &opts(None, true)), true),
        &two_calls(),
    );
    let events = sse_data(&streamed.body.bytes());
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["sequence_number"], i);
    }
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds[..3],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added"
        ]
    );
    for k in [
        "response.output_text.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ] {
        assert!(kinds.contains(&k), "{k}");
    }
    assert_eq!(kinds.last(), Some(&"response.completed"));
    let text = String::from_utf8_lossy(&streamed.body.bytes()).to_string();
    assert!(text.starts_with("event: response.created\ndata: "));
    let mut b = body(P::Responses, &opts(None, true));
    b["stream"] = json!(false);
    let buffered = answer(&request(P::Responses, &b, false), &two_calls()).json();
    let last = events.last().unwrap_or(&Value::Null);
    assert_eq!(last["response"]["output"].as_array().map(Vec::len), Some(3));
    assert_eq!(last["response"]["status"], buffered["status"]);
}

#[test]
fn anthropic_stream_has_the_documented_event_order() {
    let resp = answer(
        &request(P::Anthropic, &body(P::Anthropic, &opts(None, true)), true),
        &two_calls(),
    );
    let text = String::from_utf8_lossy(&resp.body.bytes()).to_string();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names[0], "message_start");
    assert!(names.contains(&"ping"));
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    let events = sse_data(&resp.body.bytes());
    let first_json = events
        .iter()
        .find(|e| e["delta"]["type"] == "input_json_delta");
    assert_eq!(
        first_json.map(|e| &e["delta"]["partial_json"]),
        Some(&json!(""))
    );
}

#[test]
fn gemini_streams_as_crlf_sse_or_a_json_array() {
    let b = body(P::Gemini, &opts(None, true));
    let sse = answer(&request(P::Gemini, &b, true), &two_calls());
    let SimBody::Chunks(chunks) = &sse.body else {
        panic!("stream")
    };
    assert!(
        chunks
            .iter()
            .all(|c| c.starts_with(b"data: ") && c.ends_with(b"\r\n\r\n"))
    );
    let mut req = request(P::Gemini, &b, true);
    req.query.clear();
    let array = answer(&req, &two_calls());
    assert!(
        array
            .header("content-type")
            .unwrap_or("")
            .starts_with("application/json")
    );
    let SimBody::Chunks(chunks) = &array.body else {
        panic!("stream")
    };
    assert!(chunks.len() > 2 && chunks[0].starts_with(b"[{") && chunks[1].starts_with(b"\n,\r\n{"));
    let whole = array.json();
    let items = whole.as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), chunks.len());
    assert_eq!(
        items.last().map(|i| &i["candidates"][0]["finishReason"]),
        Some(&json!("STOP"))
    );
    assert_eq!(
        read(P::Gemini, false, &resp_of(&items[0])).text,
        "Let me check both."
    );
    let calls: usize = items
        .iter()
        .map(|i| support::read(P::Gemini, false, &resp_of(i)).calls.len())
        .sum();
    assert_eq!(calls, 2, "each functionCall arrives whole");
}

fn resp_of(v: &Value) -> super::SimResponse {
    super::SimResponse {
        status: 200,
        headers: Default::default(),
        body: SimBody::Full(v.to_string().into_bytes()),
    }
}

#[test]
fn a_scenario_error_answers_in_the_provider_envelope() {
    let scenario = Scenario {
        error: Some(crate::scenario::ScenarioError {
            status: 529,
            message: None,
        }),
        ..Scenario::default()
    };
    let resp = answer(
        &request(P::Anthropic, &body(P::Anthropic, &opts(None, false)), false),
        &scenario,
    );
    assert_eq!(resp.status, 529);
    assert_eq!(resp.json()["error"]["type"], "overloaded_error");
    let scenario = Scenario {
        error: Some(crate::scenario::ScenarioError {
            status: 429,
            message: Some("slow down".into()),
        }),
        ..Scenario::default()
    };
    let resp = answer(
        &request(P::Chat, &body(P::Chat, &opts(None, true)), true),
        &scenario,
    );
    assert_eq!(
        (resp.status, resp.json()["error"]["message"].as_str()),
        (429, Some("slow down"))
    );
    assert_eq!(resp.json()["error"]["code"], "rate_limit_exceeded");
    assert_eq!(resp.header("retry-after"), Some("1"));
    let resp = answer(
        &request(P::Gemini, &body(P::Gemini, &opts(None, false)), false),
        &scenario,
    );
    assert_eq!(resp.json()["error"]["status"], "RESOURCE_EXHAUSTED");
}

#[test]
fn got_helper_sees_text_and_calls_together() {
    let (_, got) = ask(P::Anthropic, &opts(None, true), &two_calls());
    assert_eq!(
        got,
        Got {
            calls: got.calls.clone(),
            text: "Let me check both.".into(),
            finish: "tool_use".into()
        }
    );
}
