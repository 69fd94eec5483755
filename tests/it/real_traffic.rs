//! Decodes every record of `../shared/real-traffic/index.jsonl` (real provider traffic recorded by
//! another project) and compares tool calls, text, raw finish reason and errors with the record's
//! independently computed `expected`. Skips with a message when the folder is absent (fails
//! then under CI, which has it: `crate::needs`).

use std::collections::BTreeMap;

use serde_json::Value;
use tooltape::{ChatRequest, HttpResponse, Provider, Tool, decode};

/// The neutral request a record's response answers (enough for decoding: tools by name, stream flag).
pub fn request_for(record: &Value) -> ChatRequest {
    let meta = &record["request_meta"];
    let tools = meta["tool_names"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|n| Tool {
            allowed_callers: Vec::new(),
            output_schema: None,
            name: n.to_string(),
            description: None,
            parameters: tooltape::model::empty_parameters(),
            strict: None,
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
        });
    ChatRequest::new(meta["model"].as_str().unwrap_or("unknown"))
        .with_tools(tools)
        .with_stream(record["stream"].as_bool().unwrap_or(false))
}

pub fn response_for(record: &Value) -> HttpResponse {
    let r = &record["response"];
    let mut headers = BTreeMap::new();
    if let Some(h) = r["headers"].as_object() {
        for (k, v) in h {
            let v = v
                .as_array()
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .or(v.as_str())
                .unwrap_or("");
            headers.insert(k.to_ascii_lowercase(), v.to_string());
        }
    }
    HttpResponse {
        status: r["status"].as_u64().unwrap() as u16,
        headers,
        body: r["body_text"].as_str().unwrap().as_bytes().to_vec(),
    }
}

fn code_string(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Returns the mismatches of one record, empty when it decodes as expected.
fn check(record: &Value, provider: Provider) -> Vec<String> {
    let req = request_for(record);
    let resp = response_for(record);
    let exp = &record["expected"];
    let outcome = match decode(provider, &req, &resp) {
        Ok(o) => o,
        Err(e) => return vec![format!("decode failed: {e}")],
    };
    let mut bad = Vec::new();
    if let Some(err) = exp.get("error").filter(|e| !e.is_null()) {
        match &outcome.error {
            None => bad.push("expected an error, decoded none".to_string()),
            Some(got) => {
                if got.status != resp.status {
                    bad.push(format!("error status {} != {}", got.status, resp.status));
                }
                if got.kind.as_deref() != err["type"].as_str() {
                    bad.push(format!("error type {:?} != {:?}", got.kind, err["type"]));
                }
                if got.code != code_string(&err["code"]) {
                    bad.push(format!("error code {:?} != {:?}", got.code, err["code"]));
                }
                if Some(got.message.as_str()) != err["message"].as_str() {
                    bad.push(format!(
                        "error message {:?} != {:?}",
                        got.message, err["message"]
                    ));
                }
            }
        }
        return bad;
    }
    if let Some(e) = &outcome.error {
        bad.push(format!("unexpected error {e:?}"));
    }
    let want: Vec<(String, Value)> = exp["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["arguments"].clone(),
            )
        })
        .collect();
    let got: Vec<(String, Value)> = outcome
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect();
    if want != got {
        bad.push(format!("tool calls {got:?} != expected {want:?}"));
    }
    if let Some(ids) = exp["tool_call_ids"].as_array() {
        for (i, id) in ids.iter().enumerate() {
            if let (Some(id), Some(call)) = (id.as_str(), outcome.tool_calls.get(i))
                && call.id != id
            {
                bad.push(format!("call {i} id {:?} != {id:?}", call.id));
            }
        }
    }
    if outcome.text.as_deref() != exp["text"].as_str() {
        bad.push(format!("text {:?} != {:?}", outcome.text, exp["text"]));
    }
    if outcome.raw_finish.as_deref() != exp["finish_reason"].as_str() {
        bad.push(format!(
            "raw finish {:?} != {:?}",
            outcome.raw_finish, exp["finish_reason"]
        ));
    }
    bad
}

fn run(api: &str, provider: Provider) {
    let Some(records) = crate::needs::real_traffic_records() else {
        return;
    };
    let mine: Vec<&Value> = records.iter().filter(|r| r["api"] == api).collect();
    assert!(!mine.is_empty(), "no {api} records in the corpus");
    let mut failures = Vec::new();
    for r in &mine {
        let bad = check(r, provider);
        if !bad.is_empty() {
            failures.push(format!(
                "{} (stream={}):\n    {}",
                r["id"].as_str().unwrap(),
                r["stream"],
                bad.join("\n    ")
            ));
        }
    }
    eprintln!(
        "{api}: {}/{} real-traffic records decode as expected",
        mine.len() - failures.len(),
        mine.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} {api} records failed:\n{}",
        failures.len(),
        mine.len(),
        failures.join("\n")
    );
}

#[test]
fn openai_chat() {
    run("openai-chat", Provider::OpenaiChat);
}

#[test]
fn openai_responses() {
    run("openai-responses", Provider::OpenaiResponses);
}

#[test]
fn anthropic() {
    run("anthropic", Provider::Anthropic);
}

#[test]
fn gemini() {
    run("gemini", Provider::Gemini);
}
