//! Server tests over loopback with reqwest: streamed chunks, the scenario header, every fault
//! mode, latency, request counting and shutdown on drop.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::{Opts, P, body};
use crate::simulate::{
    Fault, FaultKind, SCENARIO_HEADER, SIMULATOR_HEADER, SimConfig, Simulator, VERSION, When,
};

fn client() -> reqwest::Client {
    // reqwest is built without a default TLS provider; plain http needs none, but the builder
    // still wants one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn chat(stream: bool) -> String {
    body(
        P::Chat,
        &Opts {
            stream,
            ..Opts::default()
        },
    )
    .to_string()
}

async fn post(sim: &Simulator, path: &str, body: String) -> reqwest::Response {
    client()
        .post(format!("{}{path}", sim.base_url()))
        .header("authorization", "Bearer sk-test")
        .header("x-goog-api-key", "AIza-test")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("loopback request")
}

/// A simulator that applies `faults` and is otherwise the default one.
async fn with_faults(faults: Vec<Fault>) -> Simulator {
    Simulator::start(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await
    .expect("start")
}

/// A 429 asking to retry after `retry_after_secs` seconds (and 1500 ms where ms are said).
fn rate_limited(retry_after_secs: u64) -> FaultKind {
    FaultKind::RateLimited {
        retry_after_secs,
        retry_after_ms: Some(1500),
    }
}

/// A whole answer's JSON body.
async fn json(resp: reqwest::Response) -> Value {
    serde_json::from_slice(&resp.bytes().await.expect("body")).expect("json")
}

#[tokio::test]
async fn a_streamed_answer_arrives_in_several_chunks() {
    let config = SimConfig {
        chunk_delay: Duration::from_millis(5),
        ..SimConfig::default()
    };
    let sim = Simulator::start(config).await.expect("start");
    assert!(sim.base_url().starts_with("http://127.0.0.1:"));
    let mut resp = post(&sim, "/v1/chat/completions", chat(true)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()[SIMULATOR_HEADER], VERSION);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap_or("")
            .starts_with("text/event-stream")
    );
    let mut chunks = Vec::new();
    while let Some(c) = resp.chunk().await.expect("chunk") {
        chunks.push(c);
    }
    assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    assert!(chunks.concat().ends_with(b"data: [DONE]\n\n"));
    assert_eq!(sim.requests_served(), 1);
}

#[tokio::test]
async fn buffered_answers_honour_the_scenario_header() {
    let sim = Simulator::start(SimConfig::default()).await.expect("start");
    let resp = client()
        .post(format!("{}/v1/chat/completions", sim.base_url()))
        .header("authorization", "Bearer k")
        .header(
            SCENARIO_HEADER,
            r#"{"text":"Plain answer.","prefer_text":true}"#,
        )
        .body(chat(false))
        .send()
        .await
        .expect("send");
    let v = json(resp).await;
    assert_eq!(v["choices"][0]["message"]["content"], "Plain answer.");
    let bad = client()
        .post(format!("{}/v1/chat/completions", sim.base_url()))
        .header("authorization", "Bearer k")
        .header(SCENARIO_HEADER, "{nope")
        .body(chat(false))
        .send()
        .await
        .expect("send");
    assert_eq!(bad.status(), 400);
    assert_eq!(sim.requests_served(), 2);
}

#[tokio::test]
async fn the_first_two_requests_are_rate_limited_then_it_succeeds() {
    let limited = rate_limited(2);
    let sim = with_faults(vec![Fault::first(2, limited)]).await;
    for _ in 0..2 {
        let resp = post(&sim, "/v1/chat/completions", chat(false)).await;
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "2");
        assert_eq!(resp.headers()["retry-after-ms"], "1500");
        assert_eq!(resp.headers()[SIMULATOR_HEADER], VERSION);
        let v = json(resp).await;
        assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    }
    assert_eq!(
        post(&sim, "/v1/chat/completions", chat(false))
            .await
            .status(),
        200
    );
    assert_eq!(sim.requests_served(), 3);
}

#[tokio::test]
async fn gemini_rate_limits_carry_retry_info_in_the_body() {
    let limited = rate_limited(1);
    let sim = with_faults(vec![Fault::always(limited)]).await;
    let b = body(P::Gemini, &Opts::default()).to_string();
    let resp = post(&sim, "/v1beta/models/gemini-3.8-flash:generateContent", b).await;
    assert_eq!(resp.status(), 429);
    let v = json(resp).await;
    assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED");
    let delay = v["error"]["details"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|d| d["retryDelay"].as_str());
    assert_eq!(delay, Some("1.5s"));
}

#[tokio::test]
async fn server_errors_and_malformed_json() {
    let faults = vec![
        Fault {
            when: When::Nth(0),
            kind: FaultKind::ServerError { status: 503 },
        },
        Fault::nth(1, FaultKind::MalformedJson),
    ];
    let sim = with_faults(faults).await;
    let resp = post(&sim, "/v1/chat/completions", chat(false)).await;
    assert_eq!(resp.status(), 503);
    let v = json(resp).await;
    assert_eq!(v["error"]["type"], "server_error");
    let resp = post(&sim, "/v1/chat/completions", chat(false)).await;
    assert_eq!(resp.status(), 200);
    let bytes = resp.bytes().await.expect("body");
    assert!(!bytes.is_empty() && serde_json::from_slice::<Value>(&bytes).is_err());
}

#[tokio::test]
async fn a_dropped_stream_gives_the_client_an_error_after_some_data() {
    let config = SimConfig {
        faults: vec![Fault::always(FaultKind::DropMidStream)],
        chunk_delay: Duration::from_millis(2),
        ..SimConfig::default()
    };
    let sim = Simulator::start(config).await.expect("start");
    let mut resp = post(&sim, "/v1/chat/completions", chat(true)).await;
    assert_eq!(resp.status(), 200);
    let mut received = 0;
    let outcome = loop {
        match resp.chunk().await {
            Ok(Some(c)) => received += c.len(),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    assert!(outcome.is_err(), "the body must end in an error");
    assert!(received > 0, "part of the stream was sent first");
    let buffered = post(&sim, "/v1/chat/completions", chat(false)).await;
    assert!(
        buffered.bytes().await.is_err(),
        "buffered bodies are cut too"
    );
}

#[tokio::test]
async fn latency_and_slow_faults_delay_the_answer() {
    let config = SimConfig {
        latency: Duration::from_millis(30),
        faults: vec![Fault::nth(1, FaultKind::Slow(Duration::from_millis(120)))],
        ..SimConfig::default()
    };
    let sim = Simulator::start(config).await.expect("start");
    let took = answered_in(&sim).await;
    assert!(took >= Duration::from_millis(30), "{took:?}");
    let took = answered_in(&sim).await;
    assert!(took >= Duration::from_millis(150), "{took:?}");
}

/// How long a buffered Chat request took to be answered, checked to be a 200.
async fn answered_in(sim: &Simulator) -> Duration {
    let t = Instant::now();
    let status = post(sim, "/v1/chat/completions", chat(false))
        .await
        .status();
    let took = t.elapsed();
    assert_eq!(status, 200);
    took
}

#[tokio::test]
async fn dropping_the_simulator_stops_it() {
    let sim = Simulator::start(SimConfig::default()).await.expect("start");
    let url = sim.base_url();
    assert_eq!(
        post(&sim, "/v1/chat/completions", chat(false))
            .await
            .status(),
        200
    );
    drop(sim);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let after = fresh
        .post(format!("{url}/v1/chat/completions"))
        .body(chat(false))
        .send()
        .await;
    assert!(after.is_err(), "nothing listens after drop");
}

#[test]
fn fault_rules_select_requests() {
    assert!(When::FirstN(2).matches(1) && !When::FirstN(2).matches(2));
    assert!(
        When::EveryNth(3).matches(2)
            && When::EveryNth(3).matches(5)
            && !When::EveryNth(3).matches(3)
    );
    assert!(!When::EveryNth(0).matches(0));
    assert!(When::From(4).matches(9) && !When::From(4).matches(3));
    let faults = [
        Fault::nth(1, FaultKind::MalformedJson),
        Fault::always(FaultKind::DropMidStream),
    ];
    assert_eq!(
        crate::simulate::faults::select(&faults, 1),
        Some(&FaultKind::MalformedJson)
    );
    assert_eq!(
        crate::simulate::faults::select(&faults, 0),
        Some(&FaultKind::DropMidStream)
    );
}
