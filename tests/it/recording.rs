//! Recording: redaction and the secret scan, retry hints, import-vcr, the CI guard, replay's
//! loopback-only rule, staleness, and recording against the simulator with faults.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::recording_support::project;
use crate::scratch::bin;
use tooltape::{
    HttpRequest, HttpResponse, cassette::Cassette, cassette::Interaction, cassette::Provenance,
    cassette::ProvenanceKind, cassette::StoredResponse, record::RetryPolicy, record::backoff,
    record::server_hint, record::write_cassette, redact::REDACTED, redact::Secrets,
    redact::find_secrets, redact::redact_request, redact::redact_response, redact::redact_text,
};

const FAKE_OPENAI: &str = "sk-proj-FAKEfake0123456789abcdefXYZ";
const FAKE_ANTHROPIC: &str = "sk-ant-api03-FAKEfake0123456789abcdef";
const FAKE_GOOGLE: &str = "AIzaFAKEfake0123456789abcdefghijklmnop";

#[test]
fn key_shapes_are_found_at_word_boundaries_only() {
    let none = Secrets::default();
    let text = format!("a {FAKE_OPENAI} b {FAKE_ANTHROPIC} c {FAKE_GOOGLE} d Bearer abcdefgh.ijk");
    let hits = find_secrets(&text, &none);
    assert_eq!(hits.len(), 4, "{hits:?}");
    // `task-…` contains `sk-` but is a word; short `sk-` strings are not keys.
    for benign in [
        "task-0123456789abcdefghijklmnop",
        "sk-short",
        "Bearer <REDACTED>",
        "AIzaShort",
    ] {
        assert!(find_secrets(benign, &none).is_empty(), "{benign}");
    }
    assert_eq!(
        redact_text(&format!("key={FAKE_GOOGLE}&x=1"), &none),
        format!("key={REDACTED}&x=1")
    );
}

#[test]
fn literal_keys_from_the_environment_are_redacted_whatever_their_shape() {
    let secrets = Secrets::new(["plainsecretvalue42".to_string(), "short".to_string()]);
    assert_eq!(
        redact_text("x plainsecretvalue42 y short", &secrets),
        format!("x {REDACTED} y short")
    );
}

#[test]
fn request_redaction_covers_headers_query_and_mcp_fields() {
    let mut req = HttpRequest::post(
        "/v1/responses",
        json!({
            "tools": [{"type": "mcp", "server_url": "https://mcp.example", "authorization": "oauth-token-123456",
                       "headers": {"X-Custom-Auth": "hunter2hunter2"}}],
            "mcp_servers": [{"type": "url", "url": "https://mcp.example", "authorization_token": "tok-123456789"}],
            "input": format!("my key is {FAKE_OPENAI}"),
        }),
    );
    req.headers
        .insert("authorization".into(), format!("Bearer {FAKE_OPENAI}"));
    req.headers
        .insert("openai-organization".into(), "org-abcdef".into());
    req.query.insert("key".into(), FAKE_GOOGLE.into());
    req.query.insert("alt".into(), "sse".into());
    redact_request(&mut req, &Secrets::default());
    let text = serde_json::to_string(&req).unwrap();
    for secret in [
        "oauth-token-123456",
        "hunter2hunter2",
        "tok-123456789",
        FAKE_OPENAI,
        "org-abcdef",
        FAKE_GOOGLE,
    ] {
        assert!(!text.contains(secret), "{secret} left in {text}");
    }
    assert_eq!(req.query["alt"], "sse");
    assert_eq!(req.body["tools"][0]["server_url"], "https://mcp.example");
}

#[test]
fn response_redaction_drops_volatile_headers_and_keeps_streams_byte_exact() {
    let events = vec![
        "data: {\"a\":\"x\\u00e9 \\\"q\\\"\"}\r\n\r\n".to_string(),
        format!("data: {{\"text\":\"echo {FAKE_ANTHROPIC}!\"}}\n\n"),
        "event: done\ndata: [DONE]\n\n".to_string(),
    ];
    let mut headers = BTreeMap::new();
    for (k, v) in [
        ("content-type", "text/event-stream"),
        ("x-request-id", "req_1"),
        ("openai-processing-ms", "12"),
        ("x-ratelimit-remaining-tokens", "9"),
        ("set-cookie", "__cf_bm=abc"),
        ("date", "Mon"),
        ("cf-ray", "1"),
        ("server-timing", "gfet4t7; dur=1"),
        ("anthropic-ratelimit-requests-limit", "5"),
    ] {
        headers.insert(k.to_string(), v.to_string());
    }
    let mut r = StoredResponse {
        status: 200,
        headers,
        body: None,
        stream: Some(events.clone()),
        text: None,
    };
    redact_response(&mut r, &Secrets::default());
    assert_eq!(r.headers.keys().collect::<Vec<_>>(), ["content-type"]);
    let got = r.stream.unwrap();
    assert_eq!(
        got[0], events[0],
        "an event without a secret is kept byte for byte"
    );
    assert_eq!(got[2], events[2]);
    assert_eq!(
        got[1],
        events[1].replace(FAKE_ANTHROPIC, REDACTED),
        "only the secret's span changes"
    );
}

fn cassette_with(req: HttpRequest, resp: StoredResponse) -> Cassette {
    Cassette {
        tooltape: tooltape::cassette::FORMAT,
        trial: "t::openai-chat::auto::buffered".into(),
        provenance: Provenance {
            kind: ProvenanceKind::Recorded,
            date: "2026-01-01".into(),
            model: "m".into(),
            answered_model: None,
            tooltape: "0".into(),
            case_hash: None,
            source: None,
            server: None,
        },
        interactions: vec![Interaction {
            request: req,
            response: resp,
        }],
    }
}

fn ok_response(body: serde_json::Value) -> StoredResponse {
    StoredResponse {
        status: 200,
        headers: BTreeMap::new(),
        body: Some(body),
        stream: None,
        text: None,
    }
}

#[test]
fn scan_reports_path_line_col_and_ignores_ordinary_key_fields() {
    let mut req = HttpRequest::post(
        "/v1/x",
        json!({"key": "a-normal-tool-argument", "task-list": 1}),
    );
    req.headers.insert("x-api-key".into(), "plain-value".into());
    let text = tooltape::cassette::to_text(&cassette_with(
        req,
        ok_response(json!({"text": FAKE_OPENAI})),
    ));
    let findings = tooltape::redact::scan(&text, &Secrets::default());
    let whats: Vec<&str> = findings.iter().map(|f| f.what.as_str()).collect();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(whats.iter().any(|w| w.contains("x-api-key")), "{whats:?}");
    assert!(whats.iter().any(|w| w.contains("sk-")), "{whats:?}");
    for f in &findings {
        let line = text.lines().nth(f.line - 1).unwrap();
        assert!(line.len() >= f.column, "column inside the line: {f:?}");
    }
}

#[test]
fn a_secret_redaction_misses_is_refused_by_the_scan_and_nothing_is_replaced() {
    let dir = project("refuse");
    let path = dir.join("cassettes/x.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "GOOD").unwrap();
    // A `headers` object in a body that is not an MCP tool: redaction leaves it, the scan does
    // not. (`authorization` fields are redacted anywhere now; `x-api-key` is a header name only.)
    let req = HttpRequest::post("/v1/x", json!({"headers": {"x-api-key": "letmein-please"}}));
    let err = write_cassette(
        &path,
        Path::new("cassettes/x.json"),
        cassette_with(req, ok_response(json!({}))),
        &Secrets::default(),
    )
    .unwrap_err();
    assert!(
        err.contains("refusing to write") && err.contains("cassettes/x.json:"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "GOOD");
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn scan_command_exits_1_on_a_finding_and_0_when_clean() {
    let dir = project("scan");
    let clean = tooltape::cassette::to_text(&cassette_with(
        HttpRequest::post("/v1/x", json!({})),
        ok_response(json!({"ok": 1})),
    ));
    std::fs::create_dir_all(dir.join("cassettes/a")).unwrap();
    std::fs::write(dir.join("cassettes/a/clean.json"), &clean).unwrap();
    let out = Command::new(bin())
        .args(["--root", dir.to_str().unwrap(), "scan"])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(
        dir.join("cassettes/a/bad.json"),
        format!("{{\n  \"x\": \"{FAKE_GOOGLE}\"\n}}\n"),
    )
    .unwrap();
    let out = Command::new(bin())
        .args(["--root", dir.to_str().unwrap(), "scan"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("cassettes/a/bad.json:2:9: a Google API key"),
        "{stdout}"
    );
}

fn resp(status: u16, headers: &[(&str, &str)], body: &str) -> HttpResponse {
    HttpResponse {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.as_bytes().to_vec(),
    }
}

#[test]
fn retry_hints_from_headers_dates_and_gemini_bodies() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_400); // 2015-10-21 07:26:40 GMT
    assert_eq!(
        server_hint(&resp(429, &[("retry-after", "7")], ""), now),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        server_hint(
            &resp(429, &[("retry-after", "7"), ("retry-after-ms", "250")], ""),
            now
        ),
        Some(Duration::from_millis(250))
    );
    let date = resp(429, &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")], "");
    assert_eq!(server_hint(&date, now), Some(Duration::from_secs(80)));
    let gemini = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
        {"@type":"type.googleapis.com/google.rpc.QuotaFailure"},
        {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}"#;
    assert_eq!(
        server_hint(&resp(429, &[], gemini), now),
        Some(Duration::from_secs_f64(34.4))
    );
    assert_eq!(server_hint(&resp(500, &[], "oops"), now), None);
    let p = RetryPolicy {
        attempts: 3,
        base: Duration::from_millis(100),
        cap: Duration::from_secs(2),
    };
    assert_eq!(backoff(&p, 1, None), Duration::from_millis(100));
    assert_eq!(backoff(&p, 3, None), Duration::from_millis(400));
    assert_eq!(
        backoff(&p, 1, Some(Duration::from_secs(1))),
        Duration::from_secs(1)
    );
    assert_eq!(
        backoff(&p, 1, Some(Duration::from_secs(3600))),
        Duration::from_secs(2),
        "capped"
    );
}

#[test]
fn record_refuses_under_ci() {
    let dir = project("ci");
    let out = Command::new(bin())
        .args(["--root", dir.to_str().unwrap(), "record", "--dry-run"])
        .env("CI", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refuses to run under CI"), "{stderr}");
    assert!(!dir.join("cassettes").exists(), "nothing written");
}

#[test]
fn record_skips_a_provider_without_key_naming_the_variable() {
    let dir = project("nokey");
    let out = Command::new(bin())
        .args([
            "--root",
            dir.to_str().unwrap(),
            "record",
            "--provider",
            "anthropic",
        ])
        .env_remove("CI")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("skipped 4 (missing key)")
            && stdout.contains("set ANTHROPIC_API_KEY to record anthropic"),
        "{stdout}"
    );
    assert!(!dir.join("cassettes").exists());
}

#[test]
fn replay_with_a_missing_cassette_names_the_command_and_connects_nowhere_else() {
    let dir = project("replay-missing");
    // A listener standing in for "the provider": replay must never connect to it.
    let trap = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let url = format!("http://{}", trap.local_addr().unwrap());
    let out = Command::new(bin())
        .args([
            "--root",
            dir.to_str().unwrap(),
            "replay",
            "weather::openai-chat::auto::buffered",
        ])
        .env("OPENAI_BASE_URL", &url)
        .env("ANTHROPIC_BASE_URL", &url)
        .env("GEMINI_BASE_URL", &url)
        .env("OPENAI_API_KEY", FAKE_OPENAI)
        .env("CI", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("missing cassette"), "{stderr}");
    assert!(
        stderr.contains("make record FILTER='weather::openai-chat::auto::buffered' MODE=missing"),
        "{stderr}"
    );
    assert!(
        matches!(trap.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "replay connected to the provider's base URL"
    );
}

#[test]
fn dry_run_lists_missing_trials_and_request_counts() {
    let dir = project("dry");
    let out = Command::new(bin())
        .args([
            "--root",
            dir.to_str().unwrap(),
            "record",
            "weather",
            "--dry-run",
        ])
        .env_remove("CI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout.contains("weather::openai-chat::auto::buffered  (missing; up to 1 request)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("8 trials, up to 8 requests; nothing sent (--dry-run)"),
        "{stdout}"
    );
}
