//! Test support for the simulator: request builders per API and small serde_json readers of
//! the answers (independent of the provider decoders, which are written in parallel).

use serde_json::{Value, json};

use crate::model::{AllowedMode, ToolChoice};
use crate::scenario::Scenario;
use crate::simulate::{SimRequest, SimResponse, answer};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum P {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

pub(crate) const ALL: [P; 4] = [P::Chat, P::Responses, P::Anthropic, P::Gemini];

/// What came back, read the simple way.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Got {
    pub calls: Vec<(String, Value)>,
    pub text: String,
    pub finish: String,
}

impl Got {
    pub(super) fn names(&self) -> Vec<&str> {
        self.calls.iter().map(|c| c.0.as_str()).collect()
    }
}

pub(crate) fn weather_schema() -> Value {
    json!({"type": "object", "properties": {
        "location": {"type": "string", "description": "City"},
        "unit": {"type": "string", "enum": ["C", "F"]}}, "required": ["location", "unit"]})
}

pub(crate) fn time_schema() -> Value {
    json!({"type": "object", "properties": {"zone": {"type": "string", "default": "UTC"}}, "required": ["zone"]})
}

/// Options of a test request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Opts {
    pub choice: Option<ToolChoice>,
    pub parallel: Option<bool>,
    pub stream: bool,
    pub tool_result: bool,
    pub no_tools: bool,
}

fn tool_defs(p: P) -> Vec<Value> {
    let defs = [
        ("get_weather", weather_schema()),
        ("get_time", time_schema()),
    ];
    defs.into_iter()
        .map(|(n, s)| match p {
            P::Chat => json!({"type": "function", "function": {"name": n, "parameters": s}}),
            P::Responses => {
                json!({"type": "function", "name": n, "parameters": s, "strict": false})
            }
            P::Anthropic => json!({"name": n, "input_schema": s}),
            P::Gemini => json!({"name": n, "parameters": s}),
        })
        .collect()
}

fn choice_json(p: P, c: &ToolChoice, parallel: Option<bool>) -> Value {
    let fname = |n: &str| match p {
        P::Chat => json!({"type": "function", "function": {"name": n}}),
        _ => json!({"type": "function", "name": n}),
    };
    match (p, c) {
        (P::Chat | P::Responses, ToolChoice::Auto) => json!("auto"),
        (P::Chat | P::Responses, ToolChoice::None) => json!("none"),
        (P::Chat | P::Responses, ToolChoice::Required) => json!("required"),
        (P::Chat | P::Responses, ToolChoice::Forced(n)) => fname(n),
        (P::Chat | P::Responses, ToolChoice::Allowed { mode, tools }) => {
            let mode = if *mode == AllowedMode::Required {
                "required"
            } else {
                "auto"
            };
            let tools: Vec<Value> = tools.iter().map(|n| fname(n)).collect();
            if p == P::Chat {
                json!({"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}})
            } else {
                json!({"type": "allowed_tools", "mode": mode, "tools": tools})
            }
        }
        (P::Anthropic, c) => {
            let mut v = match c {
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required | ToolChoice::Allowed { .. } => json!({"type": "any"}),
                ToolChoice::Forced(n) => json!({"type": "tool", "name": n}),
                ToolChoice::Auto => json!({"type": "auto"}),
            };
            if parallel == Some(false) {
                v["disable_parallel_tool_use"] = json!(true);
            }
            v
        }
        (P::Gemini, c) => {
            let (mode, names): (&str, Vec<String>) = match c {
                ToolChoice::Auto => ("AUTO", vec![]),
                ToolChoice::None => ("NONE", vec![]),
                ToolChoice::Required => ("ANY", vec![]),
                ToolChoice::Forced(n) => ("ANY", vec![n.clone()]),
                ToolChoice::Allowed { mode, tools } => (
                    if *mode == AllowedMode::Required {
                        "ANY"
                    } else {
                        "AUTO"
                    },
                    tools.clone(),
                ),
            };
            let mut cfg = json!({"mode": mode});
            if !names.is_empty() {
                cfg["allowedFunctionNames"] = json!(names);
            }
            json!({"functionCallingConfig": cfg})
        }
    }
}

fn conversation(p: P, tool_result: bool) -> (&'static str, Value) {
    let q = "What's the weather in Paris?";
    let result = r#"{"temp_c":18}"#;
    match (p, tool_result) {
        (P::Chat, false) => ("messages", json!([{"role": "user", "content": q}])),
        (P::Chat, true) => (
            "messages",
            json!([{"role": "user", "content": q},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": result}]),
        ),
        (P::Responses, false) => ("input", json!([{"role": "user", "content": q}])),
        (P::Responses, true) => (
            "input",
            json!([{"role": "user", "content": q},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": result}]),
        ),
        (P::Anthropic, false) => ("messages", json!([{"role": "user", "content": q}])),
        (P::Anthropic, true) => (
            "messages",
            json!([{"role": "user", "content": q},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]}]),
        ),
        (P::Gemini, false) => (
            "contents",
            json!([{"role": "user", "parts": [{"text": q}]}]),
        ),
        (P::Gemini, true) => (
            "contents",
            json!([{"role": "user", "parts": [{"text": q}]},
            // Signed as the model answered it: Gemini 3 refuses a call that lost its signature.
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}, "thoughtSignature": "CiQBsig"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp_c": 18}}}]}]),
        ),
    }
}

/// The request body for `p` (without transport details).
pub(crate) fn body(p: P, o: &Opts) -> Value {
    let (key, conv) = conversation(p, o.tool_result);
    let mut b = json!({});
    if p != P::Gemini {
        b["model"] = json!(model(p));
    }
    if p == P::Anthropic {
        b["max_tokens"] = json!(1024);
    }
    b[key] = conv;
    if !o.no_tools {
        b["tools"] = match p {
            P::Gemini => json!([{"functionDeclarations": tool_defs(p)}]),
            _ => Value::Array(tool_defs(p)),
        };
    }
    if let Some(c) = &o.choice {
        let k = if p == P::Gemini {
            "toolConfig"
        } else {
            "tool_choice"
        };
        b[k] = choice_json(p, c, o.parallel);
    }
    if let Some(par) = o.parallel
        && matches!(p, P::Chat | P::Responses)
    {
        b["parallel_tool_calls"] = json!(par);
    }
    if o.stream && p != P::Gemini {
        b["stream"] = json!(true);
    }
    b
}

pub(crate) fn model(p: P) -> &'static str {
    match p {
        P::Chat | P::Responses => "gpt-4.1",
        P::Anthropic => "claude-sonnet-4-5",
        P::Gemini => "gemini-3.8-flash",
    }
}

/// A keyed request carrying `body` to `p`'s endpoint (`stream` picks Gemini's SSE method).
pub(crate) fn request(p: P, body: &Value, stream: bool) -> SimRequest {
    match p {
        P::Chat => SimRequest::post("/v1/chat/completions", body)
            .with_header("authorization", "Bearer sk-test"),
        P::Responses => {
            SimRequest::post("/v1/responses", body).with_header("authorization", "Bearer sk-test")
        }
        P::Anthropic => {
            SimRequest::post("/v1/messages", body).with_header("x-api-key", "sk-ant-test")
        }
        P::Gemini if stream => SimRequest::post(
            "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
            body,
        )
        .with_header("x-goog-api-key", "AIza-test")
        .with_query("alt", "sse"),
        P::Gemini => SimRequest::post("/v1beta/models/gemini-3.8-flash:generateContent", body)
            .with_header("x-goog-api-key", "AIza-test"),
    }
}

/// Asserts the simulator answered `status`, showing `what` and the body when it did not.
pub(crate) fn assert_status(resp: &SimResponse, status: u16, what: impl std::fmt::Display) {
    assert_eq!(
        resp.status,
        status,
        "{what}: {}",
        String::from_utf8_lossy(&resp.body.bytes())
    );
}

pub(crate) fn ask(p: P, o: &Opts, scenario: &Scenario) -> (SimResponse, Got) {
    let resp = answer(&request(p, &body(p, o), o.stream), scenario);
    assert_status(&resp, 200, format!("{p:?} {o:?}"));
    let got = read(p, o.stream, &resp);
    (resp, got)
}

fn parse_args(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("arguments {s:?}: {e}"))
}

/// SSE `data:` payloads (LF or CRLF framing), `[DONE]` dropped.
pub(crate) fn sse_data(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|ev| ev.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("event {d:?}: {e}")))
        .collect()
}

pub(crate) fn read(p: P, stream: bool, resp: &SimResponse) -> Got {
    let mut g = Got::default();
    let events = if stream {
        sse_data(&resp.body.bytes())
    } else {
        vec![resp.json()]
    };
    for v in &events {
        match p {
            P::Chat => read_chat(stream, v, &mut g),
            P::Responses => read_responses(stream, v, &mut g),
            P::Anthropic => read_anthropic(stream, v, &mut g),
            P::Gemini => read_gemini(v, &mut g),
        }
    }
    if stream && p != P::Gemini {
        g.calls = g
            .calls
            .into_iter()
            .map(|(n, a)| (n, parse_args(a.as_str().unwrap_or(""))))
            .collect();
    }
    g
}

fn read_chat(stream: bool, v: &Value, g: &mut Got) {
    let Some(choice) = v["choices"].get(0) else {
        return;
    };
    if !stream {
        g.text = choice["message"]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        for c in choice["message"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            g.calls.push((
                c["function"]["name"].as_str().unwrap_or("").into(),
                parse_args(c["function"]["arguments"].as_str().unwrap_or("")),
            ));
        }
    } else {
        g.text
            .push_str(choice["delta"]["content"].as_str().unwrap_or(""));
        for c in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = c["index"].as_u64().unwrap_or(0) as usize;
            if let Some(name) = c["function"]["name"].as_str() {
                assert_eq!(i, g.calls.len(), "indices in order");
                g.calls.push((name.into(), json!("")));
            }
            let frag = c["function"]["arguments"].as_str().unwrap_or("");
            let acc = format!("{}{frag}", g.calls[i].1.as_str().unwrap_or(""));
            g.calls[i].1 = json!(acc);
        }
    }
    if let Some(f) = choice["finish_reason"].as_str() {
        g.finish = f.into();
    }
}

fn read_responses(stream: bool, v: &Value, g: &mut Got) {
    if !stream {
        for item in v["output"].as_array().into_iter().flatten() {
            match item["type"].as_str() {
                Some("function_call") => g.calls.push((
                    item["name"].as_str().unwrap_or("").into(),
                    parse_args(item["arguments"].as_str().unwrap_or("")),
                )),
                Some("message") => {
                    for part in item["content"].as_array().into_iter().flatten() {
                        g.text.push_str(part["text"].as_str().unwrap_or(""));
                    }
                }
                _ => {}
            }
        }
        g.finish = v["status"].as_str().unwrap_or("").into();
        return;
    }
    match v["type"].as_str() {
        Some("response.output_item.added") if v["item"]["type"] == "function_call" => {
            g.calls
                .push((v["item"]["name"].as_str().unwrap_or("").into(), json!("")));
        }
        Some("response.function_call_arguments.delta") => {
            let last = g.calls.last_mut().expect("delta after added");
            last.1 = json!(format!(
                "{}{}",
                last.1.as_str().unwrap_or(""),
                v["delta"].as_str().unwrap_or("")
            ));
        }
        Some("response.output_text.delta") => g.text.push_str(v["delta"].as_str().unwrap_or("")),
        Some("response.completed") => {
            g.finish = v["response"]["status"].as_str().unwrap_or("").into()
        }
        _ => {}
    }
}

fn read_anthropic(stream: bool, v: &Value, g: &mut Got) {
    if !stream {
        for b in v["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("tool_use") => g
                    .calls
                    .push((b["name"].as_str().unwrap_or("").into(), b["input"].clone())),
                Some("text") => g.text.push_str(b["text"].as_str().unwrap_or("")),
                _ => {}
            }
        }
        g.finish = v["stop_reason"].as_str().unwrap_or("").into();
        return;
    }
    match v["type"].as_str() {
        Some("content_block_start") if v["content_block"]["type"] == "tool_use" => {
            g.calls.push((
                v["content_block"]["name"].as_str().unwrap_or("").into(),
                json!(""),
            ));
        }
        Some("content_block_delta") => match v["delta"]["type"].as_str() {
            Some("text_delta") => g.text.push_str(v["delta"]["text"].as_str().unwrap_or("")),
            Some("input_json_delta") => {
                if let Some(last) = g.calls.last_mut() {
                    last.1 = json!(format!(
                        "{}{}",
                        last.1.as_str().unwrap_or(""),
                        v["delta"]["partial_json"].as_str().unwrap_or("")
                    ));
                }
            }
            _ => {}
        },
        Some("message_delta") => g.finish = v["delta"]["stop_reason"].as_str().unwrap_or("").into(),
        _ => {}
    }
}

fn read_gemini(v: &Value, g: &mut Got) {
    let c = &v["candidates"][0];
    for part in c["content"]["parts"].as_array().into_iter().flatten() {
        if let Some(t) = part["text"].as_str() {
            g.text.push_str(t);
        }
        if let Some(fc) = part.get("functionCall") {
            g.calls
                .push((fc["name"].as_str().unwrap_or("").into(), fc["args"].clone()));
        }
    }
    if let Some(f) = c["finishReason"].as_str() {
        g.finish = f.into();
    }
}
