//! Unit tests of simulated hosted web search: Responses `web_search_call` + `url_citation`,
//! Anthropic `server_tool_use` + `web_search_tool_result` + citations, Gemini grounding metadata.

use serde_json::{Value, json};

use super::support::{P, assert_status, request, sse_data};
use crate::scenario::Scenario;
use crate::simulate::{SimResponse, answer};

fn search_body(p: P, stream: bool) -> Value {
    match p {
        P::Responses => json!({"model": "gpt-4.1", "input": "Who won the match?", "stream": stream,
                               "tools": [{"type": "web_search_preview"}]}),
        P::Anthropic => json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
                               "messages": [{"role": "user", "content": "Who won the match?"}],
                               "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]}),
        _ => json!({"contents": [{"role": "user", "parts": [{"text": "Who won the match?"}]}],
                    "tools": [{"googleSearch": {}}]}),
    }
}

fn run(p: P, stream: bool, scenario: &Scenario) -> SimResponse {
    let resp = answer(&request(p, &search_body(p, stream), stream), scenario);
    assert_status(&resp, 200, "");
    resp
}

#[test]
fn responses_search_answers_with_a_call_item_and_url_citations() {
    let v = run(P::Responses, false, &Scenario::default()).json();
    let out = v["output"].as_array().cloned().unwrap_or_default();
    assert_eq!(out[0]["type"], "web_search_call");
    assert_eq!(out[0]["action"]["query"], "Who won the match?");
    let part = &out[1]["content"][0];
    let text: Vec<char> = part["text"].as_str().unwrap_or("").chars().collect();
    let notes = part["annotations"].as_array().cloned().unwrap_or_default();
    assert_eq!(notes.len(), 2);
    for n in &notes {
        assert_eq!(n["type"], "url_citation");
        let (s, e) = (
            n["start_index"].as_u64().unwrap_or(0) as usize,
            n["end_index"].as_u64().unwrap_or(0) as usize,
        );
        let cited: String = text[s..e].iter().collect();
        assert!(
            cited.starts_with(n["title"].as_str().unwrap_or("?")),
            "{cited}"
        );
    }
    let events = sse_data(&run(P::Responses, true, &Scenario::default()).body.bytes());
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    for k in [
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_text.annotation.added",
    ] {
        assert!(kinds.contains(&k), "{k}");
    }
}

#[test]
fn anthropic_search_answers_with_server_blocks_and_citations() {
    let v = run(P::Anthropic, false, &Scenario::default()).json();
    let blocks = v["content"].as_array().cloned().unwrap_or_default();
    assert_eq!(blocks[0]["type"], "server_tool_use");
    assert_eq!(blocks[1]["type"], "web_search_tool_result");
    assert_eq!(blocks[1]["tool_use_id"], blocks[0]["id"]);
    assert!(
        blocks[0]["id"]
            .as_str()
            .unwrap_or("")
            .starts_with("srvtoolu_")
    );
    let cited: Vec<&Value> = blocks
        .iter()
        .filter(|b| b.get("citations").is_some())
        .collect();
    assert_eq!(cited.len(), 2);
    assert_eq!(
        cited[0]["citations"][0]["type"],
        "web_search_result_location"
    );
    assert_eq!(v["usage"]["server_tool_use"]["web_search_requests"], 1);
    assert_eq!(v["stop_reason"], "end_turn");
    let events = sse_data(&run(P::Anthropic, true, &Scenario::default()).body.bytes());
    assert!(
        events
            .iter()
            .any(|e| e["delta"]["type"] == "citations_delta")
    );
    assert!(
        events
            .iter()
            .any(|e| e["content_block"]["type"] == "web_search_tool_result")
    );
}

#[test]
fn gemini_search_answers_with_grounding_metadata() {
    for stream in [false, true] {
        let resp = run(P::Gemini, stream, &Scenario::default());
        let last = if stream {
            sse_data(&resp.body.bytes()).pop().unwrap_or(Value::Null)
        } else {
            resp.json()
        };
        let g = &last["candidates"][0]["groundingMetadata"];
        assert_eq!(g["webSearchQueries"], json!(["Who won the match?"]));
        assert_eq!(g["groundingChunks"].as_array().map(Vec::len), Some(2));
        assert!(
            g["groundingChunks"][0]["web"]["uri"]
                .as_str()
                .unwrap_or("")
                .starts_with("https://")
        );
        assert_eq!(
            g["groundingSupports"][1]["groundingChunkIndices"],
            json!([1])
        );
    }
}

#[test]
fn empty_results_and_no_search_when_not_allowed() {
    let empty = Scenario {
        empty_search_results: true,
        ..Scenario::default()
    };
    let v = run(P::Responses, false, &empty).json();
    assert_eq!(v["output"][0]["type"], "web_search_call");
    assert_eq!(v["output"][1]["content"][0]["annotations"], json!([]));
    let v = run(P::Anthropic, false, &empty).json();
    assert_eq!(v["content"][1]["content"], json!([]));
    let v = run(P::Gemini, false, &empty).json();
    assert!(v["candidates"][0]["groundingMetadata"]["groundingChunks"].is_null());
    let prefer = Scenario {
        prefer_text: true,
        ..Scenario::default()
    };
    let v = run(P::Anthropic, false, &prefer).json();
    assert_eq!(v["content"][0]["type"], "text");
    assert_eq!(v["content"].as_array().map(Vec::len), Some(1));
}
