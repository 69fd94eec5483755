//! `tooltape proxy` against the project's simulator as upstream: every inbound format × every
//! upstream, buffered and streamed, the client getting the upstream's tool calls; incremental
//! streaming; the seed behaviours; errors in the client's format.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use tooltape::{
    ChatRequest, HttpResponse, Message, Provider, Proxy, ProxyConfig, SimConfig, Simulator,
    StreamDecoder, StrictPolicy, Tool, ToolCall, ToolChoice, decode, encode,
};

const INBOUND: [Provider; 4] = [
    Provider::OpenaiChat,
    Provider::OpenaiResponses,
    Provider::Anthropic,
    Provider::Gemini,
];

pub(super) fn config(sim: &str, extra: &str) -> ProxyConfig {
    let mut toml = String::from("listen = \"127.0.0.1:0\"\nmax_body_bytes = 200000\n");
    for p in Provider::ALL {
        toml.push_str(&format!(
            "[[route]]\nmodel = \"to-{p}\"\nprovider = \"{p}\"\nbase_url = \"{sim}\"\nupstream_model = \"gpt-4o\"\nkey = \"sk-test\"\n"
        ));
    }
    toml.push_str(extra);
    ProxyConfig::parse(Path::new("proxy.toml"), &toml).unwrap()
}

pub(super) fn weather_request(model: &str, stream: bool) -> ChatRequest {
    ChatRequest::new(model)
        .with_user("What is the weather in Paris?")
        .with_tool(Tool { allowed_callers: Vec::new(), output_schema: None,
            name: "get_weather".into(),
            description: Some("Current weather for a city".into()),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            strict: None,
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
        })
        .with_choice(ToolChoice::Required)
        .with_stream(stream)
        .with_max_tokens(256)
        .with_strict(StrictPolicy::Auto)
}

fn tojson(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

pub(super) async fn post(base: &str, inbound: Provider, req: &ChatRequest) -> reqwest::Response {
    let enc = encode(inbound, req).unwrap().request;
    let url = format!("{base}{}", enc.path_and_query());
    reqwest::Client::new()
        .post(url)
        .body(tojson(&enc.body))
        .send()
        .await
        .unwrap()
}

async fn whole(resp: reqwest::Response) -> HttpResponse {
    let status = resp.status().as_u16();
    let headers: BTreeMap<String, String> = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    HttpResponse {
        status,
        headers,
        body: resp.bytes().await.unwrap().to_vec(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_inbound_format_reaches_every_upstream_with_its_tool_calls() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let mut failures = Vec::new();
    for inbound in INBOUND {
        for upstream in Provider::ALL {
            for stream in [false, true] {
                let req = weather_request(&format!("to-{upstream}"), stream);
                let resp = whole(post(&proxy.base_url(), inbound, &req).await).await;
                let route = format!("{inbound}->{upstream} stream={stream}");
                if resp.status != 200 {
                    failures.push(format!(
                        "{route}: status {} {}",
                        resp.status,
                        String::from_utf8_lossy(&resp.body)
                    ));
                    continue;
                }
                let o = decode(inbound, &req, &resp).unwrap();
                let names: Vec<&str> = o.tool_calls.iter().map(|c| c.name.as_str()).collect();
                if names != ["get_weather"] || !o.tool_calls[0].arguments["city"].is_string() {
                    failures.push(format!("{route}: calls {:?}", o.tool_calls));
                }
                if o.finish != tooltape::Finish::ToolCalls {
                    failures.push(format!(
                        "{route}: finish {:?} ({:?})",
                        o.finish, o.raw_finish
                    ));
                }
                if !o.diagnostics.is_empty() {
                    failures.push(format!("{route}: diagnostics {:?}", o.diagnostics));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} routes failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_tool_call_delta_arrives_before_upstream_finishes() {
    // 40 ms between upstream chunks: a proxy that waits for the end answers after all of them.
    let sim = Simulator::start(SimConfig {
        chunk_delay: Duration::from_millis(40),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    for inbound in [
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Anthropic,
    ] {
        let req = weather_request("to-openai-chat", true);
        let t0 = Instant::now();
        let resp = post(&proxy.base_url(), inbound, &req).await;
        let mut body = resp.bytes_stream();
        let mut decoder = StreamDecoder::new(inbound, &req);
        let mut first_call = None;
        while let Some(c) = body.next().await {
            decoder.push(&c.unwrap()).unwrap();
            if first_call.is_none() && !decoder.progress().calls.is_empty() {
                first_call = Some(t0.elapsed());
            }
        }
        let total = t0.elapsed();
        let first_call = first_call.expect("a tool call arrived");
        assert_eq!(decoder.finish().unwrap().tool_calls.len(), 1);
        assert!(
            first_call + Duration::from_millis(100) < total,
            "{inbound}: first tool-call delta at {first_call:?}, stream ended at {total:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_hosted_search_fails_closed_before_anything_is_sent() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    // gpt-5 takes only `auto` next to hosted tools: REQUIRED search cannot be guaranteed.
    let extra = format!(
        "[[route]]\nmodel = \"gpt5\"\nprovider = \"openai-responses\"\nbase_url = \"{}\"\nupstream_model = \"gpt-5\"\nkey = \"k\"\n",
        sim.base_url()
    );
    let proxy = Proxy::start(config(&sim.base_url(), &extra)).await.unwrap();
    let body = json!({"model": "gpt5", "input": "latest news", "tools": [{"type": "web_search"}], "tool_choice": "required"});
    let before = sim.requests_served();
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/responses", proxy.base_url()))
        .body(tojson(&body))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let refused = resp
        .headers()
        .get("x-tooltape-refused")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.text().await.unwrap();
    assert!((400..500).contains(&status), "{status} {text}");
    assert!(text.contains("GROUNDING_NOT_SUPPORTED: "), "{text}");
    assert_eq!(refused.as_deref(), Some("GROUNDING_NOT_SUPPORTED"));
    assert_eq!(sim.requests_served(), before, "nothing may reach upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_errors_are_answered_in_the_client_format() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let c = reqwest::Client::new();
    let base = proxy.base_url();
    // Missing or mistyped field: 400 naming it (the request decoder's pointer), in each
    // family's envelope.
    let r = c
        .post(format!("{base}/v1/chat/completions"))
        .body(tojson(&json!({"model": "to-openai-chat"})))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/messages: missing"),
        "{v}"
    );
    let r = c
        .post(format!("{base}/v1/messages"))
        .body(tojson(&json!({
            "model": "to-anthropic",
            "max_tokens": 64,
            "messages": [],
            "tools": [{"input_schema": {"type": "object"}}]
        })))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(v["type"], "error");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/tools/0/name: missing"),
        "{v}"
    );
    let r = c
        .post(format!("{base}/v1beta/models/to-gemini:generateContent"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{v}");
    // Too large: 413.
    let big = "x".repeat(300_000);
    let r = c
        .post(format!("{base}/v1/chat/completions"))
        .body(tojson(
            &json!({"model": "to-openai-chat", "messages": [{"role": "user", "content": big}]}),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    // Unknown alias: 404.
    let r = c
        .post(format!("{base}/v1/chat/completions"))
        .body(tojson(&json!({"model": "nope", "messages": []})))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_errors_keep_their_status_in_the_client_format() {
    let sim = Simulator::start(SimConfig {
        faults: (0..4)
            .map(|i| {
                tooltape::simulate::Fault::nth(
                    i,
                    tooltape::simulate::FaultKind::ServerError { status: 503 },
                )
            })
            .collect(),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    for inbound in INBOUND {
        let req = weather_request("to-anthropic", false);
        let resp = whole(post(&proxy.base_url(), inbound, &req).await).await;
        assert_eq!(
            resp.status,
            503,
            "{inbound}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        let o = decode(inbound, &req, &resp).unwrap();
        assert_eq!(o.error.map(|e| e.status), Some(503), "{inbound}");
    }
}

/// `n` streamed weather requests at once, through the inbound formats and upstreams in turn, each
/// on its own connection; what failed.
async fn concurrent_streams(base: &str, n: usize) -> Vec<String> {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let base = base.to_string();
            let inbound = INBOUND[i % 4];
            let upstream = Provider::ALL[i % 5];
            tokio::spawn(async move {
                let req = weather_request(&format!("to-{upstream}"), true);
                let resp = whole(post(&base, inbound, &req).await).await;
                let o = decode(inbound, &req, &resp).map_err(|e| e.to_string())?;
                if resp.status == 200 && o.tool_calls.len() == 1 {
                    Ok(())
                } else {
                    Err(format!(
                        "{inbound}->{upstream}: {} {:?}",
                        resp.status, o.tool_calls
                    ))
                }
            })
        })
        .collect();
    let mut errors = Vec::new();
    for t in tasks {
        if let Err(e) = t.await.unwrap() {
            errors.push(e);
        }
    }
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_streams_all_succeed() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let base = proxy.base_url();
    let t0 = Instant::now();
    let errors = concurrent_streams(&base, 200).await;
    assert!(
        errors.is_empty(),
        "{} of 200 failed: {:?}",
        errors.len(),
        errors.first()
    );
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "200 streams took {:?}",
        t0.elapsed()
    );
}

fn set_headers_chat(model: &str) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": "Set X-Trace on https://example.com"}],
        "tools": [{"type": "function", "function": {
            "name": "set_headers",
            "description": "Set HTTP headers; only X- headers are allowed.",
            "parameters": {"type": "object", "properties": {
                "url": {"type": "string"},
                "meta": {"type": "object", "patternProperties": {"^X-": {"type": "string"}},
                         "additionalProperties": false}},
                "required": ["url", "meta"]}
        }}],
        "tool_choice": "required"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_that_cannot_be_strict_follows_the_route_policy() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let extra = format!(
        "[[route]]\nmodel = \"strict-require\"\nprovider = \"openai-responses\"\nbase_url = \"{0}\"\nupstream_model = \"gpt-4o\"\nkey = \"k\"\nstrict = \"require\"\n\
         [[route]]\nmodel = \"strict-auto\"\nprovider = \"openai-responses\"\nbase_url = \"{0}\"\nupstream_model = \"gpt-4o\"\nkey = \"k\"\nstrict = \"auto\"\n",
        sim.base_url()
    );
    let proxy = Proxy::start(config(&sim.base_url(), &extra)).await.unwrap();
    let c = reqwest::Client::new();
    // `require`: fail closed, before anything is sent, naming the tool.
    let before = sim.requests_served();
    let r = c
        .post(format!("{}/v1/chat/completions", proxy.base_url()))
        .body(tojson(&set_headers_chat("strict-require")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert!(r.headers().get("x-tooltape-refused").is_some());
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("set_headers"), "{v}");
    assert_eq!(sim.requests_served(), before, "nothing may reach upstream");
    // `auto`: sent non-strict, the reason in `x-tooltape-notes`, the call comes back.
    let r = c
        .post(format!("{}/v1/chat/completions", proxy.base_url()))
        .body(tojson(&set_headers_chat("strict-auto")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let notes = r
        .headers()
        .get("x-tooltape-notes")
        .map(|v| v.to_str().unwrap().to_string())
        .expect("the non-strict reason is in x-tooltape-notes");
    assert!(notes.contains("set_headers"), "{notes}");
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "set_headers",
        "{v}"
    );
    assert_eq!(sim.requests_served(), before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosted_search_answers_carry_grounding_telemetry_headers() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let body = json!({"model": "to-openai-responses", "input": "latest news about Rust",
        "tools": [{"type": "web_search"}], "tool_choice": "auto"});
    let r = reqwest::Client::new()
        .post(format!("{}/v1/responses", proxy.base_url()))
        .body(tojson(&body))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let h = |n: &str| r.headers().get(n).map(|v| v.to_str().unwrap().to_string());
    let (attempted, effective, calls, results, tool_type) = (
        h("x-tooltape-grounding-attempted"),
        h("x-tooltape-grounded-effective"),
        h("x-tooltape-grounding-calls"),
        h("x-tooltape-grounding-results"),
        h("x-tooltape-hosted-tool-type"),
    );
    let text = r.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    assert_eq!(tool_type.as_deref(), Some("web_search"));
    assert_eq!(attempted.as_deref(), Some("true"));
    // The simulator's gpt-4o searches and cites: the answer is grounded.
    assert!(text.contains("Synthetic search result"), "{text}");
    assert_eq!(effective.as_deref(), Some("true"), "{text}");
    calls
        .expect("x-tooltape-grounding-calls")
        .parse::<usize>()
        .unwrap();
    results
        .expect("x-tooltape-grounding-results")
        .parse::<usize>()
        .unwrap();
    // A request without hosted tools carries none of them.
    let r = post(
        &proxy.base_url(),
        Provider::OpenaiResponses,
        &weather_request("to-openai-responses", false),
    )
    .await;
    assert!(r.headers().get("x-tooltape-grounding-attempted").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_to_the_text_protocol_parses_calls_unless_the_choice_is_none() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let mut outputs = Vec::new();
    for choice in [ToolChoice::Required, ToolChoice::None] {
        let mut req = weather_request("to-text-protocol", false);
        req.tool_choice = Some(choice.clone());
        let resp = whole(post(&proxy.base_url(), Provider::OpenaiResponses, &req).await).await;
        assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
        let v: Value = serde_json::from_slice(&resp.body).unwrap();
        let types: Vec<String> = v["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["type"].as_str().unwrap_or("").to_string())
            .collect();
        outputs.push((choice, types, v));
    }
    let (_, required, v) = &outputs[0];
    assert!(required.iter().any(|t| t == "function_call"), "{v}");
    let call = v["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap();
    assert_eq!(call["name"], "get_weather");
    let (_, none, v) = &outputs[1];
    assert!(
        !none.iter().any(|t| t == "function_call"),
        "`none` disables parsing: {v}"
    );
}

/// A streamed upstream that writes one SSE comment every 20 ms for ever and reports when its
/// writes start failing (the peer went away).
pub(super) async fn endless_upstream() -> (String, tokio::sync::oneshot::Receiver<usize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = s.read(&mut buf).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        s.write_all(head.as_bytes()).await.unwrap();
        let first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n";
        let chunk = |p: &str| format!("{:x}\r\n{p}\r\n", p.len());
        s.write_all(chunk(first).as_bytes()).await.unwrap();
        for n in 0..1000 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if s.write_all(chunk(": keep-alive\n\n").as_bytes())
                .await
                .is_err()
                || s.flush().await.is_err()
            {
                let _ = tx.send(n);
                return;
            }
        }
    });
    (url, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_cancels_the_upstream_request() {
    let (upstream, gone) = endless_upstream().await;
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let extra = format!(
        "[[route]]\nmodel = \"endless\"\nprovider = \"openai-chat\"\nbase_url = \"{upstream}\"\nkey = \"k\"\n"
    );
    let proxy = Proxy::start(config(&sim.base_url(), &extra)).await.unwrap();
    let mut req = weather_request("endless", true);
    req.tool_choice = None;
    let resp = post(&proxy.base_url(), Provider::OpenaiChat, &req).await;
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    assert!(!first.is_empty());
    drop(body); // the client goes away mid-stream
    let t0 = Instant::now();
    let writes = tokio::time::timeout(Duration::from_secs(5), gone)
        .await
        .expect("the upstream connection was closed within 5 s of the client leaving")
        .unwrap();
    assert!(writes < 1000, "{writes}");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

/// The `openai` Python SDK's streams through the proxy (interpreter from `TOOLTAPE_PYTHON`,
/// default `python3`): `chat.completions` and `responses`, each to a cross-format upstream.
const SDK_SCRIPT: &str = r#"
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1] + "/v1", api_key="sk-test", max_retries=0)
tools_chat = [{"type": "function", "function": {"name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
calls = {}
stream = client.chat.completions.create(model="to-anthropic", stream=True, tool_choice="required",
    tools=tools_chat, messages=[{"role": "user", "content": "What is the weather in Paris?"}])
for chunk in stream:
    for choice in chunk.choices:
        for tc in choice.delta.tool_calls or []:
            c = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function and tc.function.name: c["name"] += tc.function.name
            if tc.function and tc.function.arguments: c["arguments"] += tc.function.arguments
chat = [calls[k] for k in sorted(calls)]
tools_resp = [{"type": "function", "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
resp = []
with client.responses.stream(model="to-gemini", tool_choice="required", tools=tools_resp,
        input="What is the weather in Paris?") as s:
    for event in s:
        if event.type == "response.output_item.done" and event.item.type == "function_call":
            resp.append({"name": event.item.name, "arguments": event.item.arguments})
    final = s.get_final_response()
final_calls = [{"name": i.name, "arguments": i.arguments} for i in final.output if i.type == "function_call"]
print(json.dumps({"chat": chat, "responses": resp, "responses_final": final_calls}))
"#;

/// What the simulator itself answers `upstream` for the weather request: (name, arguments).
async fn direct_calls(sim: &str, upstream: Provider) -> Vec<(String, Value)> {
    let req = weather_request("gpt-4o", false);
    let enc = encode(upstream, &req).unwrap().request;
    let resp = reqwest::Client::new()
        .post(format!("{sim}{}", enc.path_and_query()))
        .header("authorization", "Bearer sk-test")
        .header("x-api-key", "sk-test")
        .header("x-goog-api-key", "sk-test")
        .body(tojson(&enc.body))
        .send()
        .await
        .unwrap();
    let o = decode(upstream, &req, &whole(resp).await).unwrap();
    o.tool_calls
        .into_iter()
        .map(|c| (c.name, c.arguments))
        .collect()
}

fn sdk_calls(v: &Value) -> Vec<(String, Value)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let args = c["arguments"].as_str().unwrap();
            (
                c["name"].as_str().unwrap().to_string(),
                serde_json::from_str(args).unwrap_or_else(|e| panic!("{args}: {e}")),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_sdk_streams_tool_calls_through_the_proxy() {
    let Some(python) = crate::python::python_with("openai") else {
        return;
    };
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let base = proxy.base_url();
    let v = crate::python::run_json(python, SDK_SCRIPT, vec![base]).await;
    let from_anthropic = direct_calls(&sim.base_url(), Provider::Anthropic).await;
    let from_gemini = direct_calls(&sim.base_url(), Provider::Gemini).await;
    assert!(!from_anthropic.is_empty() && !from_gemini.is_empty());
    assert_eq!(sdk_calls(&v["chat"]), from_anthropic, "{v}");
    assert_eq!(sdk_calls(&v["responses"]), from_gemini, "{v}");
    assert_eq!(sdk_calls(&v["responses_final"]), from_gemini, "{v}");
}

/// A Responses upstream whose model rejects the `web_search` tool type (OpenAI's message) and
/// passes every other request to the simulator; counts the requests per hosted tool type.
async fn search_rejecting_upstream(
    sim: String,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    tokio::spawn(async move {
        let client = tooltape::run::client(Duration::from_secs(10));
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let mut buf = Vec::new();
            let mut chunk = vec![0u8; 65536];
            let (head_end, len) = loop {
                let n = s.read(&mut chunk).await.unwrap();
                buf.extend_from_slice(&chunk[..n]);
                if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    break (i + 4, len);
                }
            };
            while buf.len() < head_end + len {
                let n = s.read(&mut chunk).await.unwrap();
                buf.extend_from_slice(&chunk[..n]);
            }
            let body: Value = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap();
            let ty = body["tools"][0]["type"].as_str().unwrap_or("").to_string();
            log.lock().unwrap().push(ty.clone());
            let (status, answer) = if ty == "web_search" {
                let msg = format!(
                    "Hosted tool 'web_search' is not supported with model '{}'.",
                    body["model"].as_str().unwrap_or("")
                );
                (
                    400,
                    tojson(
                        &json!({"error": {"message": msg, "type": "invalid_request_error", "param": "tools", "code": null}}),
                    ),
                )
            } else {
                let r = client
                    .post(format!("{sim}/v1/responses"))
                    .header("authorization", "Bearer sk-test")
                    .body(tojson(&body))
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), r.bytes().await.unwrap().to_vec())
            };
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                answer.len()
            );
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(&answer).await;
            let _ = s.shutdown().await;
        }
    });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_variant_fallback_is_cached_across_requests() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let (upstream, seen) = search_rejecting_upstream(sim.base_url()).await;
    let extra = format!(
        "[[route]]\nmodel = \"preview-only\"\nprovider = \"openai-responses\"\nbase_url = \"{upstream}\"\nupstream_model = \"gpt-4o\"\nkey = \"k\"\n"
    );
    let proxy = Proxy::start(config(&sim.base_url(), &extra)).await.unwrap();
    let body = json!({"model": "preview-only", "input": "latest news about Rust",
        "tools": [{"type": "web_search"}], "tool_choice": "auto"});
    for round in 0..2 {
        let r = reqwest::Client::new()
            .post(format!("{}/v1/responses", proxy.base_url()))
            .body(tojson(&body))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let tool_type = r
            .headers()
            .get("x-tooltape-hosted-tool-type")
            .map(|v| v.to_str().unwrap().to_string());
        let text = r.text().await.unwrap();
        assert_eq!(status, 200, "round {round}: {text}");
        assert_eq!(
            tool_type.as_deref(),
            Some("web_search_preview"),
            "round {round}"
        );
    }
    // First request: `web_search` refused, then `web_search_preview`; the second request goes
    // straight to the preview variant (the process's support cache).
    assert_eq!(
        *seen.lock().unwrap(),
        ["web_search", "web_search_preview", "web_search_preview"]
    );
}

/// A follow-up answering the model's `get_weather` call (`call_1`) under `result_id`.
fn follow_up(model: &str, result_id: &str) -> ChatRequest {
    let mut req = weather_request(model, false);
    req.tool_choice = Some(ToolChoice::Auto);
    req.messages.push(Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![ToolCall {
            caller: None,
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: json!({"city": "Paris"}),
            thought_signature: None,
            namespace: None,
        }],
        opaque: vec![],
    });
    req.messages.push(Message::Tool {
        call_id: result_id.into(),
        name: "get_weather".into(),
        content: "{\"temp_c\": 18}".into(),
        is_error: false,
        parts: Vec::new(),
    });
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_its_own_api_rejects_is_refused_in_its_words_before_upstream() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let mut failures = Vec::new();
    // Formats that link results by id: a result for an id no call had is that API's 400.
    let wording = [
        (
            Provider::OpenaiChat,
            "'tool_call_id' of 'call_unknown' not found in 'tool_calls'",
        ),
        (
            Provider::OpenaiResponses,
            "No tool call found for function call output with call_id call_unknown",
        ),
        (
            Provider::Anthropic,
            "unexpected `tool_use_id` found in `tool_result` blocks: call_unknown",
        ),
    ];
    let mut cases: Vec<(Provider, ChatRequest, &str, &str)> = Vec::new();
    for (inbound, words) in wording {
        for upstream in Provider::ALL {
            cases.push((
                inbound,
                follow_up(&format!("to-{upstream}"), "call_unknown"),
                words,
                "unknown id",
            ));
        }
    }
    // A tool whose parameters are a bare array: OpenAI's and Gemini's 400 on every route, even
    // where the upstream would take it (the text protocol's prose).
    for (inbound, words) in [
        (
            Provider::OpenaiChat,
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'",
        ),
        (Provider::Gemini, "the schema must describe an object"),
    ] {
        for upstream in Provider::ALL {
            let mut req = weather_request(&format!("to-{upstream}"), false);
            req.strict = StrictPolicy::Off;
            req.tools[0].parameters = json!({"type": "array", "items": {"type": "string"}});
            cases.push((inbound, req, words, "array schema"));
        }
    }
    for (inbound, req, words, what) in cases {
        let before = sim.requests_served();
        let resp = whole(post(&proxy.base_url(), inbound, &req).await).await;
        let route = format!("{what}: {inbound}->{}", req.model);
        if sim.requests_served() != before {
            failures.push(format!("{route}: sent upstream"));
        }
        if resp.status != 400
            || resp.headers.get("x-tooltape-refused").map(String::as_str) != Some("CLIENT_REQUEST")
        {
            failures.push(format!(
                "{route}: {} {:?}",
                resp.status,
                resp.headers.get("x-tooltape-refused")
            ));
            continue;
        }
        match decode(inbound, &req, &resp).map(|o| o.error) {
            Ok(Some(e)) if e.status == 400 && e.message.contains(words) => {}
            other => failures.push(format!("{route}: {other:?}")),
        }
        // Chat Completions names the field in `param`.
        if inbound == Provider::OpenaiChat && what == "unknown id" {
            let v: Value = serde_json::from_slice(&resp.body).unwrap();
            if v["error"]["param"] != "messages.[2].tool_call_id" {
                failures.push(format!("{route}: param {}", v["error"]["param"]));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_result_under_an_unknown_id_is_linked_by_name_on_every_route() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let mut failures = Vec::new();
    for upstream in Provider::ALL {
        let req = follow_up(&format!("to-{upstream}"), "call_unknown");
        let before = sim.requests_served();
        let resp = whole(post(&proxy.base_url(), Provider::Gemini, &req).await).await;
        let route = format!("gemini->{upstream}");
        if resp.status != 200 || sim.requests_served() != before + 1 {
            failures.push(format!(
                "{route}: {} {}",
                resp.status,
                String::from_utf8_lossy(&resp.body)
            ));
            continue;
        }
        match decode(Provider::Gemini, &req, &resp) {
            Ok(o) if o.error.is_none() => {}
            other => failures.push(format!("{route}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Request shapes beyond the project's own encoders (docs/wire-formats.md) through the proxy:
/// a Mistral-dialect Chat request, a legacy `functions` request, an Anthropic request with a
/// system message mid-conversation; a misplaced one gets the Messages API's 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialects_and_wider_request_shapes_are_proxied() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let c = reqwest::Client::new();
    let base = proxy.base_url();
    let params =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let chat = [
        json!({"model": "to-anthropic", "safe_prompt": false, "tool_choice": "any",
            "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": params}}]}),
        json!({"model": "to-gemini", "function_call": {"name": "get_weather"},
            "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "functions": [{"name": "get_weather", "parameters": params}]}),
    ];
    for body in chat {
        let r = c
            .post(format!("{base}/v1/chat/completions"))
            .body(tojson(&body))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(status, 200, "{v}");
        assert_eq!(
            v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather",
            "{v}"
        );
    }
    let messages = |system_at_end: bool| {
        let mut m = vec![json!({"role": "user", "content": "What is the weather in Paris?"})];
        let sys = json!({"role": "system", "content": "Answer with a tool call."});
        if system_at_end {
            m.push(sys);
        } else {
            m.insert(0, sys);
        }
        json!({"model": "to-openai-chat", "max_tokens": 64, "messages": m,
            "tools": [{"name": "get_weather", "input_schema": params}],
            "tool_choice": {"type": "any"}})
    };
    let r = c
        .post(format!("{base}/v1/messages"))
        .body(tojson(&messages(true)))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["content"][0]["name"], "get_weather", "{v}");
    let r = c
        .post(format!("{base}/v1/messages"))
        .body(tojson(&messages(false)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(v["type"], "error", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages.0: a system message cannot be the first"),
        "{v}"
    );
}

/// A tool result with an image, from a Messages client, to a target whose tool messages take
/// text only (Chat, the text protocol): a 400 in the client's envelope naming the part, nothing
/// sent; to a target that takes images (Responses, Gemini), the image goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_part_the_target_cannot_express_is_refused_in_the_client_s_format() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start(config(&sim.base_url(), "")).await.unwrap();
    let round = |model: &str| {
        weather_request(model, false)
            .with_choice(ToolChoice::Auto)
            .with_messages([
                Message::Assistant {
                    phase: None,
                    text: None,
                    tool_calls: vec![ToolCall {
                        caller: None,
                        id: "toolu_1".into(),
                        name: "get_weather".into(),
                        arguments: json!({"city": "Oslo"}),
                        thought_signature: None,
                        namespace: None,
                    }],
                    opaque: Vec::new(),
                },
                Message::Tool {
                    call_id: "toolu_1".into(),
                    name: "get_weather".into(),
                    content: "Oslo radar".into(),
                    parts: vec![
                        tooltape::model::ResultPart::Text {
                            text: "Oslo radar".into(),
                        },
                        tooltape::model::ResultPart::Image {
                            media_type: "image/png".into(),
                            data: "iVBORw0KGgo=".into(),
                        },
                    ],
                    is_error: false,
                },
            ])
    };
    for target in [Provider::OpenaiChat, Provider::TextProtocol] {
        let before = sim.requests_served();
        let r = post(
            &proxy.base_url(),
            Provider::Anthropic,
            &round(&format!("to-{target}")),
        )
        .await;
        assert_eq!(r.status().as_u16(), 400, "{target}");
        let refused = r.headers().get("x-tooltape-refused").cloned();
        assert_eq!(refused.unwrap(), "RESULT_PART_NOT_SUPPORTED");
        let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(v["type"], "error", "the Messages envelope: {v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("an image (base64)"), "{v}");
        assert_eq!(sim.requests_served(), before, "nothing may reach upstream");
    }
    for target in [Provider::OpenaiResponses, Provider::Gemini] {
        let r = post(
            &proxy.base_url(),
            Provider::Anthropic,
            &round(&format!("to-{target}")),
        )
        .await;
        assert_eq!(r.status().as_u16(), 200, "{target}");
    }
}

/// A fresh connection (a new client) each time: the kernel picks the worker that accepts it.
async fn post_fresh(base: &str, path: &str, body: &Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_share_one_port_and_the_kept_conversations_and_stop_when_dropped() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let proxy = Proxy::start_workers(config(&sim.base_url(), ""), 3)
        .await
        .unwrap();
    let base = proxy.base_url();
    // Streams on 60 connections, spread by the kernel over the three workers.
    let errors = concurrent_streams(&base, 60).await;
    assert!(
        errors.is_empty(),
        "{} of 60 failed: {errors:?}",
        errors.len()
    );
    // A Responses conversation kept by the worker that answered it is continued on twelve
    // other connections, whichever worker takes each.
    let tool = json!({"type": "function", "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}});
    let first = json!({"model": "to-anthropic", "input": "What is the weather in Paris?",
        "tools": [tool], "tool_choice": "required"});
    let (status, answer) = post_fresh(&base, "/v1/responses", &first).await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["id"].as_str().unwrap().to_string();
    let call = answer["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap_or_else(|| panic!("a call: {answer}"));
    let next = json!({"model": "to-anthropic", "previous_response_id": id, "tools": [tool],
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}]});
    for round in 0..12 {
        let (status, answer) = post_fresh(&base, "/v1/responses", &next).await;
        assert_eq!(status, 200, "continuation {round}: {answer}");
    }
    // Dropped: every worker stops listening.
    let addr = base.trim_start_matches("http://").to_string();
    drop(proxy);
    let t0 = Instant::now();
    while tokio::net::TcpStream::connect(&addr).await.is_ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "a worker still listens on {addr} after the proxy was dropped"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(unix)]
#[tokio::test]
async fn workers_on_a_port_another_listener_shares_are_refused() {
    // Another process's listener that allows sharing the port (SO_REUSEPORT): a plain bind is
    // refused there, and so are the workers, instead of splitting its connections.
    let other = tokio::net::TcpSocket::new_v4().unwrap();
    other.set_reuseport(true).unwrap();
    other.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = other.local_addr().unwrap().port();
    let _held = other.listen(16).unwrap();
    let mut cfg = config("http://127.0.0.1:9", "");
    cfg.listen = format!("127.0.0.1:{port}").parse().unwrap();
    let e = Proxy::start_workers(cfg, 2).await.err().expect("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
}
