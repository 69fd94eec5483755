//! The CLI contracts, checked from outside by running the built `tooltape` binary: `parse`,
//! `convert`, `schema strict|check`, `inject`, and `replay --cassette`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::scratch::{Scratch, bin, repo};
use serde_json::{Value, json};

fn tooltape(args: &[&str], stdin: &str) -> Output {
    tooltape_in(None, args, stdin)
}

/// `tooltape` with `tmp` as its temp folder: a run that fails keeps its work folder there, in
/// the test's own scratch folder.
fn tooltape_in(tmp: Option<&std::path::Path>, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(bin());
    if let Some(tmp) = tmp {
        command.env("TMPDIR", tmp);
    }
    let mut child = command
        .args(args)
        .current_dir(repo())
        .env_remove("CI")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tooltape binary runs");
    // A command that fails on its arguments exits without reading its input: the pipe then
    // breaks, which is not this test's concern (the exit status and output are).
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    child.wait_with_output().unwrap()
}

/// Asserts exit 0, showing stderr otherwise.
fn assert_ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Stdout as JSON, after asserting exit 0.
fn ok_json(o: &Output) -> Value {
    assert_ok(o);
    stdout_json(o)
}

fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

#[test]
fn parse_openai_chat_buffered_stream_and_error() {
    let body = r#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,
      "tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
                    {"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":"tool_calls"}]}"#;
    let o = tooltape(&["parse", "--provider", "openai-chat"], body);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout_json(&o),
        json!({"tool_calls":[{"id":"call_1","name":"get_weather","arguments":{"city":"Paris"}},
                             {"id":"call_2","name":"get_time","arguments":{}}],
               "text":null,"finish_reason":"tool_calls","raw_finish_reason":"tool_calls"})
    );

    let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}\r\n\r\n\
               : keep-alive\r\n\r\n\
               data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}}]}\n\n\
               data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Oslo\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n\
               data: [DONE]\n\n";
    let o = tooltape(&["parse", "--provider", "openai-chat", "--stream"], sse);
    let v = ok_json(&o);
    assert_eq!(
        v["tool_calls"],
        json!([{"id":"call_9","name":"get_weather","arguments":{"city":"Oslo"}}])
    );

    let err = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
    let o = tooltape(
        &["parse", "--provider", "openai-chat", "--status", "401"],
        err,
    );
    assert_eq!(
        stdout_json(&o),
        json!({"error":{"status":401,"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key provided"}})
    );
}

#[test]
fn parse_every_provider_from_a_shipped_stream_cassette() {
    for provider in ["openai-chat", "openai-responses", "anthropic", "gemini"] {
        let path = format!(
            "{}/cassettes/{provider}/weather/forced-get_weather-stream.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let body: String = c["interactions"][0]["response"]["stream"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap())
            .collect();
        let o = tooltape(&["parse", "--provider", provider, "--stream"], &body);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v = stdout_json(&o);
        assert_eq!(v["tool_calls"][0]["name"], "get_weather", "{provider}: {v}");
        // Without the request, `parse` cannot know which nulls a strict rewrite added (OpenAI
        // strict decoding sends `unit: null`); restoring them needs the case (see replay).
        assert_eq!(
            v["tool_calls"][0]["arguments"]["city"], "Paris",
            "{provider}"
        );
        assert_eq!(v["finish_reason"], "tool_calls", "{provider}");
    }
}

#[test]
fn unparseable_input_exits_2_with_one_line_saying_where() {
    let o = tooltape(
        &["parse", "--provider", "anthropic"],
        "{\"content\": [oops]}",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("line 1, column"), "{err}");
    let o = tooltape(&["parse", "--provider", "nope"], "{}");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn text_protocol_parse_uses_the_request() {
    let dir = Scratch::new("cli");
    let req = dir.join("req.json");
    std::fs::write(&req, r#"{"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}"#).unwrap();
    let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"On it. <tool_call>[{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}]</tool_call>"},"finish_reason":"stop"}]}"#;
    let o = tooltape(
        &[
            "parse",
            "--provider",
            "text-protocol",
            "--request",
            req.to_str().unwrap(),
        ],
        body,
    );
    let v = ok_json(&o);
    assert_eq!(v["tool_calls"][0]["arguments"], json!({"city":"Oslo"}));
    assert_eq!(v["diagnostics"][0]["kind"], "ArrayWrapped", "{v}");
}

#[test]
fn convert_prints_the_first_request_and_fails_closed_for_required_search() {
    let o = tooltape(
        &[
            "convert",
            "--provider",
            "openai-chat",
            "--case",
            "cases/weather.toml",
            "--choice",
            "forced-get_weather",
        ],
        "",
    );
    let v = ok_json(&o);
    assert_eq!(
        v["tool_choice"],
        json!({"type":"function","function":{"name":"get_weather"}})
    );
    assert_eq!(v["tools"][0]["function"]["name"], "get_weather");

    let o = tooltape(
        &[
            "convert",
            "--provider",
            "openai-responses",
            "--case",
            "cases/web_search_required.toml",
            "--choice",
            "omitted",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(1));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(all.contains("GROUNDING_NOT_SUPPORTED: Model gpt-5-mini with web_search tools cannot guarantee REQUIRED mode"), "{all}");
}

#[test]
fn schema_strict_and_check() {
    let incident = r#"{"type":"object","properties":{"url":{"type":"string"},"maxLength":{"type":"integer","default":5000}},"required":["url"],"additionalProperties":false}"#;
    let o = tooltape(
        &["schema", "check", "--provider", "openai-responses"],
        incident,
    );
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l.contains(": required-all: ")), "{out}");
    let o = tooltape(
        &["schema", "strict", "--provider", "openai-responses"],
        incident,
    );
    assert_eq!(o.status.code(), Some(0));
    let strict = stdout_json(&o);
    assert_eq!(strict["required"], json!(["url", "maxLength"]));
    let o = tooltape(
        &["schema", "check", "--provider", "openai-responses"],
        &strict.to_string(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "the transformed schema passes the checker: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = tooltape(
        &["schema", "strict", "--provider", "openai-chat"],
        r#"{"type":"object","patternProperties":{"^x":{"type":"string"}}}"#,
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn schema_strict_recursive_ref() {
    // `B` refers to itself twice: deciding whether `n` already accepts null used to follow
    // both references down to the depth limit (exponential). `n` is optional: made nullable.
    let schema = r##"{"type":"object","properties":{"n":{"$ref":"#/$defs/B"}},"$defs":{"B":{"anyOf":[{"type":"integer"},{"$ref":"#/$defs/B"},{"$ref":"#/$defs/B"}]}}}"##;
    for provider in ["openai-chat", "openai-responses"] {
        let o = tooltape(&["schema", "strict", "--provider", provider], schema);
        assert_eq!(o.status.code(), Some(0), "{provider}");
        let strict = stdout_json(&o);
        assert_eq!(
            strict["properties"]["n"],
            json!({"anyOf":[{"$ref":"#/$defs/B"},{"type":"null"}]})
        );
        assert_eq!(strict["required"], json!(["n"]));
    }
}

#[test]
fn closed_stdout_ends_quietly() {
    // `tooltape inject req.json | head -0`: the reader is gone before the first line is written.
    let dir = Scratch::new("cli-pipe");
    let req = dir.join("req.json");
    std::fs::write(
        &req,
        r#"{"tools":[{"type":"function","name":"getFileTree","parameters":{"type":"object","properties":{}}}]}"#,
    )
    .unwrap();
    let mut child = Command::new(bin())
        .args(["inject", req.to_str().unwrap()])
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tooltape binary runs");
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

#[test]
fn inject_prints_exactly_the_instructions() {
    let o = tooltape(&["inject"], r#"{"tools":[],"instructions":"Be brief."}"#);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "Be brief.");
    let o = tooltape(
        &["inject"],
        r#"{"tools":[{"type":"function","name":"getFileTree","parameters":{"type":"object","properties":{}}}],"tool_choice":"none"}"#,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("Tool calling instructions:\n"), "{out}");
    assert!(
        out.contains("\nTool choice is none: never emit <tool_call>.\n"),
        "{out}"
    );
    assert!(!out.ends_with('\n'));
}

#[test]
fn replay_one_cassette_repeatedly() {
    let o = tooltape(
        &[
            "replay",
            "--cassette",
            "cassettes/anthropic/multi_turn/auto-stream.json",
            "--repeat",
            "3",
        ],
        "",
    );
    assert_ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("3 trials in ")
            && last.contains("trials/s")
            && last.ends_with("ms per interaction"),
        "{last}"
    );
}

// The small commands' contracts (they were unit tests of their glue when it lived in the library).

#[test]
fn inject_contract() {
    let o = tooltape(&["inject"], r#"{"tools":[{"type":"function","name":"x"}]}"#);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("Tool calling instructions:\n") && !out.ends_with('\n'));
    let o = tooltape(&["inject"], "{}");
    assert_eq!((o.status.code(), o.stdout.len()), (Some(0), 0));
    let o = tooltape(&["inject"], "{\n  \"tools\": [,]\n}");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "<stdin>: request: line 2, column 13: expected value\n"
    );
    assert_eq!(tooltape(&["inject"], "[]").status.code(), Some(2));
}

#[test]
fn schema_strict_and_check_outputs_and_exit_codes() {
    let strict = |p: &str, input: &str| tooltape(&["schema", "strict", "--provider", p], input);
    let o = strict(
        "openai-responses",
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
    );
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\"additionalProperties\": false"), "{out}");
    let o = strict(
        "openai-chat",
        r#"{"type":"object","additionalProperties":true}"#,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!o.stdout.is_empty());
    let o = strict("openai-chat", "{\n  \"type\": }");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2, column"));
    let check = |input: &str| tooltape(&["schema", "check", "--provider", "openai-chat"], input);
    let o = check(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#);
    assert_eq!(
        (String::from_utf8_lossy(&o.stdout).as_ref(), o.status.code()),
        (
            "(root): additional-properties-false: 'additionalProperties' is required to be supplied and to be false\n(root): required-all: every property must be in 'required'; missing 'a'\n",
            Some(1)
        )
    );
    let o =
        check(r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#);
    assert_eq!((o.stdout.len(), o.status.code()), (0, Some(0)));
}

const TEXT_PROTOCOL_BODY: &str = r#"{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"On it. <tool_call>{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}</tool_call>"}}]}"#;

fn text_protocol_sse() -> String {
    let pieces = [
        "On it. <tool_",
        "call>{\"name\":\"get_weather\",",
        "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}</tool_call>",
    ];
    let mut s = String::new();
    for p in pieces {
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]});
        s.push_str(&format!("data: {chunk}\n\n"));
    }
    s.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    s
}

#[test]
fn parse_text_protocol_json_sse_and_errors() {
    let dir = Scratch::new("cli-textparse");
    let req = dir.join("req.json");
    std::fs::write(
        &req,
        r#"{"model":"m","tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}"#,
    )
    .unwrap();
    let req = req.to_str().unwrap();
    let parse = |extra: &[&str], body: &str| {
        let mut args = vec!["parse", "--provider", "text-protocol", "--request", req];
        args.extend_from_slice(extra);
        tooltape(&args, body)
    };
    let o = parse(&[], TEXT_PROTOCOL_BODY);
    assert_ok(&o);
    let out = String::from_utf8(o.stdout).unwrap();
    let o = parse(&["--stream"], &text_protocol_sse());
    assert_ok(&o);
    // The snapshot kept from when this was a unit test of the text protocol's glue.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(repo().join("src/providers/text_protocol/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            "tooltape__providers__text_protocol__tests__cli_parse_json",
            out.trim_end()
        );
    });
    let o = parse(&[], "{\"choices\": [");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with("<stdin>: response: line 1"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(dir.join("bad.json"), "{\"tools\": [}").unwrap();
    let bad = dir.join("bad.json");
    let o = tooltape(
        &[
            "parse",
            "--provider",
            "text-protocol",
            "--request",
            bad.to_str().unwrap(),
        ],
        "{}",
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "<stdin>: request: line 1, column 12: expected value\n"
    );
}

/// A gateway that dies in the middle of the trials: the run says so with its log tail, exits 1,
/// and does not overwrite the gateway's document with a broken matrix.
#[test]
fn a_gateway_that_exits_mid_run_is_reported_and_its_document_kept() {
    // python3 runs the stand-in gateway; CI has it (a skip elsewhere, a failure there).
    if crate::needs::program("python3", "install Python 3 (it runs the stand-in gateway)").is_none()
    {
        return;
    }
    let dir = Scratch::new("dies");
    // Ready on GET; the first request it would have to forward ends the process.
    let server = r#"import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'ok')
    def do_POST(self):
        print('stand-in gateway: dying on purpose', flush=True); os._exit(3)
http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
"#;
    let profile = format!(
        "description = \"a stand-in gateway that exits on its first request\"\n\
         [start]\ncommand = [\"python3\", \"-c\", {server:?}, \"{{{{port}}}}\"]\nready = \"/health\"\n\
         [[routes]]\ninbound = \"chat\"\nupstream = \"openai-chat\"\nmodel = \"gpt-4.1-mini\"\n"
    );
    let path = dir.join("dies.toml");
    std::fs::write(&path, profile).unwrap();
    let doc = dir.join("dies.md");
    std::fs::write(&doc, "the last good matrix\n").unwrap();
    let o = tooltape_in(
        Some(&dir),
        &[
            "gateway",
            path.to_str().unwrap(),
            "weather",
            "--md-out",
            doc.to_str().unwrap(),
        ],
        "",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("exited during the run"), "{err}");
    assert!(
        err.contains("dying on purpose"),
        "the log tail is shown: {err}"
    );
    assert!(err.contains("not rewritten"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&doc).unwrap(),
        "the last good matrix\n"
    );
}

/// A case file that does not load makes the gateway suite incomplete: the rest still runs, the
/// broken file is named, and the command cannot exit 0.
#[test]
fn a_gateway_run_with_a_case_that_does_not_load_fails() {
    let root = Scratch::with_cases("gw-broken", &["weather"]);
    std::fs::create_dir_all(root.join("gateways")).unwrap();
    std::fs::copy(
        repo().join("gateways/tooltape.toml"),
        root.join("gateways/tooltape.toml"),
    )
    .unwrap();
    std::fs::write(root.join("cases/broken.toml"), "description = \n").unwrap();
    let o = tooltape_in(
        Some(&root),
        &[
            "--root",
            root.to_str().unwrap(),
            "gateway",
            "tooltape",
            "weather",
        ],
        "",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("case broken"), "{err}");
    assert!(err.contains("could not be loaded"), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("weather::"),
        "the loadable cases still ran"
    );
}

/// Every `--format json` prints exactly one JSON document on stdout (`| jq` works); summaries,
/// progress and notes go to stderr.
#[test]
fn machine_formats_print_one_json_document_on_stdout() {
    for args in [
        &[
            "gateway",
            "tooltape",
            "weather::chat→anthropic",
            "--format",
            "json",
        ][..],
        &["report", "weather", "--format", "json"],
        &[
            "drift",
            "weather",
            "--against",
            "cassettes",
            "--format",
            "json",
        ],
    ] {
        let o = tooltape(args, "");
        let v = ok_json(&o);
        assert!(v.is_array() || v.is_object(), "{args:?}: {v}");
    }
    let o = tooltape(
        &[
            "gateway",
            "tooltape",
            "weather::chat→anthropic",
            "--format",
            "json",
        ],
        "",
    );
    // One document: the run's root causes and its trials.
    let doc = stdout_json(&o);
    assert_eq!(doc["trials"].as_array().map(Vec::len), Some(10), "{doc}");
    assert_eq!(doc["causes"].as_array().map(Vec::len), Some(0), "{doc}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("10 passed, 0 failed"), "{stderr}");
}

/// `--install-dir` tests one installed library; `--versions` installs each release itself: the
/// two together are refused before anything is installed or run.
#[test]
fn client_install_dir_with_versions_is_refused() {
    let dir = Scratch::new("install-dir-versions");
    let o = tooltape_in(
        Some(&dir),
        &[
            "client",
            "tooltape",
            "--install-dir",
            dir.to_str().unwrap(),
            "--versions",
            "1.0.0,1.1.0",
        ],
        "",
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--install-dir") && stderr.contains("--versions"),
        "{stderr}"
    );
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "nothing ran"
    );
}

/// Runs each `(args, stdin)` and asserts its exit code, stderr (exactly) and an empty stdout.
fn assert_exits(cases: &[(&[&str], &str, i32, String)]) {
    for (args, stdin, code, stderr) in cases {
        let o = tooltape(args, stdin);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            (o.status.code(), err.as_ref()),
            (Some(*code), stderr.as_str()),
            "{args:?}"
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), "", "{args:?}");
    }
}

/// The commands that read one input: each way out is one line on stderr (named by the input)
/// and its exit code, 1 for input that is not what it should be, 2 for input that cannot be read.
#[test]
fn input_commands_exit_paths() {
    let dir = Scratch::new("cli-exits");
    let req = dir.join("req.json");
    std::fs::write(&req, r#"{"model":"m","tools":[]}"#).unwrap();
    let req = req.to_str().unwrap();
    let missing = dir.join("missing.json");
    let missing = missing.to_str().unwrap();
    assert_exits(&[
        (
            &["schema", "strict", "--provider", "openai-chat"],
            "{\n  \"type\": }",
            2,
            // The message's newline, then eprintln's: a blank line.
            "<stdin>: invalid JSON at line 2, column 11: expected value at line 2 column 11\n\n"
                .into(),
        ),
        (
            &["schema", "check", "--provider", "nope"],
            "{}",
            2,
            "unknown provider `nope`; expected one of openai-chat, openai-responses, anthropic, gemini, text-protocol\n".into(),
        ),
        (&["inject", missing], "", 2, format!("{missing}: cannot read: No such file or directory (os error 2)\n")),
        (
            &["parse", "--provider", "text-protocol", "--request", req],
            r#"{"error":{"message":"bad","type":"x"}}"#,
            1,
            "<stdin>: response: provider error (200): bad\n".into(),
        ),
        (
            &["parse-request", "--provider", "openai-chat"],
            r#"{"model":"gpt","messages":"nope"}"#,
            1,
            "<stdin>: not a valid openai-chat request: /messages: expected an array, found a string\n".into(),
        ),
        (
            &["parse-request", "--provider", "openai-chat"],
            "{\"choices\": [\n",
            2,
            "<stdin>:2:0: not JSON: EOF while parsing a list at line 2 column 0\n".into(),
        ),
        (
            &["parse-request", "--provider", "gemini"],
            "{}",
            2,
            "<stdin>: a bare Gemini body needs --path /v1beta/models/MODEL:generateContent (the model and stream flag are in the path)\n".into(),
        ),
        (
            &["client", "drive", "--mutant", "nope"],
            "",
            2,
            format!("unknown mutant `nope`; expected one of {MUTANTS}\n"),
        ),
    ]);
    // Input that is not UTF-8: named, exit 2.
    let bad = dir.join("bad.bin");
    std::fs::write(&bad, b"\xff\xfe").unwrap();
    let bad = bad.to_str().unwrap();
    for args in [
        &["inject", bad][..],
        &["schema", "check", "--provider", "gemini", bad],
        &["parse-request", "--provider", "anthropic", bad],
    ] {
        assert_exits(&[(args, "", 2, format!("{bad}: not UTF-8\n"))]);
    }
}

/// The mutants `client drive --mutant` names, in its order.
const MUTANTS: &str = "faithful, drop-tools, never-yield, required-to-auto, merge-parallel, lose-ids, omit-strict, empty-fragments, drop-reasoning, results-one-id, stale-tools, kimi-ids, truncate-names, drop-hosted, usage-on-finish, quote-parts, drop-response-id, foreign-reasoning, custom-as-function, cut-call-finished, swallow-unsupported, drop-eager, whole-conversation, resend-with-id, drop-parallel, widen-allowed, drop-deferral, search-as-call, drop-namespace, drop-phase, drop-compaction, drop-callers, drop-caller, drop-container, drop-error-flag, mcp-bypass, mcp-given-results, mcp-drop-nulls, mcp-fetch-refs";

/// The commands over the suite and the cassettes: nothing to do is exit 1 (no trial matches, no
/// cassette folder), a usage or set-up error exit 2, each with its one line.
#[test]
fn suite_commands_exit_paths() {
    let dir = Scratch::new("cli-exits");
    let root = dir.to_str().unwrap();
    let missing = dir.join("missing.json");
    let missing = missing.to_str().unwrap();
    assert_exits(&[
        (
            &["replay", "zzzz_nomatch"],
            "",
            1,
            "no trials match `zzzz_nomatch`\n".into(),
        ),
        (
            &["report", "zzzz_nomatch"],
            "",
            2,
            "no trials match `zzzz_nomatch`\n".into(),
        ),
        (
            &["client", "tooltape", "zzzz_nomatch"],
            "",
            1,
            "no client trial matches `zzzz_nomatch`\n".into(),
        ),
        (
            &["gateway", "compare", "tooltape", "tooltape"],
            "",
            2,
            "gateway compare: `tooltape` is named twice\n".into(),
        ),
        (
            &[
                "gateway",
                "tooltape",
                "--versions",
                "1,2",
                "--bisect",
                "abc",
            ],
            "",
            2,
            "--bisect: give --versions A..B (the first and last release to search)\n".into(),
        ),
        (
            &["matrix", "--shard", "5/2"],
            "",
            2,
            "matrix: --shard 5/2: expected K/N with 1 <= K <= N (`1/4`)\n".into(),
        ),
        (
            &["matrix", "diff", missing, missing],
            "",
            2,
            format!(
                "matrix: cannot read {missing}: cannot read: No such file or directory (os error 2)\n"
            ),
        ),
        (
            &["--root", root, "scan"],
            "",
            1,
            format!(
                "{root}/cassettes: no cassettes/ folder: nothing was scanned (run from the project root, or pass --root or a PATH)\n"
            ),
        ),
        (
            &["scan", missing],
            "",
            2,
            format!("{missing}: no such file or folder\n"),
        ),
        (
            &["replay", "--cassette", missing],
            "",
            2,
            format!("{missing}: no such cassette\n"),
        ),
    ]);
}
