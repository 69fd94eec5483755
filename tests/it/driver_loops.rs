//! The driver protocol's three loops — Python's (`clients/python/tooltape_driver.py`), Node's
//! (`clients/node/tooltape_driver.mjs`) and the reference driver's (`tooltape client drive`) —
//! answer the same sequences of protocol lines the same way: as many results, the same exit
//! status, a protocol error named on stderr or none (docs/clients/README.md, "The loop's edge
//! cases"). The Python and Node loops serve a stand-in library that answers from the trial
//! without any network; the reference driver calls the simulator. A loop whose interpreter is
//! missing is skipped with a printed reason (under CI, which has both, it fails).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tooltape::{SimConfig, Simulator, runtime};

use crate::scratch::{Scratch, bin, repo};

/// The stand-in library in Python: one call, named `get_weather`, and a text that says what the
/// loop handed over (how many messages, the last one's role, the tool choice). It cites why it
/// cannot express each optional field but `compaction`, which it leaves uncited.
const PYTHON_DRIVER: &str = r#"import json, sys
sys.path.insert(0, sys.argv[1])
import tooltape_driver as td

def call(trial, messages):
    choice = json.dumps(trial.get("tool_choice"), separators=(",", ":"))
    text = f"{len(messages)} messages, last {messages[-1]['role']}, tool_choice {choice}"
    return {"calls": [{"id": "call_1", "name": "get_weather", "arguments": "{}"}], "text": text, "finish": "tool_calls"}

CITED = {f: "the stand-in documents no such knob" for f in td.OPTIONAL_FEATURES + td.OPTIONAL_TOOL_FEATURES if f != "compaction"}
td.serve(call, unsupported=CITED)
"#;

/// The same stand-in library in Node.js.
const NODE_DRIVER: &str = r#"import { pathToFileURL } from "node:url";

const { serve, OPTIONAL_FEATURES, OPTIONAL_TOOL_FEATURES } = await import(pathToFileURL(process.argv[2]).href);

const fields = [...OPTIONAL_FEATURES, ...OPTIONAL_TOOL_FEATURES].filter((f) => f !== "compaction");
const unsupported = Object.fromEntries(fields.map((f) => [f, "the stand-in documents no such knob"]));
await serve(async (trial, messages) => {
  const choice = JSON.stringify(trial.tool_choice ?? null);
  const text = `${messages.length} messages, last ${messages.at(-1).role}, tool_choice ${choice}`;
  return { calls: [{ id: "call_1", name: "get_weather", arguments: "{}" }], text, finish: "tool_calls" };
}, { unsupported });
"#;

/// How a loop answered one sequence: its stdout lines, its exit status, and whether it named a
/// protocol error on stderr.
#[derive(Debug, PartialEq)]
struct Answer {
    results: Vec<Value>,
    status: Option<i32>,
    protocol_error: bool,
}

/// One loop: a name and the command that starts it.
struct Loop {
    name: &'static str,
    argv: Vec<String>,
}

/// Writes `lines` to the loop's stdin, closes it, and reads what it answered.
fn answer(l: &Loop, lines: &[String]) -> Answer {
    let mut child = Command::new(&l.argv[0])
        .args(&l.argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: cannot start {:?}: {e}", l.name, l.argv));
    let input: String = lines.iter().map(|s| format!("{s}\n")).collect();
    // A loop that stops at a protocol error may be gone before all of it is written.
    if let Err(e) = child.stdin.take().unwrap().write_all(input.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{}: {e}", l.name);
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let results = stdout
        .lines()
        .map(|line| {
            let doc: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: stdout line {line:?}: {e}\n{stderr}", l.name));
            let keys: Vec<&String> = doc
                .as_object()
                .map(|o| o.keys().collect())
                .unwrap_or_default();
            assert_eq!(keys, ["result"], "{}: {line}", l.name);
            doc["result"].clone()
        })
        .collect();
    Answer {
        results,
        status: out.status.code(),
        protocol_error: stderr.contains("protocol error"),
    }
}

/// The loops whose interpreter is on this machine (the others skipped, saying why; under CI,
/// which has python3 and node, a missing one fails: `crate::needs`), each with its stand-in driver
/// written into `dir`.
fn loops(dir: &Scratch) -> Vec<Loop> {
    let mut loops = vec![Loop {
        name: "rust (tooltape client drive)",
        argv: [bin(), "client", "drive"].map(String::from).to_vec(),
    }];
    let clients = repo().join("clients");
    if let Some(python) = crate::python::python_with("json") {
        std::fs::write(dir.join("driver.py"), PYTHON_DRIVER).unwrap();
        loops.push(Loop {
            name: "python (clients/python/tooltape_driver.py)",
            argv: vec![
                python,
                dir.join("driver.py").display().to_string(),
                clients.join("python").display().to_string(),
            ],
        });
    }
    if let Some(node) = crate::needs::program("node", "install Node.js 20 for the Node.js loop") {
        std::fs::write(dir.join("driver.mjs"), NODE_DRIVER).unwrap();
        loops.push(Loop {
            name: "node (clients/node/tooltape_driver.mjs)",
            argv: vec![
                node,
                dir.join("driver.mjs").display().to_string(),
                clients
                    .join("node/tooltape_driver.mjs")
                    .display()
                    .to_string(),
            ],
        });
    }
    loops
}

/// A trial as tooltape writes it, on openai-chat against `base_url`.
fn trial(base_url: &str) -> Value {
    json!({
        "name": "client::loops::weather::chat::required::buffered",
        "api": "openai-chat",
        "base_url": base_url,
        "api_key": "sk-loops",
        "model": "gpt-4.1-mini",
        "options": {},
        "stream": false,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [{"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
        "tool_choice": "required",
        "strict": false
    })
}

#[test]
fn the_three_driver_loops_answer_every_sequence_alike() {
    let dir = Scratch::new("driver-loops");
    let loops = loops(&dir);
    let sim = runtime()
        .block_on(Simulator::start(SimConfig::default()))
        .unwrap();
    let t = trial(&sim.base_url()).to_string();
    let mut lacking = trial(&sim.base_url());
    lacking.as_object_mut().unwrap().remove("api");
    let results = json!({"results": [{"role": "tool", "call_id": "call_1", "name": "get_weather",
        "content": "{\"temp_c\": 18}", "is_error": false}], "tool_choice": "auto"})
    .to_string();
    let done = json!({"done": true}).to_string();
    let s = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    // (what, the lines, results written, exit status, a protocol error named)
    let sequences = [
        ("a trial, done", s(&[&t, &done]), 1, 0, false),
        (
            "a trial, a round of results, done",
            s(&[&t, &results, &done]),
            2,
            0,
            false,
        ),
        ("two trials", s(&[&t, &done, &t, &done]), 2, 0, false),
        (
            "blank lines anywhere",
            s(&["", &t, " ", &results, "", &done, ""]),
            2,
            0,
            false,
        ),
        ("end of input mid-trial", s(&[&t]), 1, 0, false),
        (
            "end of input after a round",
            s(&[&t, &results]),
            2,
            0,
            false,
        ),
        ("no input", s(&[]), 0, 0, false),
        (
            "an unknown message after a result",
            s(&[&t, r#"{"ping": 1}"#, &t, &done]),
            1,
            2,
            true,
        ),
        ("a trial where done is due", s(&[&t, &t, &done]), 1, 2, true),
        (
            "a malformed trial line",
            s(&["{not json", &t, &done]),
            0,
            2,
            true,
        ),
        (
            "a malformed line after a result",
            s(&[&t, "{oops", &done]),
            1,
            2,
            true,
        ),
        (
            "done without an open trial",
            s(&[&done, &t, &done]),
            0,
            2,
            true,
        ),
        (
            "a trial without its api",
            s(&[&lacking.to_string(), &t]),
            0,
            2,
            true,
        ),
        (
            "a line that is not an object",
            s(&["[1, 2]", &t]),
            0,
            2,
            true,
        ),
    ];
    let mut problems = Vec::new();
    for (what, lines, want_results, want_status, want_error) in &sequences {
        let answers: Vec<(&str, Answer)> =
            loops.iter().map(|l| (l.name, answer(l, lines))).collect();
        for (name, a) in &answers {
            let got = (a.results.len(), a.status, a.protocol_error);
            if got != (*want_results, Some(*want_status), *want_error) {
                problems.push(format!(
                    "{what}: {name} wrote {} results, exit {:?}, protocol error named: {} \
                     (expected {want_results}, {want_status}, {want_error})",
                    a.results.len(),
                    a.status,
                    a.protocol_error
                ));
            }
        }
        // The stand-in libraries answer from what the loop handed over: the Python and Node
        // loops must hand over the same conversation and tool choice, round after round.
        let stand_ins: Vec<&(&str, Answer)> = answers.iter().skip(1).collect();
        if let [(a_name, a), (b_name, b)] = stand_ins[..]
            && a.results != b.results
        {
            problems.push(format!(
                "{what}: {a_name} and {b_name} handed different things to the library:\n  {:?}\n  {:?}",
                a.results, b.results
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_follow_up_round_hands_over_the_assistant_turn_the_results_and_the_new_choice() {
    let dir = Scratch::new("driver-loops-round");
    let t = trial("http://127.0.0.1:1").to_string();
    let results = json!({"results": [{"role": "tool", "call_id": "call_1", "name": "get_weather",
        "content": "18C", "is_error": false}], "tool_choice": "auto"})
    .to_string();
    let lines = [
        t.clone(),
        results.clone(),
        results,
        r#"{"done": true}"#.to_string(),
    ];
    let stand_ins: Vec<Loop> = loops(&dir).into_iter().skip(1).collect();
    for l in &stand_ins {
        let a = answer(l, &lines);
        let texts: Vec<&str> = a
            .results
            .iter()
            .map(|r| r["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "1 messages, last user, tool_choice \"required\"",
                "3 messages, last tool, tool_choice \"auto\"",
                "5 messages, last tool, tool_choice \"auto\"",
            ],
            "{}",
            l.name
        );
        assert_eq!(a.status, Some(0), "{}", l.name);
    }
}

/// A trial setting the optional field `field` (`t`) is answered `unsupported: [field]`, with the
/// stand-in's citation, by the shared loops for stand-in libraries that do not handle it, calling
/// nothing.
fn unsupported_unless_declared(scratch: &str, t: &Value, field: &str) {
    let dir = Scratch::new(scratch);
    let lines = [t.to_string(), r#"{"done": true}"#.to_string()];
    let stand_ins: Vec<Loop> = loops(&dir).into_iter().skip(1).collect();
    for l in &stand_ins {
        let a = answer(l, &lines);
        assert_eq!(a.results.len(), 1, "{}: {a:?}", l.name);
        assert_eq!(a.results[0]["unsupported"], json!([field]), "{}", l.name);
        assert_eq!(
            a.results[0]["unsupported_why"][field],
            json!("the stand-in documents no such knob"),
            "{}",
            l.name
        );
        assert_eq!(a.status, Some(0), "{}", l.name);
    }
}

#[test]
fn a_trial_with_results_as_parts_is_unsupported_unless_the_driver_handles_them() {
    let mut t = trial("http://127.0.0.1:1");
    t["result_parts"] = json!(true);
    unsupported_unless_declared("driver-loops-parts", &t, "result_parts");
}

#[test]
fn a_round_continued_by_response_id_is_unsupported_unless_the_driver_says_so() {
    let mut t = trial("http://127.0.0.1:1");
    t["api"] = json!("openai-responses");
    t["continue_with"] = json!("previous_response_id");
    unsupported_unless_declared("driver-loops-continue", &t, "continue_with");
}

#[test]
fn a_trial_continued_on_another_provider_is_unsupported_unless_the_driver_says_so() {
    let mut t = trial("http://127.0.0.1:1");
    t["round_routes"] = json!([{"api": "gemini", "model": "gemini-3.8-flash", "options": {}}]);
    unsupported_unless_declared("driver-loops-round-routes", &t, "round_routes");
}

#[test]
fn a_tool_asked_to_stream_eagerly_is_unsupported_unless_the_driver_says_so() {
    let mut t = trial("http://127.0.0.1:1");
    t["api"] = json!("anthropic");
    t["tools"][0]["eager_input_streaming"] = json!(true);
    unsupported_unless_declared("driver-loops-eager", &t, "eager_input_streaming");
}

#[test]
fn a_field_the_driver_neither_handles_nor_cites_is_an_error_not_an_unsupported() {
    // "Not expressible" is a claim about the library: a driver that answers it without citing
    // the library's documentation answers an error the suite shows (compaction: the stand-ins
    // cite every optional field but that one).
    let dir = Scratch::new("driver-loops-uncited");
    let mut t = trial("http://127.0.0.1:1");
    t["api"] = json!("openai-responses");
    t["compaction"] = json!(true);
    let lines = [t.to_string(), r#"{"done": true}"#.to_string()];
    let stand_ins: Vec<Loop> = loops(&dir).into_iter().skip(1).collect();
    for l in &stand_ins {
        let a = answer(l, &lines);
        assert_eq!(a.results.len(), 1, "{}: {a:?}", l.name);
        assert_eq!(a.results[0].get("unsupported"), None, "{}", l.name);
        assert_eq!(
            a.results[0]["error"]["type"],
            json!("UncitedUnsupported"),
            "{}",
            l.name
        );
        assert_eq!(a.status, Some(0), "{}", l.name);
    }
}
