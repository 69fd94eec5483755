//! Unit tests of the simulator's validation: key headers, bodies, models, tool choice checks,
//! hosted-tool rejections, unknown routes and the scenario header, each in the API's envelope.

use serde_json::{Value, json};

use super::support::{ALL, Opts, P, body, request};
use crate::model::ToolChoice;
use crate::scenario::Scenario;
use crate::simulate::{
    SCENARIO_HEADER, SIMULATOR_HEADER, SimRequest, SimResponse, answer, answer_request,
};

fn send(req: &SimRequest) -> SimResponse {
    answer(req, &Scenario::default())
}

fn message(resp: &SimResponse) -> String {
    resp.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Asserts that `resp`'s error message passes `ok`, showing the message when it does not.
#[track_caller]
fn assert_message(resp: &SimResponse, ok: impl FnOnce(&str) -> bool) {
    let m = message(resp);
    assert!(ok(&m), "{m}");
}

/// The answer to `p`'s buffered request with body `b`, checked to be a 400.
fn refused(p: P, b: &Value) -> SimResponse {
    let resp = send(&request(p, b, false));
    assert_eq!(resp.status, 400, "{p:?}: {}", message(&resp));
    resp
}

#[test]
fn a_missing_key_is_refused_the_api_s_way() {
    for p in ALL {
        let mut req = request(p, &body(p, &Opts::default()), false);
        req.headers.retain(|k, _| k == "content-type");
        let resp = send(&req);
        assert_eq!(
            resp.header(SIMULATOR_HEADER),
            Some(crate::simulate::VERSION),
            "{p:?}"
        );
        let v = resp.json();
        match p {
            P::Chat | P::Responses => {
                assert_eq!(resp.status, 401);
                assert_eq!(v["error"]["type"], "invalid_request_error");
            }
            P::Anthropic => {
                assert_eq!(resp.status, 401);
                assert_eq!(
                    (v["type"].as_str(), v["error"]["type"].as_str()),
                    (Some("error"), Some("authentication_error"))
                );
            }
            P::Gemini => {
                assert_eq!(resp.status, 400);
                assert_eq!(
                    v["error"]["message"],
                    "API key not valid. Please pass a valid API key."
                );
                assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");
                assert_eq!(v["error"]["details"][0]["reason"], "API_KEY_INVALID");
            }
        }
    }
    let b = body(P::Gemini, &Opts::default());
    let keyed_by_query = SimRequest::post("/v1beta/models/gemini-3.8-flash:generateContent", &b)
        .with_query("key", "AIza-q");
    assert_eq!(send(&keyed_by_query).status, 200);
    let bearer = SimRequest::post("/v1/messages", &body(P::Anthropic, &Opts::default()))
        .with_header("authorization", "Bearer tok");
    assert_eq!(send(&bearer).status, 200);
}

#[test]
fn bodies_that_are_not_json_objects_get_400s() {
    for p in ALL {
        for raw in [&b"{not json"[..], b"[1,2]", b""] {
            let mut req = request(p, &json!({}), false);
            req.body = raw.to_vec();
            let resp = send(&req);
            assert_eq!(resp.status, 400, "{p:?} {raw:?}");
            assert!(resp.json()["error"].is_object(), "{p:?}");
        }
    }
}

#[test]
fn a_missing_model_is_refused() {
    for p in [P::Chat, P::Responses, P::Anthropic] {
        let mut b = body(p, &Opts::default());
        b.as_object_mut().map(|o| o.remove("model"));
        let resp = refused(p, &b);
        let m = message(&resp);
        assert!(m.contains("model"), "{p:?}: {m}");
    }
    let mut b = body(P::Anthropic, &Opts::default());
    b.as_object_mut().map(|o| o.remove("max_tokens"));
    assert_eq!(
        message(&send(&request(P::Anthropic, &b, false))),
        "max_tokens: Field required"
    );
}

#[test]
fn tool_choice_without_tools_is_refused() {
    for p in ALL {
        let o = Opts {
            choice: Some(ToolChoice::Required),
            no_tools: true,
            ..Opts::default()
        };
        let resp = refused(p, &body(p, &o));
        let want = match p {
            P::Chat | P::Responses => {
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
            }
            P::Anthropic => "tool_choice may only be specified while providing tools.",
            P::Gemini => "Function calling config is set without function_declarations.",
        };
        assert_eq!(message(&resp), want, "{p:?}");
        if p == P::Chat {
            assert_eq!(resp.json()["error"]["param"], "tool_choice");
        }
    }
    let mut b = body(
        P::Chat,
        &Opts {
            no_tools: true,
            ..Opts::default()
        },
    );
    b["parallel_tool_calls"] = json!(false);
    assert!(
        message(&send(&request(P::Chat, &b, false)))
            .contains("'parallel_tool_calls' is only allowed")
    );
}

#[test]
fn a_forced_name_outside_the_tools_is_refused() {
    for p in ALL {
        let o = Opts {
            choice: Some(ToolChoice::Forced("launch_rocket".into())),
            ..Opts::default()
        };
        let resp = refused(p, &body(p, &o));
        assert!(
            message(&resp).contains("launch_rocket"),
            "{p:?}: {}",
            message(&resp)
        );
    }
}

#[test]
fn anthropic_forcing_a_tool_with_thinking_is_refused() {
    for choice in [ToolChoice::Required, ToolChoice::Forced("get_time".into())] {
        let mut b = body(
            P::Anthropic,
            &Opts {
                choice: Some(choice),
                ..Opts::default()
            },
        );
        b["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
        let resp = refused(P::Anthropic, &b);
        assert_eq!(
            message(&resp),
            "Thinking may not be enabled when tool_choice forces tool use."
        );
        assert_eq!(resp.json()["error"]["type"], "invalid_request_error");
    }
    let mut b = body(
        P::Anthropic,
        &Opts {
            choice: Some(ToolChoice::Auto),
            ..Opts::default()
        },
    );
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
    assert_eq!(send(&request(P::Anthropic, &b, false)).status, 200);
}

fn responses_with_search(search_type: &str, choice: &Value) -> Value {
    json!({"model": "gpt-5", "input": "news?", "tools": [{"type": search_type}], "tool_choice": choice})
}

#[test]
fn responses_web_search_with_a_non_auto_choice_gets_openai_s_exact_400() {
    for t in ["web_search", "web_search_preview"] {
        for choice in [
            json!("required"),
            json!({"type": "web_search_preview"}),
            json!("none"),
        ] {
            let resp = send(&request(
                P::Responses,
                &responses_with_search(t, &choice),
                false,
            ));
            assert_eq!(resp.status, 400, "{t} {choice}");
            let want = json!({"error": {"message": "Tool choices other than 'auto' are not supported with model 'gpt-5' and the following tool types: 'web_search_preview'.",
                "type": "invalid_request_error", "param": "tool_choice", "code": null}});
            assert_eq!(resp.json(), want);
        }
        assert_eq!(
            send(&request(
                P::Responses,
                &responses_with_search(t, &json!("auto")),
                false
            ))
            .status,
            200
        );
    }
}

#[test]
fn unsupported_hosted_tool_types_are_refused_naming_the_type() {
    let scenario = Scenario {
        unsupported_tool_types: vec!["web_search".into()],
        ..Scenario::default()
    };
    let b = responses_with_search("web_search", &json!("auto"));
    let resp = answer(&request(P::Responses, &b, false), &scenario);
    assert_eq!(resp.status, 400);
    let m = message(&resp);
    assert!(
        m.contains("not supported") && m.contains("'web_search'"),
        "{m}"
    );
    let retry = responses_with_search("web_search_preview", &json!("auto"));
    assert_eq!(
        answer(&request(P::Responses, &retry, false), &scenario).status,
        200
    );
    let gemini = Scenario {
        unsupported_tool_types: vec!["googleSearch".into()],
        ..Scenario::default()
    };
    let b = json!({"contents": [{"parts": [{"text": "q"}]}], "tools": [{"googleSearch": {}}]});
    let resp = answer(&request(P::Gemini, &b, false), &gemini);
    assert_eq!(
        (resp.status, resp.json()["error"]["status"].as_str()),
        (400, Some("INVALID_ARGUMENT"))
    );
}

#[test]
fn unknown_routes_are_404_in_the_family_s_shape() {
    let b = json!({});
    let openai = send(&SimRequest::post("/v1/embeddings", &b));
    assert_eq!(
        (openai.status, message(&openai)),
        (404, "Invalid URL (POST /v1/embeddings)".to_string())
    );
    let mut get = SimRequest::post("/v1/chat/completions", &b);
    get.method = "GET".into();
    assert_eq!(send(&get).status, 404);
    let anthropic = send(&SimRequest::post("/v1/messages/count_tokens", &b));
    assert_eq!(
        (anthropic.status, anthropic.json()["error"]["type"].as_str()),
        (404, Some("not_found_error"))
    );
    let gemini = send(&SimRequest::post(
        "/v1beta/models/gemini-3.8-flash:embedContent",
        &b,
    ));
    assert_eq!(
        (gemini.status, gemini.json()["error"]["status"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    assert!(gemini.header(SIMULATOR_HEADER).is_some());
}

#[test]
fn the_scenario_header_is_read_and_an_invalid_one_named() {
    let b = body(P::Chat, &Opts::default());
    let req = request(P::Chat, &b, false).with_header(SCENARIO_HEADER, r#"{"prefer_text":true}"#);
    let v = answer_request(&req, None).json();
    assert!(v["choices"][0]["message"]["tool_calls"].is_null());
    let bad = request(P::Chat, &b, false).with_header(SCENARIO_HEADER, r#"{"calls":"nope"}"#);
    let resp = answer_request(&bad, None);
    assert_eq!(resp.status, 400);
    assert_message(&resp, |m| {
        m.starts_with("invalid x-tooltape-scenario header")
    });
    let unknown_field = request(P::Anthropic, &body(P::Anthropic, &Opts::default()), false)
        .with_header(SCENARIO_HEADER, r#"{"colour":"red"}"#);
    let resp = answer_request(&unknown_field, None);
    assert_eq!(
        (resp.status, resp.json()["type"].as_str()),
        (400, Some("error"))
    );
}

#[test]
fn odd_inputs_never_panic() {
    let weird = [
        json!({"model": 5}),
        json!({"model": "m", "messages": "x", "tools": {}}),
        json!({"model": "m", "messages": [], "tools": [{"type": "function"}]}),
        json!({"model": "m", "messages": [], "max_tokens": 1, "tools": [{"name": "a"}], "tool_choice": {"type": "weird"}}),
        json!({"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}, "tools": [{"functionDeclarations": [{"name": "a"}]}]}),
        json!({"model": "m", "input": [{"type": "function_call_output"}], "tools": [{"type": "function", "name": "a", "parameters": {"$ref": "#"}}]}),
    ];
    for p in ALL {
        for b in &weird {
            for stream in [false, true] {
                let resp = send(&request(p, b, stream));
                assert!(
                    resp.status == 200 || resp.status == 400,
                    "{p:?} {b}: {}",
                    resp.status
                );
            }
        }
    }
}

/// The conversation of `body(p, tool_result)` with its result sent under `id`.
fn result_under(p: P, id: &str) -> Value {
    let mut b = body(
        p,
        &Opts {
            tool_result: true,
            ..Opts::default()
        },
    );
    match p {
        P::Chat => b["messages"][2]["tool_call_id"] = json!(id),
        P::Responses => b["input"][2]["call_id"] = json!(id),
        P::Anthropic => b["messages"][2]["content"][0]["tool_use_id"] = json!(id),
        P::Gemini => b["contents"][2]["parts"][0]["functionResponse"]["id"] = json!(id),
    }
    b
}

#[test]
fn a_result_for_an_unknown_id_is_refused_where_the_api_links_by_id() {
    for p in ALL {
        let linked = send(&request(
            p,
            &body(
                p,
                &Opts {
                    tool_result: true,
                    ..Opts::default()
                },
            ),
            false,
        ));
        assert_eq!(linked.status, 200, "{p:?}: {}", message(&linked));
        let resp = send(&request(p, &result_under(p, "call_nope"), false));
        if p == P::Gemini {
            // Gemini links a functionResponse by name; an unmatched id is not refused.
            assert_eq!(resp.status, 200, "{}", message(&resp));
            continue;
        }
        assert_eq!(resp.status, 400, "{p:?}");
        let v = resp.json();
        match p {
            P::Chat => {
                assert_eq!(
                    message(&resp),
                    "Invalid parameter: 'tool_call_id' of 'call_nope' not found in 'tool_calls' of previous message."
                );
                assert_eq!(v["error"]["param"], "messages.[2].tool_call_id");
            }
            P::Responses => {
                assert_eq!(
                    message(&resp),
                    "No tool call found for function call output with call_id call_nope."
                );
                assert_eq!(v["error"]["param"], "input");
            }
            P::Anthropic => {
                assert_eq!(v["error"]["type"], "invalid_request_error");
                assert_message(&resp, |m| {
                    m.starts_with("messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: call_nope.")
                });
            }
            P::Gemini => unreachable!("answered above"),
        }
    }
}

#[test]
fn a_chat_tool_message_without_a_preceding_call_is_refused() {
    let mut b = body(P::Chat, &Opts::default());
    b["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "tool", "tool_call_id": "call_1", "content": "x"}));
    let resp = refused(P::Chat, &b);
    assert_eq!(
        message(&resp),
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    );
    assert_eq!(resp.json()["error"]["param"], "messages.[1].role");
}

#[test]
fn function_parameters_that_are_not_an_object_are_refused_strict_or_not() {
    for p in [P::Chat, P::Responses] {
        let mut b = body(p, &Opts::default());
        let params = json!({"type": "array", "items": {"type": "string"}});
        match p {
            P::Chat => b["tools"][0]["function"]["parameters"] = params,
            _ => b["tools"][0]["parameters"] = params,
        }
        let resp = refused(p, &b);
        assert_message(&resp, |m| {
            m.ends_with(
                "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'.",
            )
        });
    }
    let mut b = body(P::Gemini, &Opts::default());
    let decl = &mut b["tools"][0]["functionDeclarations"][0];
    decl.as_object_mut().unwrap().remove("parameters");
    decl["parametersJsonSchema"] = json!({"type": "array"});
    let resp = refused(P::Gemini, &b);
    assert_message(&resp, |m| m.contains("parameters_json_schema"));
}

/// A tool result as parts: each API's documented array form is accepted and the model reads its
/// text; an image in a Chat tool message is OpenAI's 400.
#[test]
fn results_as_parts_are_read_and_an_image_in_a_chat_tool_message_refused() {
    let png = "iVBORw0KGgo=";
    for p in ALL {
        let mut b = body(
            p,
            &Opts {
                tool_result: true,
                ..Opts::default()
            },
        );
        let (at, parts) = match p {
            P::Chat => (
                "/messages/2/content",
                json!([{"type": "text", "text": "light snow"}]),
            ),
            P::Responses => (
                "/input/2/output",
                json!([{"type": "input_text", "text": "light snow"},
                {"type": "input_image", "image_url": format!("data:image/png;base64,{png}")}]),
            ),
            P::Anthropic => (
                "/messages/2/content/0/content",
                json!([{"type": "text", "text": "light snow"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]),
            ),
            P::Gemini => (
                "/contents/2/parts/0/functionResponse/response",
                json!({"result": "light snow"}),
            ),
        };
        *b.pointer_mut(at).unwrap() = parts;
        if p == P::Gemini {
            b["contents"][2]["parts"][0]["functionResponse"]["parts"] =
                json!([{"inlineData": {"mimeType": "image/png", "data": png}}]);
        }
        let resp = send(&request(p, &b, false));
        assert_eq!(resp.status, 200, "{p:?}: {}", message(&resp));
        assert!(resp.json().to_string().contains("light snow"), "{p:?}");
    }
    let mut b = body(
        P::Chat,
        &Opts {
            tool_result: true,
            ..Opts::default()
        },
    );
    b["messages"][2]["content"] = json!([{"type": "text", "text": "radar"},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}}]);
    let resp = refused(P::Chat, &b);
    assert_message(&resp, |m| {
        m.starts_with(
            "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user'",
        )
    });
}
