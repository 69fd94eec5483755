//! `tooltape gateway compare`: added latency is paired per request (a loopback proxy that sleeps
//! before answering one case's requests shows at least that sleep on exactly those requests, and
//! the others stay below them), the streamed first tool-call delta includes the sleep, and the
//! Markdown region rewrite keeps everything outside its markers byte-identical or refuses.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, Response};
use tooltape::{
    discover, gateway::COMPARE_BEGIN, gateway::COMPARE_END, gateway::GatewayRun,
    gateway::compare_row, gateway::percentile, runtime,
};

use crate::loopback_proxy::{ProxyBody, read, respond, send, serve};
use crate::scratch::{Scratch, bin, repo};

/// What the proxy adds to every request of the delayed case.
const DELAY: Duration = Duration::from_millis(150);
/// The delayed case's prompt (`cases/weather.toml`); `parallel` is not delayed.
const DELAYED: &str = "weather in Paris right now";

const PROFILE: &str = r#"description = "a loopback proxy written in the tests (sleeps before answering one case)"
concurrency = 4

[[routes]]
inbound = "chat"
upstream = "openai-chat"
model = "gpt-4.1-mini"
headers = { authorization = "Bearer sk-compare" }

[[routes]]
inbound = "messages"
upstream = "anthropic"
model = "claude-haiku-4-5"
headers = { x-api-key = "sk-compare", anthropic-version = "2023-06-01" }
"#;

/// Forwards unchanged; a request carrying the delayed prompt is answered `DELAY` after its
/// upstream answer arrived in full.
async fn forward(
    upstream: Arc<String>,
    client: reqwest::Client,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    let (parts, bytes) = read(req).await;
    let delayed = String::from_utf8_lossy(&bytes).contains(DELAYED);
    let answer = match send(&client, &upstream, &parts, bytes).await {
        Ok(a) => a,
        Err(refused) => return refused,
    };
    if delayed {
        tokio::time::sleep(DELAY).await;
    }
    respond(answer.status, &answer.ctype, answer.body)
}

async fn serve_delaying(upstream: String) -> SocketAddr {
    serve(upstream, forward).await
}

/// A root with the weather and parallel cases, their tools, and the profile.
fn project() -> Scratch {
    let root = Scratch::with_cases("compare-root", &["weather", "parallel"]);
    std::fs::write(root.join("sleepy.toml"), PROFILE).unwrap();
    root
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[test]
fn added_latency_is_paired_per_request_and_shows_the_proxy_delay() {
    let root = project();
    let profile = Arc::new(
        tooltape::gateway::load_gateway(&root, root.join("sleepy.toml").to_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let discovery = discover(&root);
    assert!(discovery.broken.is_empty(), "{:?}", discovery.broken);
    let cases = tooltape::engine::cases_of(&discovery);
    let routes = profile.routes();
    let trials = tooltape::engine::trials(&cases, &routes, None);
    assert!(!trials.is_empty());
    let results: Vec<tooltape::engine::TrialResult> = runtime().block_on(async {
        let upstream = Arc::new(tooltape::engine::Upstream::start().await.unwrap());
        let addr = serve_delaying(upstream.base_url()).await;
        let url = format!("http://{addr}");
        crate::scratch::run_through(Arc::clone(&profile), trials, &upstream, Some(url), &root).await
    });

    let (mut delayed, mut other) = (Vec::new(), Vec::new());
    let mut delayed_first_calls = 0;
    for r in &results {
        let is_delayed = r.id.key().starts_with("weather::");
        assert!(
            !r.requests.is_empty(),
            "{}: no request timed ({:?})",
            r.name,
            r.cell
        );
        for t in &r.requests {
            assert_eq!(
                t.exchanges, 1,
                "{}: one upstream exchange per request",
                r.name
            );
            let up = t
                .upstream
                .unwrap_or_else(|| panic!("{}: request not paired with its upstream time", r.name));
            assert!(
                up <= t.client,
                "{}: upstream {up:?} outside the client's {:?}",
                r.name,
                t.client
            );
            let added = t.added_ms().unwrap();
            assert!(added >= 0.0, "{}: negative added latency {added}", r.name);
            if is_delayed {
                assert!(
                    added >= ms(DELAY),
                    "{}: added {added:.1} ms, the proxy slept {} ms",
                    r.name,
                    ms(DELAY)
                );
                if let Some(first) = t.first_call {
                    assert!(t.streamed);
                    assert!(first >= DELAY, "{}: first call at {first:?}", r.name);
                    assert!(first <= t.client, "{}: first call after completion", r.name);
                    delayed_first_calls += 1;
                }
                delayed.push(added);
            } else {
                other.push(added);
            }
        }
    }
    assert!(!delayed.is_empty() && !other.is_empty());
    assert!(
        delayed_first_calls > 0,
        "no streamed weather trial saw a tool call"
    );
    // Paired per request: the undelayed requests do not inherit the delayed ones' time.
    let (p_delayed, p_other) = (
        percentile(&delayed, 50.0).unwrap(),
        percentile(&other, 50.0).unwrap(),
    );
    assert!(
        p_other < p_delayed,
        "undelayed p50 {p_other:.2} ms vs delayed p50 {p_delayed:.2} ms"
    );
    eprintln!(
        "added latency p50: delayed {p_delayed:.2} ms, identity {p_other:.2} ms ({} + {} requests)",
        delayed.len(),
        other.len()
    );

    // The table line over the same run: every request paired, conformance over applicable.
    let run = GatewayRun {
        profile: Arc::clone(&profile),
        results,
        peak_memory_kib: None,
        started_in: None,
        wall: Duration::from_secs(1),
    };
    let common = tooltape::gateway::common_routes(&[profile.as_ref()]);
    assert_eq!(common, ["chat→openai-chat", "messages→anthropic"]);
    let row = compare_row(&run, &common);
    assert_eq!(row.paired.0, row.paired.1);
    assert_eq!(row.paired.0, delayed.len() + other.len());
    assert!(row.added.is_some_and(|(p50, p99)| p50 <= p99));
    assert!(row.first_call_samples > 0);
    assert_eq!(row.common_trials, run.results.len());
    assert!(row.common.0 <= row.common.1 && row.common.1 <= row.common_trials);
}

#[test]
fn the_region_rewrite_keeps_everything_outside_the_markers() {
    let before = "# Title\r\n\nintro with <!-- other --> marker\n\n";
    let after = "\n\ntrailing text, no final newline";
    let text = format!("{before}{COMPARE_BEGIN}\nold table\n| a |\n{COMPARE_END}{after}");
    let new = tooltape::gateway::replace_region(&text, "| new |\n").unwrap();
    assert!(new.starts_with(&format!("{before}{COMPARE_BEGIN}")));
    assert!(new.ends_with(&format!("{COMPARE_END}{after}")));
    assert!(new.contains("\n| new |\n"));
    assert!(!new.contains("old table"));
    // Idempotent: rewriting with the same body changes nothing.
    assert_eq!(
        tooltape::gateway::replace_region(&new, "| new |\n").unwrap(),
        new
    );

    let dir = Scratch::new("compare-region");
    let path = dir.join("README.md");
    std::fs::write(&path, &text).unwrap();
    tooltape::gateway::rewrite_region(&path, "| new |\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), new);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "temporary file left: {leftovers:?}");
}

#[test]
fn missing_markers_are_an_error_and_leave_the_file_alone() {
    let dir = Scratch::new("compare-markers");
    for (text, missing) in [
        (format!("a\n{COMPARE_END}\n"), COMPARE_BEGIN),
        (format!("a\n{COMPARE_BEGIN}\nb\n"), COMPARE_END),
        ("no markers at all\n".to_string(), COMPARE_BEGIN),
    ] {
        let path = dir.join("doc.md");
        std::fs::write(&path, &text).unwrap();
        let err = tooltape::gateway::rewrite_region(&path, "x").unwrap_err();
        assert!(err.contains(missing), "{err}");
        assert!(err.contains("doc.md"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn the_compare_command_refuses_unknown_gateways_and_a_file_without_markers() {
    let tooltape = |args: &[&str]| {
        Command::new(bin())
            .args(args)
            .current_dir(repo())
            .output()
            .unwrap()
    };
    let out = tooltape(&["gateway", "compare", "portkey", "no-such-gateway"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-gateway"));

    let out = tooltape(&["gateway", "compare", "portkey"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "one gateway is not a comparison"
    );

    let out = tooltape(&["gateway", "compare", "portkey", "portkey"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("twice"));

    let out = tooltape(&[
        "gateway",
        "compare",
        "portkey",
        "tooltape",
        "--url",
        "litellm=http://127.0.0.1:1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not one of the compared"));

    let dir = Scratch::new("compare-cli");
    let doc = dir.join("doc.md");
    std::fs::write(&doc, "no markers\n").unwrap();
    let out = tooltape(&[
        "gateway",
        "compare",
        "portkey",
        "tooltape",
        "--md-out",
        doc.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(COMPARE_BEGIN));
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), "no markers\n");
}
