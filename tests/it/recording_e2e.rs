//! Recording end to end against the project's simulator (and a fake "live" provider on
//! loopback): no secret written anywhere, every fault leaves a good cassette untouched,
//! provenance, staleness and `--stale --dry-run`, `record --simulate` through the binary.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::recording_support::{files_under, project};
use crate::scratch::bin;
use tooltape::{
    Endpoint, SimConfig, Simulator, Trial, cassette::ProvenanceKind, cassette::today, discover,
    record as record_cli, record::Endpoints, record::RecordOptions, record::Refresh,
    record::RetryPolicy, record::Summary, record::cassette_from_run, record::write_cassette,
    redact::Secrets, run_trial, runtime, simulate::Fault, simulate::FaultKind,
};

const FAKE_OPENAI: &str = "sk-proj-FAKEfake0123456789abcdefXYZ";
const FAKE_ANTHROPIC: &str = "sk-ant-api03-FAKEfake0123456789abcdef";
const FAKE_GOOGLE: &str = "AIzaFAKEfake0123456789abcdefghijklmnop";
const FAKE_ORG: &str = "org-FAKEorganisation42";
const FAKE_COOKIE: &str = "session=FAKEcookie0123";
const FAKE_MCP: &str = "mcp-oauth-FAKE-token-77";

fn fast() -> RecordOptions {
    RecordOptions {
        retry: RetryPolicy {
            attempts: 3,
            base: Duration::from_millis(1),
            cap: Duration::from_millis(40),
        },
        secrets: Secrets::default(),
        timeout: Duration::from_secs(20),
    }
}

fn sim_endpoints(root: &Path, sim: &Simulator) -> Endpoints {
    record_cli::endpoints(root, Some(&sim.base_url()))
}

fn trials(root: &Path, filter: &str) -> Vec<Trial> {
    discover(root)
        .trials
        .into_iter()
        .filter(|t| t.name().contains(filter))
        .collect()
}

async fn record(
    root: &Path,
    filter: &str,
    refresh: Refresh,
    endpoints: &Endpoints,
    opts: &RecordOptions,
) -> Summary {
    let chosen = record_cli::select(root, trials(root, filter), refresh).await;
    record_cli::record_all_with(root, chosen, (endpoints, 4), opts, &|_, _| {}).await
}

/// A fake live OpenAI Chat endpoint: answers with volatile and secret headers and echoes the
/// caller's Authorization header back in the assistant's text (buffered or streamed).
struct Echo;

impl Respond for Echo {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let auth = req
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
        let text = format!("you sent {auth}, key {FAKE_OPENAI}");
        let t = ResponseTemplate::new(200)
            .insert_header("set-cookie", FAKE_COOKIE)
            .insert_header("openai-organization", FAKE_ORG)
            .insert_header("x-request-id", "req_123");
        if body["stream"] == true {
            let chunk = json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini",
                "choices":[{"index":0,"delta":{"role":"assistant","content":text},"finish_reason":null}]});
            let end = json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini",
                "choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
            let sse = format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n");
            t.set_body_raw(sse, "text/event-stream")
        } else {
            let b = json!({"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1-mini",
                "choices":[{"index":0,"message":{"role":"assistant","content":text},"finish_reason":"stop"}]});
            t.set_body_raw(b.to_string(), "application/json")
        }
    }
}

#[test]
fn recording_with_planted_keys_writes_no_secret_anywhere() {
    let root = project("secrets");
    runtime().block_on(async {
        let sim = Simulator::start(SimConfig::default()).await.unwrap();
        let echo = MockServer::start().await;
        Mock::given(wiremock::matchers::any()).respond_with(Echo).mount(&echo).await;
        let mut endpoints = sim_endpoints(&root, &sim);
        let planted = vec![("openai-organization".to_string(), FAKE_ORG.to_string()), ("cookie".to_string(), FAKE_COOKIE.to_string())];
        for (p, key) in [
            (tooltape::Provider::OpenaiResponses, FAKE_OPENAI),
            (tooltape::Provider::Anthropic, FAKE_ANTHROPIC),
            (tooltape::Provider::Gemini, FAKE_GOOGLE),
        ] {
            let e = Endpoint { base_url: sim.base_url(), key: Some(key.into()), extra_headers: planted.clone() };
            endpoints.insert(p, Ok((e, "simulator".into())));
        }
        let e = Endpoint { base_url: echo.uri(), key: Some(FAKE_OPENAI.into()), extra_headers: planted.clone() };
        endpoints.insert(tooltape::Provider::OpenaiChat, Ok((e, echo.uri())));
        let summary = record(&root, "", Refresh::Missing, &endpoints, &fast()).await;
        assert!(summary.failed.is_empty() && summary.recorded.len() == 12, "{}", summary.render());
        assert!(!echo.received_requests().await.unwrap().is_empty(), "the echo provider answered");

        // The neutral model has no MCP tool and encoders never put `key=` in a query: plant
        // them into a real run's encoded request before it becomes a cassette.
        let t = trials(&root, "forecast::gemini::auto::buffered").remove(0);
        let client = tooltape::run::client(Duration::from_secs(10));
        let endpoint = Endpoint { base_url: sim.base_url(), key: Some(FAKE_GOOGLE.into()), extra_headers: Vec::new() };
        let cache = tooltape::run::SupportCache::new(tooltape::run::SupportCache::DEFAULT_TTL);
        let mut run = run_trial(&client, &t, &endpoint, &cache).await;
        let req = &mut run.exchanges[0].encoded.request;
        req.query.insert("key".into(), FAKE_GOOGLE.into());
        req.body["tools"].as_array_mut().unwrap().push(json!({"type": "mcp", "server_label": "x", "authorization": FAKE_MCP, "headers": {"X-Api-Token": FAKE_MCP}}));
        req.body["mcp_servers"] = json!([{"type": "url", "url": "https://mcp.example", "authorization_token": FAKE_MCP}]);
        let c = cassette_from_run(&t, &run, "simulator").unwrap();
        let rel = Path::new("cassettes/planted.json");
        write_cassette(&root.join(rel), rel, c, &Secrets::default()).unwrap();
    });
    let files = files_under(&root);
    assert!(files.len() >= 13 + 3, "{files:?}");
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [
            FAKE_OPENAI,
            FAKE_ANTHROPIC,
            FAKE_GOOGLE,
            FAKE_ORG,
            FAKE_COOKIE,
            FAKE_MCP,
            "FAKE",
        ] {
            assert!(!text.contains(secret), "{}: contains {secret}", f.display());
        }
    }
    let (c, _) =
        tooltape::cassette::load(&root.join("cassettes/openai-chat/weather/auto-stream.json"))
            .unwrap()
            .unwrap();
    assert_eq!(
        c.provenance.kind,
        ProvenanceKind::Recorded,
        "the fake live provider is not the simulator"
    );
    assert!(
        c.interactions[0]
            .response
            .stream
            .as_ref()
            .unwrap()
            .concat()
            .contains("<REDACTED>")
    );
    let code = Command::new(bin())
        .args(["--root", root.to_str().unwrap(), "scan"])
        .status()
        .unwrap()
        .code();
    assert_eq!(code, Some(0));
}

/// Records `filter` once from a clean simulator, then again under `fault`: the second run must
/// fail, report the trial, and leave the first cassette byte-identical.
fn fault_leaves_cassette(
    name: &str,
    filter: &str,
    fault: FaultKind,
    opts: &RecordOptions,
    served: Option<usize>,
) {
    let root = project(name);
    runtime().block_on(async {
        let sim = Simulator::start(SimConfig::default()).await.unwrap();
        let s = record(
            &root,
            filter,
            Refresh::All,
            &sim_endpoints(&root, &sim),
            &fast(),
        )
        .await;
        assert_eq!(s.recorded.len(), 1, "{}", s.render());
        let path = root.join(trials(&root, filter)[0].cassette_path());
        let before = std::fs::read(&path).unwrap();
        let config = SimConfig {
            faults: vec![Fault::always(fault)],
            ..SimConfig::default()
        };
        let faulty = Simulator::start(config).await.unwrap();
        let s = record(
            &root,
            filter,
            Refresh::All,
            &sim_endpoints(&root, &faulty),
            opts,
        )
        .await;
        assert_eq!(s.failed.len(), 1, "{name}: {}", s.render());
        assert!(s.render().contains(filter), "{}", s.render());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{name}: the good cassette changed"
        );
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1,
            "{name}: a temporary file was left"
        );
        if let Some(n) = served {
            assert_eq!(faulty.requests_served(), n, "{name}: attempts");
        }
    });
}

#[test]
fn rate_limited_keeps_the_cassette_after_bounded_retries() {
    let fault = FaultKind::RateLimited {
        retry_after_secs: 30,
        retry_after_ms: None,
    };
    let started = Instant::now();
    fault_leaves_cassette(
        "f429",
        "weather::anthropic::auto::buffered",
        fault,
        &fast(),
        Some(3),
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "retry-after 30 s is capped"
    );
}

#[test]
fn server_error_keeps_the_cassette() {
    fault_leaves_cassette(
        "f500",
        "forecast::gemini::auto::buffered",
        FaultKind::ServerError { status: 500 },
        &fast(),
        Some(3),
    );
}

#[test]
fn dropped_stream_keeps_the_cassette() {
    fault_leaves_cassette(
        "fdrop",
        "weather::anthropic::required::stream",
        FaultKind::DropMidStream,
        &fast(),
        Some(1),
    );
}

#[test]
fn malformed_json_keeps_the_cassette() {
    fault_leaves_cassette(
        "fjson",
        "forecast::gemini::auto::buffered",
        FaultKind::MalformedJson,
        &fast(),
        Some(1),
    );
}

#[test]
fn slow_answer_keeps_the_cassette() {
    let opts = RecordOptions {
        timeout: Duration::from_millis(300),
        ..fast()
    };
    fault_leaves_cassette(
        "fslow",
        "weather::anthropic::required::stream",
        FaultKind::Slow(Duration::from_secs(3)),
        &opts,
        None,
    );
}

#[test]
fn a_rate_limit_then_success_is_recorded_after_waiting() {
    let root = project("retry-ok");
    runtime().block_on(async {
        let fault = FaultKind::RateLimited {
            retry_after_secs: 1,
            retry_after_ms: None,
        };
        let sim = Simulator::start(SimConfig {
            faults: vec![Fault::first(1, fault)],
            ..SimConfig::default()
        })
        .await
        .unwrap();
        let opts = RecordOptions {
            retry: RetryPolicy {
                attempts: 3,
                base: Duration::from_millis(1),
                cap: Duration::from_millis(300),
            },
            ..fast()
        };
        let started = Instant::now();
        let s = record(
            &root,
            "weather::anthropic::auto::buffered",
            Refresh::Missing,
            &sim_endpoints(&root, &sim),
            &opts,
        )
        .await;
        assert_eq!(s.recorded.len(), 1, "{}", s.render());
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "waited for retry-after (capped)"
        );
        assert_eq!(sim.requests_served(), 2);
    });
}

#[test]
fn simulated_cassettes_are_synthetic_with_full_provenance() {
    let root = project("provenance");
    runtime().block_on(async {
        let sim = Simulator::start(SimConfig::default()).await.unwrap();
        let s = record(
            &root,
            "weather::anthropic::auto::stream",
            Refresh::Missing,
            &sim_endpoints(&root, &sim),
            &fast(),
        )
        .await;
        assert_eq!(s.recorded.len(), 1, "{}", s.render());
    });
    let t = trials(&root, "weather::anthropic::auto::stream").remove(0);
    let (c, text) = tooltape::cassette::load(&root.join(t.cassette_path()))
        .unwrap()
        .unwrap();
    assert_eq!(c.provenance.kind, ProvenanceKind::Synthetic);
    assert_eq!(
        c.provenance.case_hash.as_deref(),
        Some(t.case.hash.as_str())
    );
    assert_eq!(c.provenance.model, t.model());
    assert_eq!(c.provenance.date, today());
    assert_eq!(c.provenance.tooltape, env!("CARGO_PKG_VERSION"));
    assert!(
        !text.contains("x-tooltape-scenario"),
        "the scenario header is never stored"
    );
    // Stream stored byte-exact: one event per entry, replayed as recorded.
    let events = c.interactions[0].response.stream.as_ref().unwrap();
    assert!(
        events.len() > 2 && events.iter().all(|e| e.ends_with("\n\n")),
        "{events:?}"
    );
}

#[test]
fn editing_a_case_marks_exactly_its_trials_stale() {
    let root = project("stale");
    runtime().block_on(async {
        let sim = Simulator::start(SimConfig::default()).await.unwrap();
        let s = record(
            &root,
            "",
            Refresh::Missing,
            &sim_endpoints(&root, &sim),
            &fast(),
        )
        .await;
        assert_eq!(s.recorded.len(), 12, "{}", s.render());
        let all = record_cli::select(&root, trials(&root, ""), Refresh::Stale).await;
        assert!(
            all.is_empty(),
            "fresh cassettes are not stale: {:?}",
            all.iter()
                .map(|(t, w)| format!("{} {w}", t.name()))
                .collect::<Vec<_>>()
        );
    });
    let case = root.join("cases/weather.toml");
    let text = std::fs::read_to_string(&case).unwrap();
    std::fs::write(&case, text.replace("right now?", "right now, please?")).unwrap();
    // Conversion changed: a recorded request that no longer matches what the encoder produces.
    let forecast = root.join("cassettes/gemini/forecast/auto-buffered.json");
    let (mut c, _) = tooltape::cassette::load(&forecast).unwrap().unwrap();
    c.interactions[0].request.body["generationConfig"] = json!({"temperature": 0.5});
    std::fs::write(&forecast, tooltape::cassette::to_text(&c)).unwrap();

    let out = Command::new(bin())
        .args([
            "--root",
            root.to_str().unwrap(),
            "record",
            "--stale",
            "--dry-run",
        ])
        .env_remove("CI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let mut listed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("::"))
        .map(|l| l.split("  ").next().unwrap())
        .collect();
    listed.sort();
    let mut want: Vec<String> = trials(&root, "weather::").iter().map(Trial::name).collect();
    want.push("forecast::gemini::auto::buffered".into());
    want.sort();
    assert_eq!(listed, want, "{stdout}");
    assert!(
        stdout.contains("stale: case edited since recording"),
        "{stdout}"
    );
    assert!(stdout.contains("stale: conversion changed"), "{stdout}");

    let out = Command::new(bin())
        .args(["--root", root.to_str().unwrap(), "status"])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains("forecast::openai-responses::auto::stream") && status.contains("synthetic"),
        "{status}"
    );
    assert_eq!(
        status
            .lines()
            .filter(|l| l.contains("stale (case edited since recording)"))
            .count(),
        8,
        "{status}"
    );
    assert_eq!(
        status
            .lines()
            .filter(|l| l.contains("stale (conversion changed"))
            .count(),
        1,
        "{status}"
    );
}

#[test]
fn status_reports_missing_and_orphans() {
    let root = project("status");
    std::fs::create_dir_all(root.join("cassettes/anthropic/gone")).unwrap();
    std::fs::write(root.join("cassettes/anthropic/gone/auto-stream.json"), "{}").unwrap();
    // A model server's recorded run is its `--replay`'s to check, no case trial's orphan.
    let tape = root.join("cassettes/servers/ours/chat/weather");
    std::fs::create_dir_all(&tape).unwrap();
    std::fs::write(tape.join("auto-stream.json"), "{}").unwrap();
    let out = Command::new(bin())
        .args(["--root", root.to_str().unwrap(), "status"])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        status.lines().filter(|l| l.ends_with("  missing")).count(),
        12,
        "{status}"
    );
    assert!(
        status.contains("orphan  cassettes/anthropic/gone/auto-stream.json"),
        "{status}"
    );
    assert!(!status.contains("cassettes/servers"), "{status}");
}

#[test]
fn record_simulate_through_the_binary_writes_synthetic_cassettes() {
    let root = project("cli-simulate");
    let out = Command::new(bin())
        .args([
            "--root",
            root.to_str().unwrap(),
            "record",
            "::gemini::",
            "--simulate",
        ])
        .env_remove("CI")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("recorded 2, skipped 0 (missing key), failed 0"),
        "{stdout}"
    );
    let out = Command::new(bin())
        .args(["--root", root.to_str().unwrap(), "replay", "::gemini::"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
