//! `tooltape import-vcr`: vcrpy YAML cassettes (string and `!!binary` gzip bodies) become
//! redacted tooltape cassettes that `replay --cassette` decodes to the recorded tool calls. The
//! real-traffic corpus is read from `../shared/real-traffic` and skipped when absent (failed then
//! under CI, which has it: `crate::needs`).

use std::io::Write;
use std::path::Path;
use std::process::Command;

use base64::Engine;
use serde_json::Value;

use crate::recording_support::{self, files_under};
use crate::scratch::bin;
use tooltape::{Provider, cassette::ProvenanceKind, redact::Secrets};

fn provider_of(file: &str) -> Provider {
    if file.contains("completions") {
        Provider::OpenaiChat
    } else if file.contains("responses") {
        Provider::OpenaiResponses
    } else if file.contains("anthropic") {
        Provider::Anthropic
    } else {
        Provider::Gemini
    }
}

fn gzip_b64(text: &str) -> String {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(enc.finish().unwrap());
    b64.as_bytes()
        .chunks(60)
        .map(|c| format!("        {}\n", String::from_utf8_lossy(c)))
        .collect()
}

#[test]
fn binary_gzip_bodies_are_decoded_and_secrets_never_written() {
    let dir = recording_support::project("import-synthetic");
    let body = r#"{"candidates":[{"content":{"parts":[{"text":"your key AIzaFAKEfake0123456789abcdefghijklmnop"}]}}],"modelVersion":"gemini-3.8-flash"}"#;
    let yaml = format!(
        "interactions:\n- request:\n    body: '{{\"contents\":[]}}'\n    headers:\n      x-goog-api-key:\n      - AIzaFAKEfake0123456789abcdefghijklmnop\n      content-type:\n      - application/json\n    method: POST\n    uri: https://generativelanguage.googleapis.com/v1beta/models/gemini-3.8-flash:generateContent?key=AIzaFAKEfake0123456789abcdefghijklmnop\n  response:\n    body:\n      string: !!binary |\n{}    headers:\n      Content-Encoding:\n      - gzip\n      Set-Cookie:\n      - NID=secretcookie\n      Content-Type:\n      - application/json\n    status:\n      code: 200\n      message: OK\nversion: 1\n",
        gzip_b64(body)
    );
    let src = dir.join("gem.yaml");
    std::fs::write(&src, yaml).unwrap();
    let out = dir.join("cassettes/imported/gem.json");
    let o = Command::new(bin())
        .args([
            "import-vcr",
            src.to_str().unwrap(),
            "--provider",
            "gemini",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("AIzaFAKE") && !text.contains("secretcookie"),
        "{text}"
    );
    let (c, _) = tooltape::cassette::load(&out).unwrap().unwrap();
    assert_eq!(c.provenance.kind, ProvenanceKind::Imported);
    assert_eq!(
        c.provenance.source.as_deref(),
        Some("vcrpy cassette gem.yaml")
    );
    assert_eq!(c.provenance.model, "gemini-3.8-flash");
    assert_eq!(c.interactions[0].request.query["key"], "<REDACTED>");
    let resp = &c.interactions[0].response;
    assert_eq!(
        resp.body.as_ref().unwrap()["modelVersion"],
        "gemini-3.8-flash",
        "gzip decoded to JSON"
    );
    assert!(
        !resp.headers.contains_key("content-encoding"),
        "stored decoded: no content-encoding"
    );
}

#[test]
fn a_file_that_is_not_a_vcr_cassette_is_refused_with_its_position() {
    let err = tooltape::import_vcr::convert(Path::new("x.yaml"), "a: [1, 2\n", Provider::Gemini)
        .unwrap_err();
    assert!(err.to_string().starts_with("x.yaml:"), "{err}");
    let err = tooltape::import_vcr::convert(Path::new("x.yaml"), "foo: 1\n", Provider::Gemini)
        .unwrap_err();
    assert!(err.to_string().contains("not a vcrpy cassette"), "{err}");
}

#[test]
fn every_real_traffic_cassette_imports_and_scans_clean() {
    let Some(rt) = crate::needs::real_traffic() else {
        return;
    };
    let dir = recording_support::project("import-all");
    let raw = files_under(&rt.join("raw"));
    assert!(raw.len() >= 40, "{} raw files", raw.len());
    for f in &raw {
        let name = f.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        let c = tooltape::import_vcr::convert(f, &text, provider_of(name))
            .unwrap_or_else(|e| panic!("{e}"));
        let out = dir.join("out").join(name.replace(".yaml", ".json"));
        tooltape::record::write_cassette(&out, &out, c, &Secrets::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for f in files_under(&dir.join("out")) {
        let text = std::fs::read_to_string(&f).unwrap();
        // Account identifiers from the source's volatile headers must not survive.
        for leaked in [
            "proj_2kPLXdwNOjkHt3ifb0aZ4FwU",
            "sotai-i3ryiz",
            "x-stainless",
            "openai-processing-ms",
        ] {
            assert!(!text.contains(leaked), "{}: {leaked}", f.display());
        }
    }
}

/// Tool calls (name, arguments) per interaction, as the index expects them.
fn expected_calls(rt: &Path, file: &str) -> Vec<Vec<(String, Value)>> {
    let index = std::fs::read_to_string(rt.join("index.jsonl")).unwrap();
    let mut out = Vec::new();
    for line in index.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["id"]
            .as_str()
            .is_some_and(|id| id.ends_with(&format!("{file}#{}", out.len())))
        {
            let calls = r["expected"]["tool_calls"].as_array().unwrap();
            out.push(
                calls
                    .iter()
                    .map(|c| {
                        (
                            c["name"].as_str().unwrap().to_string(),
                            c["arguments"].clone(),
                        )
                    })
                    .collect(),
            );
        }
    }
    out
}

#[test]
fn imported_real_cassettes_replay_to_the_expected_tool_calls() {
    let Some(rt) = crate::needs::real_traffic() else {
        return;
    };
    let dir = recording_support::project("import-replay");
    for (file, provider) in [
        (
            "python__tests__e2e__output__cassettes__test_call_with_tools__openai_gpt_4o_completions__sync.yaml",
            "openai-chat",
        ),
        (
            "python__tests__e2e__output__cassettes__test_call_with_tools__openai_gpt_4o_responses__stream.yaml",
            "openai-responses",
        ),
        (
            "python__tests__e2e__output__cassettes__test_call_with_tools__anthropic_claude_sonnet_4_0__stream.yaml",
            "anthropic",
        ),
        (
            "python__tests__e2e__output__cassettes__test_call_with_tools__google_gemini_2_5_flash__sync.yaml",
            "gemini",
        ),
    ] {
        let src = rt.join("raw/mirascope").join(file);
        let out = dir.join(format!("{provider}.json"));
        let o = Command::new(bin())
            .args([
                "import-vcr",
                src.to_str().unwrap(),
                "--provider",
                provider,
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // No --provider: the trial field written by the import names it.
        let o = Command::new(bin())
            .args([
                "--root",
                dir.to_str().unwrap(),
                "replay",
                "--cassette",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{file}: {}\n{stdout}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got: Vec<Vec<(String, Value)>> = stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let calls = v["tool_calls"].as_array().cloned().unwrap_or_default();
                calls
                    .iter()
                    .map(|c| {
                        (
                            c["name"].as_str().unwrap_or("").to_string(),
                            c["arguments"].clone(),
                        )
                    })
                    .collect()
            })
            .collect();
        let want = expected_calls(&rt, file);
        assert!(!want.is_empty(), "{file}: not in index.jsonl");
        assert_eq!(got, want, "{file}");
    }
}
