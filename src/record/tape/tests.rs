use std::collections::BTreeMap;

use serde_json::json;

use super::*;

const KEY: &str = "weather::chat::forced-get_weather::stream";

fn recorded() -> Recorded {
    let settings = json!({"body": {"temperature": 0}, "max_output_tokens": 96});
    Recorded {
        source: "server tiny 1.0.0".into(),
        server: ServerProvenance {
            name: "tiny".into(),
            version: Some("1.0.0".into()),
            ..ServerProvenance::default()
        },
        routes: BTreeMap::from([("chat".to_string(), ("m".to_string(), settings))]),
    }
}

fn request(city: &str) -> HttpRequest {
    HttpRequest::post("/v1/chat/completions", json!({"model": "m", "city": city}))
}

fn answer(text: &str) -> HttpResponse {
    HttpResponse {
        status: 200,
        headers: BTreeMap::new(),
        body: json!({"model": "m-q4", "text": text})
            .to_string()
            .into_bytes(),
    }
}

/// A folder holding one recorded trial of two requests.
fn recorded_dir() -> tempfile::TempDir {
    let dir = crate::scratch::folder("tape");
    let tape = Tape::recording(dir.path(), recorded());
    tape.after(KEY, &request("Paris"), Some((&answer("one"), false)));
    tape.after(KEY, &request("Rome"), Some((&answer("two"), false)));
    let done = crate::runtime::runtime().block_on(tape.finish(&[], true, &Secrets::default()));
    assert_eq!(
        done,
        Ok(format!(
            "recorded 1 cassettes into {}",
            dir.path().display()
        ))
    );
    dir
}

#[test]
fn a_recorded_trial_is_a_cassette_in_its_place_naming_server_model_and_route() {
    let dir = recorded_dir();
    let path = dir
        .path()
        .join("chat/weather/forced-get_weather-stream.json");
    let (c, _) = cassette::load(&path).unwrap().unwrap();
    assert_eq!(c.trial, format!("server::tiny::{KEY}"));
    assert_eq!(c.interactions.len(), 2);
    let p = &c.provenance;
    assert_eq!(p.kind, cassette::ProvenanceKind::Recorded);
    assert_eq!(
        (p.model.as_str(), p.answered_model.as_deref()),
        ("m", Some("m-q4"))
    );
    let server = p.server.as_ref().unwrap();
    assert_eq!(
        (server.name.as_str(), server.route.as_str()),
        ("tiny", "chat")
    );
    assert_eq!(server.settings["max_output_tokens"], json!(96));
}

#[test]
fn a_trial_that_got_no_answer_is_not_kept() {
    let dir = crate::scratch::folder("tape");
    let tape = Tape::recording(dir.path(), recorded());
    tape.after(KEY, &request("Paris"), Some((&answer("one"), false)));
    tape.after(KEY, &request("Rome"), None);
    let done = crate::runtime::runtime().block_on(tape.finish(&[], true, &Secrets::default()));
    assert!(done.unwrap().contains("1 trials not kept"));
    assert!(!dir.path().join("chat").exists());
}

#[test]
fn the_model_file_is_named_with_its_hash_and_package() {
    let dir = crate::scratch::folder("tape");
    let model = dir.path().join("m.gguf");
    std::fs::write(&model, b"abc").unwrap();
    let tape = Tape::recording(&dir.path().join("out"), recorded());
    tape.model_file(&model, "pkg==1 (PyPI)");
    tape.after(KEY, &request("Paris"), Some((&answer("one"), false)));
    let done = crate::runtime::runtime().block_on(tape.finish(&[], true, &Secrets::default()));
    assert!(done.is_ok());
    let path = dir
        .path()
        .join("out/chat/weather/forced-get_weather-stream.json");
    let (c, _) = cassette::load(&path).unwrap().unwrap();
    let server = c.provenance.server.unwrap();
    assert_eq!(server.model_file.as_deref(), Some("m.gguf"));
    assert_eq!(
        server.model_sha256.as_deref(),
        Some("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
    assert_eq!(server.model_package.as_deref(), Some("pkg==1 (PyPI)"));
    // A model folder (vLLM's): hashed over its files, stable, and changed by any file's change.
    let folder = dir.path().join("model");
    std::fs::create_dir_all(folder.join("sub")).unwrap();
    std::fs::write(folder.join("config.json"), b"{}").unwrap();
    std::fs::write(folder.join("sub/weights"), b"w").unwrap();
    let first = super::sha256_of(&folder).unwrap();
    assert_eq!(super::sha256_of(&folder).unwrap(), first);
    std::fs::write(folder.join("sub/weights"), b"v").unwrap();
    assert_ne!(super::sha256_of(&folder).unwrap(), first);
}

#[test]
fn replay_names_each_request_s_recorded_answer_in_order() {
    let dir = recorded_dir();
    let tape = Tape::replaying(dir.path(), "tiny").unwrap();
    let first = tape.before(KEY, &request("Paris")).unwrap().unwrap();
    assert_eq!(first, (TAPE_HEADER.to_string(), format!("{KEY}#0")));
    let second = tape.before(KEY, &request("Rome")).unwrap().unwrap();
    assert_eq!(second.1, format!("{KEY}#1"));
    let third = tape.before(KEY, &request("Oslo")).unwrap_err();
    assert!(
        third.contains("request 3 was not recorded (the cassette holds 2)"),
        "{third}"
    );
    let done =
        crate::runtime::runtime().block_on(tape.finish(&[KEY.into()], true, &Secrets::default()));
    assert_eq!(
        done,
        Ok(format!("replayed 3 requests from {}", dir.path().display()))
    );
}

#[test]
fn replay_refuses_a_request_that_differs_naming_the_line_and_the_diff() {
    let dir = recorded_dir();
    let tape = Tape::replaying(dir.path(), "tiny").unwrap();
    let why = tape.before(KEY, &request("Lyon")).unwrap_err();
    let path = dir
        .path()
        .join("chat/weather/forced-get_weather-stream.json");
    assert!(why.starts_with(&format!("{}:", path.display())), "{why}");
    assert!(
        why.contains("request 1 differs from the one recorded"),
        "{why}"
    );
    assert!(
        why.contains("-  \"city\": \"Paris\"") && why.contains("+  \"city\": \"Lyon\""),
        "{why}"
    );
    assert!(why.contains("tooltape server tiny --record"), "{why}");
    let missing = tape
        .before("other::chat::auto::buffered", &request("Paris"))
        .unwrap_err();
    assert!(
        missing.contains("chat/other/auto-buffered.json: no cassette for this trial"),
        "{missing}"
    );
}

#[test]
fn replay_fails_on_interactions_never_asked_for_and_on_orphans() {
    let dir = recorded_dir();
    let tape = Tape::replaying(dir.path(), "tiny").unwrap();
    tape.before(KEY, &request("Paris")).unwrap();
    let rt = crate::runtime::runtime();
    let unused = rt.block_on(tape.finish(&[KEY.into()], false, &Secrets::default()));
    let unused = unused.unwrap_err().join("\n");
    assert!(
        unused.contains("interactions 2 to 2 were recorded and never asked for"),
        "{unused}"
    );
    // A complete run in which no trial owns the cassette: an orphan; a filtered run: not judged.
    let orphan = rt
        .block_on(tape.finish(&[], true, &Secrets::default()))
        .unwrap_err();
    assert!(orphan[0].contains("orphaned cassette"), "{orphan:?}");
    assert!(
        rt.block_on(tape.finish(&[], false, &Secrets::default()))
            .is_ok()
    );
}

#[test]
fn replay_refuses_another_server_s_cassettes_and_a_cassette_out_of_place() {
    let dir = recorded_dir();
    let other = Tape::replaying(dir.path(), "big").unwrap_err();
    assert!(other.contains("is not one of server big's"), "{other}");
    let from = dir
        .path()
        .join("chat/weather/forced-get_weather-stream.json");
    std::fs::rename(&from, dir.path().join("chat/weather/auto-stream.json")).unwrap();
    let moved = Tape::replaying(dir.path(), "tiny").unwrap_err();
    assert!(
        moved.contains("auto-stream.json:3:3: the cassette's trial"),
        "{moved}"
    );
    assert!(moved.contains("belongs at"), "{moved}");
    let none = Tape::replaying(&dir.path().join("nowhere"), "tiny").unwrap_err();
    assert!(none.contains("no such folder of cassettes"), "{none}");
}

#[test]
fn the_replay_server_answers_the_interaction_its_header_names() {
    let dir = recorded_dir();
    let tape = Tape::replaying(dir.path(), "tiny").unwrap();
    let rt = crate::runtime::runtime();
    let url = rt.block_on(tape.url()).unwrap();
    let client = crate::run::client(std::time::Duration::from_secs(10));
    let ask = |header: &str| {
        let req = client
            .post(format!("{url}/v1/chat/completions"))
            .header(TAPE_HEADER, header);
        rt.block_on(async { req.send().await.unwrap().text().await.unwrap() })
    };
    assert!(ask(&format!("{KEY}#1")).contains("\"two\""));
    assert!(ask(&format!("{KEY}#0")).contains("\"one\""));
    assert!(ask("nothing#0").contains("no recorded interaction"));
    assert!(
        rt.block_on(tape.finish(&[], false, &Secrets::default()))
            .is_ok()
    );
}
