//! Proof that server mode's checks are right: the simulator stands in for a model server (its
//! deterministic model honours every contract) behind a small loopback proxy, run through
//! `tooltape server tests/reference-server.toml --url`. Unchanged, every trial passes; each
//! mutant commits one bug model servers have shipped and must fail exactly the trials it
//! should, with the finding's kind as the root cause.

use std::collections::BTreeSet;
use std::process::Command;

use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::{Value, json};

use crate::loopback_proxy::{ProxyBody, read, respond, send, serve};
use crate::scratch::{bin, repo};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutant {
    Faithful,
    /// `tool_choice` required (Anthropic `any`) answered as if it were none: text, no call.
    RequiredDropped,
    /// A named tool widened to another declared tool.
    NamedWidened,
    /// Grammar fails open: the schema is not enforced (the model writes `{}`).
    SchemaFailOpen,
    /// `finish_reason: stop` (`stop_reason: end_turn`) with calls.
    FinishStopWithCalls,
    /// A streamed call's last argument fragment lost.
    StreamArgumentsBroken,
    /// On the text protocol, a buffered answer's `<tool_call>` written as JavaScript, not JSON
    /// (`{name: …}`): the parser cannot hand it over, and must say so.
    TextCallMalformed,
}

/// Rewrites the request as the mutant server reads it.
fn mutate_request(m: Mutant, body: &mut Value) {
    let names: Vec<String> = (body["tools"].as_array().into_iter().flatten())
        .filter_map(|t| t.pointer("/function/name").or(t.get("name"))?.as_str())
        .map(str::to_string)
        .collect();
    let choice = body.get_mut("tool_choice");
    match (m, choice) {
        (Mutant::RequiredDropped, Some(c)) if *c == json!("required") => *c = json!("none"),
        (Mutant::RequiredDropped, Some(c)) if c["type"] == "any" => *c = json!({"type": "none"}),
        (Mutant::NamedWidened, Some(c)) => {
            let named = c.pointer("/function/name").or(c.get("name"));
            let named = named.and_then(Value::as_str).map(str::to_string);
            if let Some(other) = named.and_then(|n| names.iter().find(|x| **x != n).cloned()) {
                if c.get("function").is_some() {
                    c["function"]["name"] = json!(other);
                } else {
                    c["name"] = json!(other);
                }
            }
        }
        _ => {}
    }
    if m == Mutant::SchemaFailOpen {
        for t in body["tools"].as_array_mut().into_iter().flatten() {
            for key in ["/function/parameters", "/parameters", "/input_schema"] {
                if let Some(p) = t.pointer_mut(key) {
                    *p = json!({"type": "object", "properties": {}});
                }
            }
            if let Some(f) = t.get_mut("function").and_then(Value::as_object_mut) {
                f.remove("strict");
            }
            if let Some(o) = t.as_object_mut() {
                o.remove("strict");
            }
        }
    }
}

/// Rewrites the answer as the mutant server writes it.
fn mutate_answer(m: Mutant, stream: bool, body: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&body).into_owned();
    match m {
        Mutant::FinishStopWithCalls => text
            .replace(
                "\"finish_reason\":\"tool_calls\"",
                "\"finish_reason\":\"stop\"",
            )
            .replace(
                "\"finish_reason\": \"tool_calls\"",
                "\"finish_reason\": \"stop\"",
            )
            .replace(
                "\"stop_reason\":\"tool_use\"",
                "\"stop_reason\":\"end_turn\"",
            )
            .replace(
                "\"stop_reason\": \"tool_use\"",
                "\"stop_reason\": \"end_turn\"",
            )
            .into_bytes(),
        Mutant::TextCallMalformed if !stream => text
            .replace("<tool_call>{\\\"name\\\"", "<tool_call>{name")
            .into_bytes(),
        Mutant::StreamArgumentsBroken if stream => {
            let mut t = text;
            for key in ["\"arguments\":\"", "\"partial_json\":\""] {
                t = blank_last(&t, key);
            }
            t.into_bytes()
        }
        _ => body,
    }
}

/// `text` with the string after the last `key` emptied.
fn blank_last(text: &str, key: &str) -> String {
    let Some(at) = text.rfind(key) else {
        return text.to_string();
    };
    let start = at + key.len();
    let mut end = start;
    let bytes = text.as_bytes();
    while end < bytes.len() && bytes[end] != b'"' {
        end += if bytes[end] == b'\\' { 2 } else { 1 };
    }
    format!("{}{}", &text[..start], &text[end.min(text.len())..])
}

async fn handle(
    m: Mutant,
    upstream: &str,
    client: reqwest::Client,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    let (parts, body) = read(req).await;
    let mut v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let stream = v["stream"] == json!(true);
    mutate_request(m, &mut v);
    let body = if v.is_null() {
        body
    } else {
        v.to_string().into_bytes()
    };
    match send(&client, upstream, &parts, body).await {
        Ok(a) => respond(a.status, &a.ctype, mutate_answer(m, stream, a.body)),
        Err(r) => r,
    }
}

/// One run through mutant `m`: each trial's key, cause (or none), whether its first answer
/// carried calls, and its choice and mode.
fn run(m: Mutant, upstream: &str) -> Vec<(String, Option<String>, Value)> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let up = upstream.to_string();
    let addr = rt.block_on(serve(up, move |u, c, r| async move {
        handle(m, &u, c, r).await
    }));
    // A mutant's run fails by design and keeps its work folder: in a scratch temp folder.
    let tmp = crate::scratch::Scratch::new("server-mutant");
    let out = Command::new(bin())
        .env("TMPDIR", &*tmp)
        .current_dir(repo())
        .args([
            "server",
            "tests/reference-server.toml",
            "--url",
            &format!("http://{addr}"),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{m:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    drop(rt);
    (doc["trials"].as_array().unwrap().iter())
        .map(|t| {
            let key = t["name"]
                .as_str()
                .unwrap()
                .splitn(3, "::")
                .nth(2)
                .unwrap()
                .to_string();
            (key, t["cause"].as_str().map(str::to_string), t.clone())
        })
        .collect()
}

fn calls(t: &Value) -> &[Value] {
    t.pointer("/downstream_outcome/tool_calls")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The trials `m` must fail, from the faithful run: (key, trial).
fn expected(m: Mutant, faithful: &[(String, Option<String>, Value)]) -> BTreeSet<String> {
    (faithful.iter())
        .filter(|(key, _, t)| {
            let parts: Vec<&str> = key.split("::").collect();
            let (route, choice, mode) = (parts[1], parts[2], parts[3]);
            let called = !calls(t).is_empty();
            let tools = t
                .pointer("/client_request/body/tools")
                .and_then(Value::as_array);
            let tools = tools.map_or(0, Vec::len);
            // The text protocol's wire has no tools and no choice, and its calls are text: the
            // native mutants leave it as it is.
            let text = route == "text-protocol";
            match m {
                Mutant::TextCallMalformed => text && mode == "buffered" && called,
                _ if text => false,
                Mutant::Faithful => false,
                // Anthropic says an allowed subset that must be called as `any` too.
                Mutant::RequiredDropped => {
                    let any = route == "messages" && choice.starts_with("allowed-required");
                    (choice == "required" || any) && called
                }
                Mutant::NamedWidened => choice.starts_with("forced-") && called && tools > 1,
                // A schema it should refuse (400) accepted, or arguments it never checks.
                Mutant::SchemaFailOpen => {
                    t["downstream_status"].as_u64().is_some_and(|s| s >= 400)
                        || calls(t)
                            .iter()
                            .any(|c| c["arguments"].as_object().is_some_and(|a| !a.is_empty()))
                }
                // OpenAI's Chat itself ends a named choice's call with `stop`.
                Mutant::FinishStopWithCalls => {
                    route != "responses"
                        && called
                        && !(route == "chat" && choice.starts_with("forced-"))
                }
                Mutant::StreamArgumentsBroken => {
                    mode == "stream"
                        && route != "responses"
                        && calls(t)
                            .iter()
                            .any(|c| c["arguments"].as_object().is_some_and(|a| !a.is_empty()))
                }
            }
        })
        .map(|(k, _, _)| k.clone())
        .collect()
}

#[test]
fn the_reference_server_passes_and_each_mutant_fails_exactly_its_trials() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let sim = rt
        .block_on(tooltape::Simulator::start(tooltape::SimConfig::default()))
        .unwrap();
    let upstream = sim.base_url();
    let faithful = run(Mutant::Faithful, &upstream);
    assert!(faithful.len() > 400, "{} trials", faithful.len());
    let failing: Vec<_> = faithful.iter().filter(|(_, c, _)| c.is_some()).collect();
    assert!(
        failing.is_empty(),
        "the faithful proxy fails: {:?}",
        failing.iter().map(|f| (&f.0, &f.1)).collect::<Vec<_>>()
    );
    let kinds = [
        (Mutant::RequiredDropped, &["choice-honoured-"][..]),
        (Mutant::NamedWidened, &["choice-honoured-"]),
        (Mutant::SchemaFailOpen, &["call-valid-", "client-fault-"]),
        (Mutant::FinishStopWithCalls, &["answer-"]),
        (
            Mutant::StreamArgumentsBroken,
            &["call-valid-", "answer-", "stream-"],
        ),
        (Mutant::TextCallMalformed, &["text-call-"]),
    ];
    for (m, causes) in kinds {
        let got = run(m, &upstream);
        let failed: BTreeSet<String> = (got.iter())
            .filter(|(_, c, _)| c.is_some())
            .map(|(k, _, _)| k.clone())
            .collect();
        let want = expected(m, &faithful);
        assert!(!want.is_empty(), "{m:?} has trials to fail");
        let missed: Vec<_> = want.difference(&failed).collect();
        let extra: Vec<_> = failed.difference(&want).collect();
        assert!(
            missed.is_empty() && extra.is_empty(),
            "{m:?}: not caught {missed:?}; failed beyond its bug {extra:?}"
        );
        for (k, c, _) in &got {
            if let Some(c) = c {
                assert!(
                    causes.iter().any(|p| c.starts_with(p)),
                    "{m:?}: {k} failed with {c}"
                );
            }
        }
    }
    drop(sim);
}

/// The matrix carries a server's scores: in the JSON document and as the page's scores table.
#[test]
fn the_matrix_shows_a_servers_scores() {
    let dir = crate::scratch::Scratch::new("server-matrix");
    let (json, html) = (dir.join("m.json"), dir.join("m.html"));
    let out = Command::new(bin())
        .env("TMPDIR", &*dir)
        .current_dir(repo())
        .args([
            "matrix",
            "--systems",
            "server:tests/reference-server.toml",
            "--filter",
            "weather::",
        ])
        .arg("--out")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let routes = doc["systems"][0]["scores"]["routes"].as_array().unwrap();
    let chat = routes.iter().find(|r| r["route"] == "chat").unwrap();
    assert!(
        chat["tool_choice_honoured"]["of"].as_u64().unwrap() > 0,
        "{chat}"
    );
    assert_eq!(
        chat["tool_choice_honoured"]["ok"],
        chat["tool_choice_honoured"]["of"]
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Model servers: scores")
            && page.contains("data-scores=\"server:tests/reference-server.toml\"")
    );
}

/// A server that never becomes healthy fails the run (exit 2) with its log's tail; one that
/// hangs on a request breaks that trial at the profile's timeout, never hanging the run.
#[test]
fn a_server_that_never_gets_ready_or_hangs_is_reported_not_waited_for() {
    let dir = crate::scratch::Scratch::new("server-faults");
    let never = r#"description = "never ready"
[start]
command = ["sh", "-c", "echo loading the model forever; sleep 30"]
ready = "/health"
ready_timeout_secs = 2
[[routes]]
api = "chat"
model = "m"
"#;
    std::fs::write(dir.join("never.toml"), never).unwrap();
    let t0 = std::time::Instant::now();
    let out = server_in(&dir, "never.toml", &["weather::chat::auto::buffered"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not ready at") && err.contains("loading the model forever"),
        "{err}"
    );
    assert!(t0.elapsed() < std::time::Duration::from_secs(20));
    // Answers /health, then holds every POST open.
    let hangs = r#"import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'{"status":"ok"}')
    def do_POST(self):
        time.sleep(60)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;
    std::fs::write(dir.join("hangs.py"), hangs).unwrap();
    let profile = format!(
        r#"description = "hangs"
request_timeout_secs = 2
[start]
command = ["python3", "{}", "{{{{port}}}}"]
ready = "/health"
[[routes]]
api = "chat"
model = "m"
"#,
        dir.join("hangs.py").display()
    );
    std::fs::write(dir.join("hangs.toml"), profile).unwrap();
    let t0 = std::time::Instant::now();
    let out = server_in(
        &dir,
        "hangs.toml",
        &["weather::chat::auto::", "--format", "json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(t0.elapsed() < std::time::Duration::from_secs(30), "{err}");
    assert_ne!(out.status.code(), Some(0), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let cells: Vec<&str> = (doc["trials"].as_array().into_iter().flatten())
        .map(|t| t["cell"]["status"].as_str().unwrap_or(""))
        .collect();
    assert!(
        err.contains("every trial broke") || cells.iter().all(|c| *c == "broken"),
        "{err} {cells:?}"
    );
}

/// `tooltape server DIR/PROFILE ARGS…` from the repository, its temp folder `dir`.
fn server_in(dir: &std::path::Path, profile: &str, args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .env("TMPDIR", dir)
        .current_dir(repo())
        .arg("server")
        .arg(dir.join(profile))
        .args(args)
        .output()
        .unwrap()
}

/// `--record DIR` keeps every trial's exchanges with the server as a cassette naming the server
/// and route; `--replay DIR` judges what was recorded without the server: the same cells, a
/// recorded answer changed is judged as changed, and a request that no longer matches its
/// recording breaks its trial naming the cassette.
#[test]
fn a_recorded_server_run_replays_offline_and_judges_what_was_recorded() {
    let dir = crate::scratch::Scratch::new("server-tape");
    std::fs::copy(
        repo().join("tests/reference-server.toml"),
        dir.join("reference.toml"),
    )
    .unwrap();
    let tape = dir.join("tape");
    let tape = tape.to_str().unwrap();
    let cells = |out: &std::process::Output| -> Vec<(String, String)> {
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (doc["trials"].as_array().into_iter().flatten())
            .map(|t| {
                (
                    t["name"].as_str().unwrap_or("").to_string(),
                    t["cell"]["status"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let args = |how: &'static str| ["weather::", "--format", "json", how, tape];
    let live = server_in(&dir, "reference.toml", &args("--record"));
    let err = String::from_utf8_lossy(&live.stderr);
    assert_eq!(live.status.code(), Some(0), "{err}");
    // A cassette per trial that sent something: the not-applicable ones send nothing.
    let count = |word: &str| {
        let at = err.find(word).expect(word);
        let before = err[..at].trim_end();
        let n = &before[before.rfind([' ', '(', '\n']).map_or(0, |i| i + 1)..];
        n.parse::<usize>()
            .unwrap_or_else(|_| panic!("{word}: {err}"))
    };
    let sent = count(" trials in") - count(" not-applicable");
    assert!(sent > 60, "{err}");
    assert!(
        err.contains(&format!("recorded {sent} cassettes into")),
        "{err}"
    );
    let path = dir.join("tape/chat/weather/auto-buffered.json");
    let cassette: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        cassette["trial"],
        "server::reference::weather::chat::auto::buffered"
    );
    assert_eq!(cassette["provenance"]["kind"], "recorded");
    assert_eq!(cassette["provenance"]["server"]["route"], "chat");
    assert_eq!(
        cassette["provenance"]["server"]["settings"]["body"]["seed"],
        7
    );
    assert!(
        !std::fs::read_to_string(&path)
            .unwrap()
            .contains("sk-tooltape-reference")
    );

    // Offline: no server is started (the profile's start would need the simulator binary's port).
    let replayed = server_in(&dir, "reference.toml", &args("--replay"));
    let err = String::from_utf8_lossy(&replayed.stderr);
    assert_eq!(replayed.status.code(), Some(0), "{err}");
    assert_eq!(cells(&replayed), cells(&live));
    // Every recorded interaction was asked for (else the run fails), rounds included.
    let replayed =
        (err.split("replayed ").nth(1)).and_then(|r| r.split(' ').next()?.parse::<usize>().ok());
    assert!(replayed.is_some_and(|n| n > sent), "{err}");

    // One trial replayed from its cassette changed as `edit` says.
    let replay_edited = |edit: &dyn Fn(&mut Value)| {
        let mut edited = cassette.clone();
        edit(&mut edited);
        std::fs::write(&path, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
        let one = ["weather::chat::auto::buffered", "--format", "json"];
        server_in(
            &dir,
            "reference.toml",
            &[&one[..], &["--replay", tape]].concat(),
        )
    };

    // The recorded answer says `stop` with its calls: judged as a server that wrote it.
    let out = replay_edited(&|c| {
        c["interactions"][0]["response"]["body"]["choices"][0]["finish_reason"] = json!("stop");
    });
    assert_eq!(
        cells(&out),
        vec![(
            "server::reference::weather::chat::auto::buffered".into(),
            "fail".into()
        )],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The request no longer matches (the profile's settings changed since): broken, naming it.
    let out = replay_edited(&|c| c["interactions"][0]["request"]["body"]["seed"] = json!(8));
    let doc = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        doc.contains("auto-buffered.json:") && doc.contains("differs from the one recorded"),
        "{doc}"
    );
}

/// The trials of the project's llama.cpp tape, one filter each (`cassettes/servers/llama-cpp/`).
/// The text protocol's two are what SmolLM2-135M wrote without native tools; in c05's, the
/// output-token limit cut a third `<tool_call>` after two whole ones (the parser's finish for it
/// is `length`: src/providers/text_protocol/tests.rs keeps the text).
const LLAMA_TAPE: [&str; 7] = [
    "weather::chat::",
    "c01_text_and_call::chat::",
    "c07_many_tool_use_utf8::chat::",
    "c13_invalid_schema_400::chat::",
    "c18_three_rounds::chat::",
    "c01_text_and_call::text-protocol::",
    "c05_no_params_empty_object::text-protocol::",
];

/// What a real model wrote, judged in every `cargo test` without building llama.cpp: the tape
/// `tooltape server llama-cpp --record` made (SmolLM2-135M through llama-server, the profile's
/// settings), replayed offline. Each trial gets the verdict of the live run (the profile's
/// audited known failures), and every recorded interaction is asked for.
#[test]
fn the_llama_cpp_tape_of_a_real_model_replays_offline() {
    let tape = repo().join("cassettes/servers/llama-cpp");
    let dir = crate::scratch::Scratch::new("server-llama-tape");
    let mut recorded = 0;
    let mut stack = vec![tape.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let c: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                assert_eq!(c["provenance"]["kind"], "recorded", "{}", p.display());
                assert_eq!(
                    c["provenance"]["server"]["name"],
                    "llama-cpp",
                    "{}",
                    p.display()
                );
                recorded += c["interactions"].as_array().map_or(0, Vec::len);
            }
        }
    }
    assert!(recorded > 0, "{}: no cassette", tape.display());
    let mut replayed = 0;
    for filter in LLAMA_TAPE {
        let out = Command::new(bin())
            .env("TMPDIR", &*dir)
            .env("TOOLTAPE_GATEWAY_CACHE", dir.join("cache"))
            // Were it to install anyway, it fails at once rather than building llama.cpp.
            .env("PIP_NO_INDEX", "1")
            .env("UV_OFFLINE", "1")
            .current_dir(repo())
            .args(["server", "llama-cpp", filter, "--replay"])
            .arg(&tape)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{filter}: {err}");
        let n = (err.split("replayed ").nth(1))
            .and_then(|r| r.split(' ').next()?.parse::<usize>().ok());
        replayed += n.unwrap_or_else(|| panic!("{filter}: {err}"));
    }
    assert_eq!(
        replayed, recorded,
        "every recorded interaction replayed by one filter"
    );
    assert!(
        !dir.join("cache").exists(),
        "a replay installs nothing (it built llama.cpp for 18 minutes on a cold cache)"
    );
}
