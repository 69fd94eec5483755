//! `tooltape proxy` against hostile clients on loopback, with small limits so that the test is
//! bounded: hundreds of idle connections, headers and bodies never finished, a huge declared
//! length, deep nesting, invalid UTF-8, a client leaving mid-stream, connections over the cap —
//! while a well-formed request is still answered at once and every limit's answer is in the
//! client's own error envelope.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tooltape::{Provider, Proxy, ProxyConfig, SimConfig, Simulator};

use super::proxy::{config, endless_upstream, post, weather_request};

const LIMITS: &str =
    "header_timeout_ms = 400\nbody_timeout_ms = 400\nidle_timeout_ms = 600\nmax_json_depth = 32\n";

fn hostile_config(sim: &str, extra: &str) -> ProxyConfig {
    let extra = format!("{LIMITS}{extra}");
    // The limits are top-level keys: they go before the first [[route]] table.
    let mut cfg = config(sim, "");
    let parsed = ProxyConfig::parse(std::path::Path::new("limits.toml"), &extra).unwrap();
    cfg.header_timeout_ms = parsed.header_timeout_ms;
    cfg.body_timeout_ms = parsed.body_timeout_ms;
    cfg.idle_timeout_ms = parsed.idle_timeout_ms;
    cfg.max_json_depth = parsed.max_json_depth;
    cfg.max_connections = parsed.max_connections;
    cfg.routes.extend(parsed.routes);
    cfg
}

fn addr(proxy: &Proxy) -> String {
    proxy.base_url().trim_start_matches("http://").to_string()
}

async fn connect(proxy: &Proxy, head: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr(proxy)).await.unwrap();
    s.write_all(head).await.unwrap();
    s
}

/// What the peer wrote until it closed the connection, or `None` if it was still open after `wait`.
async fn until_closed(s: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    let (out, closed) = read_for(s, wait).await;
    closed.then_some(out)
}

/// What the peer wrote within `wait`, and whether it closed the connection.
async fn read_for(s: &mut TcpStream, wait: Duration) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let read = tokio::time::timeout(wait, async {
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    (out, read.is_ok())
}

/// One request written whole on its own connection; the status and the JSON body answered.
async fn raw_request(proxy: &Proxy, path: &str, body: &[u8]) -> (u16, Value) {
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let mut s = connect(proxy, head.as_bytes()).await;
    s.write_all(body).await.unwrap();
    let answer = until_closed(&mut s, Duration::from_secs(5)).await.unwrap();
    parse_answer(&answer)
}

fn parse_answer(answer: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(answer);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// A well-formed streamed request through the proxy: its time, and that it got its tool call.
async fn normal_request(proxy: &Proxy) -> Duration {
    let t0 = Instant::now();
    let req = weather_request("to-openai-chat", false);
    let resp = post(&proxy.base_url(), Provider::OpenaiChat, &req).await;
    assert_eq!(resp.status().as_u16(), 200);
    let v: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather",
        "{v}"
    );
    t0.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_clients_do_not_stop_a_well_formed_request() {
    let (upstream, gone) = endless_upstream().await;
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let endless = format!(
        "[[route]]\nmodel = \"endless\"\nprovider = \"openai-chat\"\nbase_url = \"{upstream}\"\nkey = \"k\"\n"
    );
    let proxy = Proxy::start(hostile_config(&sim.base_url(), &endless))
        .await
        .unwrap();
    let baseline = normal_request(&proxy).await;

    // 300 idle connections, a head never finished, a body never finished.
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(addr(&proxy)).await.unwrap());
    }
    let mut slow_head = connect(&proxy, b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n").await;
    let head = "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"model\"";
    let mut slow_body = connect(&proxy, head.as_bytes()).await;
    // A client that leaves mid-stream.
    let mut req = weather_request("endless", true);
    req.tool_choice = None;
    let resp = post(&proxy.base_url(), Provider::OpenaiChat, &req).await;
    let mut stream = resp.bytes_stream();
    assert!(!stream.next().await.unwrap().unwrap().is_empty());

    // With all of that held, a well-formed request is answered as before.
    let held = normal_request(&proxy).await;
    assert!(
        held < baseline + Duration::from_secs(1),
        "{held:?} vs {baseline:?}"
    );
    drop(stream);
    let writes = tokio::time::timeout(Duration::from_secs(5), gone)
        .await
        .expect("the upstream connection was closed after the client left")
        .unwrap();
    assert!(writes < 1000);

    // Declared too large: 413 at once, in the Chat envelope, nothing read.
    let head =
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000000000\r\n\r\n";
    let mut huge = connect(&proxy, head.as_bytes()).await;
    let (answer, closed) = read_for(&mut huge, Duration::from_secs(2)).await;
    assert!(closed, "{}", String::from_utf8_lossy(&answer));
    let (status, v) = parse_answer(&answer);
    assert_eq!(status, 413, "{}", String::from_utf8_lossy(&answer));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("max_body_bytes"),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    // Deeper than max_json_depth: 400 in the Messages envelope; Gemini's for invalid UTF-8.
    let deep = format!(
        "{{\"model\":\"to-anthropic\",\"max_tokens\":1,\"messages\":[],\"metadata\":{}{}}}",
        "[".repeat(40),
        "]".repeat(40)
    );
    let (status, v) = raw_request(&proxy, "/v1/messages", deep.as_bytes()).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["type"], "error", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deeper than 32"),
        "{v}"
    );
    let bad = b"{\"contents\":[{\"parts\":[{\"text\":\"caf\xe9\"}]}]}";
    let (status, v) = raw_request(&proxy, "/v1beta/models/to-gemini:generateContent", bad).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("UTF-8 (at byte 35)"),
        "{v}"
    );

    // The body never finished: 408 in the Messages envelope; the head never finished: closed.
    let answer = until_closed(&mut slow_body, Duration::from_secs(3))
        .await
        .unwrap();
    let (status, v) = parse_answer(&answer);
    assert_eq!(status, 408, "{}", String::from_utf8_lossy(&answer));
    assert_eq!(v["type"], "error", "{v}");
    assert!(
        until_closed(&mut slow_head, Duration::from_secs(3))
            .await
            .is_some()
    );
    // The idle connections are closed: hyper's header timeout runs while a connection waits
    // for a request's head, so it closes them first here (header 400 ms < idle 600 ms).
    for s in &mut idle {
        assert!(until_closed(s, Duration::from_secs(3)).await.is_some());
    }
    let after = normal_request(&proxy).await;
    assert!(after < baseline + Duration::from_secs(1), "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_get_503_and_silent_ones_are_closed() {
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let mut cfg = hostile_config(&sim.base_url(), "max_connections = 20\n");
    // The idle timeout alone (the header timeout would close a silent connection too).
    cfg.header_timeout_ms = 60_000;
    let proxy = Proxy::start(cfg).await.unwrap();
    let t0 = Instant::now();
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(TcpStream::connect(addr(&proxy)).await.unwrap());
    }
    // Let the accept loop take all twenty before the next one.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut over = TcpStream::connect(addr(&proxy)).await.unwrap();
    let answer = until_closed(&mut over, Duration::from_secs(2))
        .await
        .unwrap();
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 503"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    // Silent, no request in flight: closed after idle_timeout_ms (600), not before.
    for s in &mut held {
        assert!(until_closed(s, Duration::from_secs(3)).await.is_some());
    }
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_millis(600), "{waited:?}");
    normal_request(&proxy).await;
}

#[test]
fn limits_out_of_range_are_refused_with_their_key() {
    for (toml, want) in [
        (
            "max_json_depth = 500\n",
            "max_json_depth = 500: it must be between 1 and 128",
        ),
        (
            "max_connections = 0\n",
            "max_connections = 0: it must be at least 1",
        ),
        (
            "body_timeout_ms = 0\n",
            "body_timeout_ms = 0: it must be at least 1",
        ),
    ] {
        let e = ProxyConfig::parse(std::path::Path::new("p.toml"), toml).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("p.toml:1:1: ") && text.contains(want),
            "{text}"
        );
    }
}
