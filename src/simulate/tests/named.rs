//! Named scenarios: picked by the scenario header or a model-name suffix, on every API,
//! buffered and streamed; combined; an unknown name is the API's 400 naming the known ones.

use serde_json::{Value, json};

use super::support::{ALL, Got, Opts, P, assert_status, body, read, request};
use crate::scenario::Scenario;
use crate::simulate::named::NAMED;
use crate::simulate::{SCENARIO_HEADER, SimRequest, SimResponse, answer, answer_request};

/// A request of `p` picking `names` by header, or (`by_model`) by model-name suffix.
fn picked(p: P, stream: bool, names: &str, by_model: bool) -> SimRequest {
    let mut b = body(
        p,
        &Opts {
            stream,
            ..Opts::default()
        },
    );
    let mut req = if by_model {
        let suffix: String = names.split(',').map(|n| format!("~{n}")).collect();
        if p == P::Gemini {
            let mut r = request(p, &b, stream);
            r.path = r
                .path
                .replace("gemini-3.8-flash", &format!("gemini-3.8-flash{suffix}"));
            return r;
        }
        b["model"] = json!(format!("{}{suffix}", b["model"].as_str().unwrap()));
        request(p, &b, stream)
    } else {
        request(p, &b, stream)
    };
    if !by_model {
        req = req.with_header(SCENARIO_HEADER, names);
    }
    req
}

/// The simulator's answer to `picked(p, stream, names, by_model)`.
fn named(p: P, stream: bool, names: &str, by_model: bool) -> SimResponse {
    answer(&picked(p, stream, names, by_model), &Scenario::default())
}

/// What the calls and text of `named(p, stream, names, by_model)` are, after checking it is a 200.
fn read_named(p: P, stream: bool, names: &str, by_model: bool, what: &str) -> Got {
    let resp = named(p, stream, names, by_model);
    ok(&resp, what);
    read(p, stream, &resp)
}

fn each(mut f: impl FnMut(P, bool, bool)) {
    for p in ALL {
        for stream in [false, true] {
            for by_model in [false, true] {
                f(p, stream, by_model);
            }
        }
    }
}

fn ok(resp: &SimResponse, what: &str) {
    assert_status(resp, 200, what);
}

#[test]
fn parallel_no_arguments_and_text_on_every_api() {
    each(|p, stream, by_model| {
        let what = format!("{p:?} stream={stream} by_model={by_model}");
        let got = read_named(p, stream, "parallel", by_model, &what);
        assert_eq!(got.names(), ["get_weather", "get_time"], "{what}");

        let got = read_named(p, stream, "no_arguments", by_model, &what);
        assert_eq!(
            got.calls,
            [("get_weather".to_string(), json!({}))],
            "{what}"
        );

        let got = read_named(p, stream, "text", by_model, &what);
        assert!(
            got.calls.is_empty() && !got.text.is_empty(),
            "{what}: {got:?}"
        );
    });
}

#[test]
fn errors_and_combined_names() {
    each(|p, stream, by_model| {
        let what = format!("{p:?} stream={stream} by_model={by_model}");
        let resp = named(p, stream, "rate_limited", by_model);
        assert_eq!(resp.status, 429, "{what}");
        let resp = named(p, stream, "server_error", by_model);
        assert_eq!(resp.status, 500, "{what}");
        // Two names at once: parallel calls in a stream that is then cut.
        let resp = named(p, stream, "parallel,no_usage", by_model);
        ok(&resp, &what);
        assert_eq!(read(p, stream, &resp).calls.len(), 2, "{what}");
    });
}

#[test]
fn a_stream_fault_by_name_ends_the_stream_early() {
    for p in ALL {
        let clean = named(p, true, "default", false);
        let cut = named(p, true, "stream_cut", true);
        ok(&cut, &format!("{p:?}"));
        assert!(cut.body.bytes().len() < clean.body.bytes().len(), "{p:?}");
    }
}

#[test]
fn an_unknown_name_is_a_400_naming_the_known_ones() {
    for p in ALL {
        for by_model in [false, true] {
            let resp = named(p, false, "paralel", by_model);
            assert_eq!(resp.status, 400, "{p:?}");
            let text = String::from_utf8_lossy(&resp.body.bytes()).to_string();
            assert!(
                text.contains("paralel") && text.contains("parallel, no_arguments"),
                "{text}"
            );
        }
    }
    // A JSON header is still a whole scenario, and a model without the separator picks nothing.
    let req = picked(P::Chat, false, r#"{"prefer_text":true}"#, false);
    let got = read(P::Chat, false, &answer_request(&req, None));
    assert!(got.calls.is_empty());
    let got = read(
        P::Chat,
        false,
        &answer_request(&picked(P::Chat, false, "parallel", false), None),
    );
    assert_eq!(
        got.calls.len(),
        2,
        "names through the server's entry point too"
    );
    let names: Vec<&str> = NAMED.iter().map(|(n, _, _)| *n).collect();
    assert!(names.len() >= 15, "{names:?}");
    let v: Value =
        serde_json::from_slice(&named(P::Chat, false, "default", false).body.bytes()).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn shared_index_streams_two_chat_calls_at_index_zero() {
    let resp = named(P::Chat, true, "shared_index", true);
    ok(&resp, "chat shared_index");
    let events = super::support::sse_data(&resp.body.bytes());
    let deltas: Vec<&Value> = (events.iter())
        .filter_map(|e| e["choices"][0]["delta"]["tool_calls"].as_array())
        .flatten()
        .collect();
    assert!(deltas.iter().all(|d| d["index"] == 0), "{deltas:?}");
    let ids: Vec<&str> = deltas.iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!(ids.len(), 2, "{deltas:?}");
    assert_ne!(ids[0], ids[1]);
}

#[test]
fn redacted_reasoning_answers_a_signed_thinking_block_then_a_redacted_one() {
    for stream in [false, true] {
        let resp = named(P::Anthropic, stream, "redacted_reasoning", false);
        ok(&resp, "anthropic redacted_reasoning");
        let body = String::from_utf8_lossy(&resp.body.bytes()).into_owned();
        let (thinking, redacted) = (body.find("\"thinking\""), body.find("redacted_thinking"));
        assert!(thinking.is_some() && redacted.is_some(), "{body}");
        assert!(thinking < redacted, "{body}");
        assert!(body.contains("\"data\""), "{body}");
    }
}
