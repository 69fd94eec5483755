//! The case corpus: the class table of `cases/README.md` is true (every class has a case, every
//! case exists and names its class, the providers said to express a class run it), and the
//! simulator's new answer shapes follow the framing of real recordings in
//! `../shared/real-traffic` (event names, field sets, ordering); skipped with a message when the
//! real traffic is absent (failed then under CI, which has it: `crate::needs`).

use std::collections::{BTreeMap, BTreeSet};

use crate::scratch::repo;
use serde_json::Value;

const ALL: [&str; 5] = [
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "text-protocol",
];

struct Row {
    class: u32,
    cases: Vec<String>,
    expressed: Vec<String>,
}

fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn table() -> Vec<Row> {
    let text = std::fs::read_to_string(repo().join("cases/README.md")).expect("cases/README.md");
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let class = cells.first()?.parse().ok()?;
            Some(Row {
                class,
                cases: backticked(cells.get(2)?),
                expressed: cells
                    .get(3)?
                    .split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| ALL.contains(&p.as_str()))
                    .collect(),
            })
        })
        .collect()
}

/// The case's top-level `description` and `providers` lines (read line by line: the whole file
/// may hold numbers beyond TOML's i64 that only the case loader's own reader accepts).
fn case_file(name: &str) -> Option<toml::Table> {
    let text = std::fs::read_to_string(repo().join(format!("cases/{name}.toml"))).ok()?;
    let head: String = text
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter(|l| l.starts_with("description =") || l.starts_with("providers ="))
        .map(|l| format!("{l}\n"))
        .collect();
    toml::from_str(&head).ok()
}

fn providers_of(case: &toml::Table) -> Vec<String> {
    match case.get("providers").and_then(|p| p.as_array()) {
        Some(list) => list
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect(),
        None => ALL.iter().map(|p| p.to_string()).collect(),
    }
}

#[test]
fn class_table_is_true() {
    let rows = table();
    let mut problems = Vec::new();
    for class in 1..=27 {
        if !rows.iter().any(|r| r.class == class && !r.cases.is_empty()) {
            problems.push(format!(
                "cases/README.md: class {class} has no row with a case"
            ));
        }
    }
    let mut listed = BTreeSet::new();
    for row in &rows {
        let mut run_by = BTreeSet::new();
        for name in &row.cases {
            listed.insert(name.clone());
            let Some(case) = case_file(name) else {
                problems.push(format!(
                    "cases/README.md: class {}: cases/{name}.toml is missing or not TOML",
                    row.class
                ));
                continue;
            };
            let description = case
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or("");
            if !description.starts_with(&format!("Class {} (", row.class)) {
                problems.push(format!(
                    "cases/{name}.toml: the description must start with \"Class {} (\", got {description:?}",
                    row.class
                ));
            }
            run_by.extend(providers_of(&case));
        }
        for p in &row.expressed {
            if !run_by.contains(p) {
                problems.push(format!(
                    "cases/README.md: class {} says {p} expresses it, but none of its cases runs on {p}",
                    row.class
                ));
            }
        }
    }
    // Every case naming a class is in that class's row.
    for entry in std::fs::read_dir(repo().join("cases")).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let Some(case) = case_file(name) else {
            continue;
        };
        let description = case
            .get("description")
            .and_then(|d| d.as_str())
            .unwrap_or("");
        if description.starts_with("Class ") && !listed.contains(name) {
            problems.push(format!(
                "cases/{name}.toml names a class but is missing from the table in cases/README.md"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- Simulator fidelity against real recordings ----

/// One framed event: its `event:` name (or the JSON `type`, or `chunk`) and its JSON.
#[derive(Debug)]
struct Event {
    name: String,
    data: Option<Value>,
    raw: String,
}

fn parse_events(text: &str) -> Vec<Event> {
    let text = text.replace("\r\n", "\n");
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    name = Some(e.trim().to_string());
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            let json: Option<Value> = serde_json::from_str(&data).ok();
            let name = name
                .or_else(|| {
                    json.as_ref()
                        .and_then(|j| j.get("type"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_else(|| {
                    if data == "[DONE]" {
                        "[DONE]".into()
                    } else if json.as_ref().is_some_and(|j| j.get("error").is_some()) {
                        // A data line whose JSON has a top-level `error` object (reference §1.6, §4.6).
                        "error".into()
                    } else {
                        "chunk".into()
                    }
                });
            Event {
                name,
                data: json,
                raw: block.to_string(),
            }
        })
        .collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Field sets seen per kind: `event NAME`, `delta TYPE`, `item TYPE`, `part`.
#[derive(Default)]
struct Shapes {
    fields: BTreeMap<String, BTreeSet<String>>,
    first: BTreeSet<String>,
    last: BTreeSet<String>,
    event_lines: bool,
}

fn record(shapes: &mut Shapes, events: &[Event]) {
    if let (Some(f), Some(l)) = (events.first(), events.last()) {
        shapes.first.insert(f.name.clone());
        shapes.last.insert(l.name.clone());
    }
    for e in events {
        shapes.event_lines |= e.raw.contains("event:");
        for (kind, value) in kinds(e) {
            shapes.fields.entry(kind).or_default().extend(keys(&value));
        }
    }
}

/// The kinds of objects one event holds, with the objects.
fn kinds(e: &Event) -> Vec<(String, Value)> {
    let Some(d) = &e.data else {
        return Vec::new();
    };
    let mut out = vec![(format!("event {}", e.name), d.clone())];
    if let Some(delta) = d.get("delta").filter(|v| v.is_object()) {
        let t = delta.get("type").and_then(Value::as_str).unwrap_or("-");
        out.push((format!("delta {t}"), delta.clone()));
    }
    for key in ["item", "content_block"] {
        if let Some(item) = d.get(key) {
            let t = item.get("type").and_then(Value::as_str).unwrap_or("-");
            out.push((format!("item {t}"), item.clone()));
        }
    }
    for c in d
        .get("candidates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for p in c
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push(("part".into(), p.clone()));
        }
    }
    out
}

fn real_shapes(records: &[Value], api: &str) -> Shapes {
    let mut shapes = Shapes::default();
    for r in records {
        if r["api"] != api
            || r["response"]["body_format"] != "sse"
            || r["response"]["status"] != 200
        {
            continue;
        }
        let body = r["response"]["body_text"].as_str().unwrap_or("");
        record(&mut shapes, &parse_events(body));
    }
    shapes
}

/// The documentation a name the real traffic lacks must appear in (it is then documented, not invented).
fn documented() -> String {
    let dir = crate::needs::shared();
    ["reference/providers.md", "real-traffic/README.md"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(dir.join(p)).ok())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A name (event, delta type, item type, field) the real traffic lacks is documented, or is
/// one of the OpenAI Responses refusal events of the published event list that the reference
/// does not spell out (the project's decoder reads them: `openai_responses/stream.rs`).
fn documented_name(docs: &str, name: &str) -> bool {
    let bare = name.rsplit(' ').next().unwrap_or(name);
    docs.contains(bare) || matches!(bare, "response.refusal.delta" | "response.refusal.done")
}

/// The new answer shapes, by cassette folder: (case, whether the stream fails on purpose).
const SHAPES: &[(&str, bool)] = &[
    ("c01_text_and_call_same_chunk", false),
    ("c02_thinking_before_call", false),
    ("c02_reasoning_between_calls", false),
    ("c03_arguments_done_only", false),
    ("c03_arguments_one_delta", false),
    ("c04_parallel_interleaved", false),
    ("c04_parallel_one_chunk", false),
    ("c05_no_params_empty_string", false),
    ("c14_max_tokens_mid_call", false),
    ("c15_refusal_with_tools", false),
    ("c16_usage_absent", false),
    ("c13_stream_error_event", true),
    ("c13_stream_cut", true),
];

fn cassette_streams(provider: &str, case: &str) -> Vec<String> {
    let dir = repo().join(format!("cassettes/{provider}/{case}"));
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for e in entries {
        let path = e.unwrap().path();
        let c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for i in c["interactions"].as_array().into_iter().flatten() {
            if let Some(events) = i.pointer("/response/stream").and_then(Value::as_array) {
                out.push(events.iter().filter_map(Value::as_str).collect::<String>());
            }
        }
    }
    out
}

fn check_api(real: &Shapes, api: &str, docs: &str, problems: &mut Vec<String>) {
    for (case, faulty) in SHAPES {
        for (n, body) in cassette_streams(api, case).iter().enumerate() {
            let events = parse_events(body);
            let at = format!("cassettes/{api}/{case} stream {n}");
            let mut sim = Shapes::default();
            record(&mut sim, &events);
            if sim.event_lines != real.event_lines {
                problems.push(format!(
                    "{at}: `event:` lines {}, real {api} streams {}",
                    sim.event_lines, real.event_lines
                ));
            }
            if !sim.first.is_subset(&real.first) {
                problems.push(format!(
                    "{at}: starts with {:?}, real streams start with {:?}",
                    sim.first, real.first
                ));
            }
            if !faulty && !sim.last.is_subset(&real.last) {
                let ok = sim.last.iter().all(|l| documented_name(docs, l));
                if !ok {
                    problems.push(format!(
                        "{at}: ends with {:?}, real streams end with {:?}",
                        sim.last, real.last
                    ));
                }
            }
            for (kind, fields) in &sim.fields {
                match real.fields.get(kind) {
                    Some(real_fields) => {
                        for f in fields.difference(real_fields) {
                            if !documented_name(docs, f) {
                                problems.push(format!(
                                    "{at}: {kind} has field `{f}`, absent from real traffic and from the reference"
                                ));
                            }
                        }
                    }
                    None if !documented_name(docs, kind) => problems.push(format!(
                        "{at}: {kind} appears in no real recording and not in the reference"
                    )),
                    None => {}
                }
            }
        }
    }
}

#[test]
fn simulator_shapes_follow_real_framing() {
    let Some(records) = crate::needs::real_traffic_records() else {
        return;
    };
    let docs = documented();
    let mut problems = Vec::new();
    for api in ["openai-chat", "openai-responses", "anthropic", "gemini"] {
        check_api(&real_shapes(&records, api), api, &docs, &mut problems);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Key paths of a JSON value (`error.message`, `error.details[].reason`).
fn key_paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// The error envelopes of the real recordings of `api`: their key paths and their
/// `error.type` values (OpenAI, Anthropic) or `error.status` (Google).
fn real_errors(records: &[Value], api: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut paths, mut kinds) = (BTreeSet::new(), BTreeSet::new());
    for r in records {
        if r["api"] != api || r["response"]["status"].as_u64().unwrap_or(0) < 400 {
            continue;
        }
        let text = r["response"]["body_text"].as_str().unwrap_or_default();
        let body: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("real error body {}: {e}: {text}", r["id"]));
        key_paths(&body, "", &mut paths);
        kinds.extend(error_kind(&body));
    }
    (paths, kinds)
}

fn error_kind(body: &Value) -> Option<String> {
    let e = &body["error"];
    e["type"]
        .as_str()
        .or(e["status"].as_str())
        .map(str::to_string)
}

/// The 400s the simulator answers from its own request validation (a result for an unknown
/// id, parameters that are not an object) use the real error envelopes: every key path of the
/// simulated body occurs in the real error bodies of that API, and OpenAI's `error.type` is
/// the real one (Anthropic's `invalid_request_error` and Google's `INVALID_ARGUMENT` are the
/// documented 400 kinds, providers.md §3.8 and §4).
#[test]
fn simulator_validation_errors_follow_real_envelopes() {
    let Some(records) = crate::needs::real_traffic_records() else {
        return;
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for api in ["openai-chat", "openai-responses", "anthropic", "gemini"] {
        let (real_paths, real_kinds) = real_errors(&records, api);
        for case in ["c10_unknown_result_id", "c13_invalid_schema_400"] {
            let dir = repo().join(format!("cassettes/{api}/{case}"));
            for e in std::fs::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                let c: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                for i in c["interactions"].as_array().into_iter().flatten() {
                    if i["response"]["status"].as_u64().unwrap_or(0) < 400 {
                        continue;
                    }
                    checked += 1;
                    let at = path.display();
                    let body = &i["response"]["body"];
                    let mut paths = BTreeSet::new();
                    key_paths(body, "", &mut paths);
                    for p in paths.difference(&real_paths) {
                        problems.push(format!("{at}: `{p}` is in no real {api} error body"));
                    }
                    let kind = error_kind(body).unwrap_or_default();
                    let documented = matches!(
                        (api, kind.as_str()),
                        ("anthropic", "invalid_request_error") | ("gemini", "INVALID_ARGUMENT")
                    );
                    if !real_kinds.contains(&kind) && !documented {
                        problems.push(format!(
                            "{at}: error kind {kind:?}, real {api} errors have {real_kinds:?}"
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 0, "no simulated 400s in the cassettes to check");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
