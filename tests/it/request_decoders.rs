//! Request decoders, across the suite: every shipped trial's requests (the first, encoded here;
//! every follow-up, as its cassette recorded it) decode back to the trial's neutral request, by
//! meaning; and the real requests in `../shared/real-traffic` decode, with the tool names,
//! tool choice, model and tool results their `request_meta` declares.
//!
//! "By meaning" is the trial's neutral request normalized as the provider's wire must lose it
//! (see `expected`): tools as the schema layer prepares them (strict transform, Gemini sanitizer;
//! the policy becomes `off` with each tool's flag as sent), system and developer text folded
//! where the format has one system slot, defaults the encoder adds (Anthropic `max_tokens`, an
//! explicit `auto` beside hosted tools or `disable_parallel_tool_use`), what the format cannot say
//! (error flags on OpenAI tool results, thinking budgets on OpenAI, the parallel switch on Gemini,
//! opaque items on Gemini, on Chat all but a model server's reasoning text), tool results in call order (Anthropic, Gemini), and tool
//! result text compared as JSON when it is JSON.

use std::path::Path;

use crate::scratch::{bin, repo};
use serde_json::Value;
use tooltape::model::ResultPart;
use tooltape::{
    ChatRequest, HostedTool, HttpRequest, Message, Provider, StrictPolicy, ToolChoice, Trial,
    model::AllowedMode, model::Grounding, providers::DecodedRequest,
};

/// Applies `f` to each hosted web search's variant (a tool search has none).
fn search_variants(e: &mut ChatRequest, f: impl Fn(&mut Option<String>)) {
    for h in &mut e.hosted {
        if let HostedTool::WebSearch { variant, .. } = h {
            f(variant);
        }
    }
}

/// The neutral request as `provider`'s wire carries it (see the module docs).
fn expected(provider: Provider, n: &ChatRequest) -> ChatRequest {
    let mut e = n.clone();
    e.strict = StrictPolicy::Off;
    e.tools = tooltape::providers::sent_tools(provider, n).unwrap();
    // The wire names a result's tool only through its call: a result sent under an id no call
    // had (`unknown_call_id`) decodes without a name where the format carries none.
    let call_ids: Vec<String> = n
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { tool_calls, .. } => Some(tool_calls.iter().map(|c| c.id.clone())),
            _ => None,
        })
        .flatten()
        .collect();
    let nameless_results = !matches!(provider, Provider::Gemini | Provider::TextProtocol);
    for m in &mut e.messages {
        if let Message::Assistant { text, .. } = m
            && text.as_deref() == Some("")
            && provider != Provider::OpenaiChat
        {
            *text = None;
        }
        if let Message::Tool {
            content,
            parts,
            is_error,
            call_id,
            name,
        } = m
        {
            // Gemini carries a result's text in `response` (text parts joined), only its
            // images as `functionResponse.parts`.
            let text_only = parts.iter().all(|p| matches!(p, ResultPart::Text { .. }));
            if provider == Provider::Gemini && text_only {
                parts.clear();
            }
            if nameless_results && !call_ids.contains(call_id) {
                name.clear();
            }
            *content = json_text(content);
            if matches!(provider, Provider::OpenaiChat | Provider::OpenaiResponses) {
                *is_error = false;
            }
        }
    }
    if provider == Provider::Gemini {
        link_by_name(&mut e.messages, &call_ids);
    }
    let grounding_required = n.hosted.iter().any(|h| {
        matches!(
            h,
            HostedTool::WebSearch {
                grounding: Grounding::Required,
                ..
            }
        )
    });
    let has_tools = !n.tools.is_empty() || !n.hosted.is_empty();
    match provider {
        Provider::OpenaiChat => {
            e.thinking = None;
            // Chat carries only a model server's reasoning text.
            keep_opaque(&mut e.messages, |v| {
                v.as_object().is_some_and(|o| {
                    o.keys()
                        .all(|k| k == "reasoning" || k == "reasoning_content")
                })
            });
            if n.tools.is_empty() {
                e.parallel_tool_calls = None;
            }
        }
        Provider::OpenaiResponses => {
            e.thinking = None;
            fold_system(&mut e.messages, false, true);
            search_variants(&mut e, |variant| {
                if grounding_required {
                    *variant = Some("web_search_preview".into());
                }
                if variant.as_deref() == Some("web_search") {
                    *variant = None;
                }
            });
            if grounding_required {
                e.tool_choice = None;
            } else if e.tool_choice.is_none() && !n.hosted.is_empty() {
                e.tool_choice = Some(ToolChoice::Auto);
            }
            if !has_tools {
                e.parallel_tool_calls = None;
            }
        }
        Provider::Anthropic => {
            fold_system(&mut e.messages, true, true);
            drop_empty_assistant(&mut e.messages);
            order_results(&mut e.messages);
            e.max_tokens = Some(n.max_tokens.unwrap_or_else(|| {
                let d = tooltape::providers::anthropic::DEFAULT_MAX_TOKENS;
                n.thinking.map_or(d, |b| b + d)
            }));
            search_variants(&mut e, |variant| *variant = None);
            let wire_tools = !e.tools.is_empty() || !e.hosted.is_empty();
            e.tool_choice = match &n.tool_choice {
                _ if grounding_required => None,
                None if !n.hosted.is_empty() || n.parallel_tool_calls == Some(false) => {
                    Some(ToolChoice::Auto)
                }
                Some(ToolChoice::Allowed {
                    mode: AllowedMode::Auto,
                    ..
                }) => Some(ToolChoice::Auto),
                Some(ToolChoice::Allowed {
                    mode: AllowedMode::Required,
                    ..
                }) => Some(ToolChoice::Required),
                other => other.clone(),
            };
            let none = matches!(n.tool_choice, Some(ToolChoice::None));
            e.parallel_tool_calls = (n.parallel_tool_calls == Some(false)
                && (!none || grounding_required))
                .then_some(false);
            if !wire_tools {
                e.tool_choice = None;
                e.parallel_tool_calls = None;
            }
        }
        Provider::Gemini => {
            // Gemini keeps each system/developer text as its own part.
            fold_system(&mut e.messages, true, false);
            clear_opaque(&mut e.messages);
            drop_empty_assistant(&mut e.messages);
            order_results(&mut e.messages);
            e.parallel_tool_calls = None;
            search_variants(&mut e, |variant| *variant = None);
            if let Some(ToolChoice::Allowed {
                mode: AllowedMode::Required,
                tools,
            }) = &e.tool_choice
                && tools.len() == 1
            {
                e.tool_choice = Some(ToolChoice::Forced(tools[0].clone()));
            }
        }
        Provider::TextProtocol => unreachable!("text-protocol is checked on its own"),
    }
    e
}

/// JSON text re-serialized compactly (key order kept); other text as it is.
fn json_text(s: &str) -> String {
    match serde_json::from_str::<Value>(s) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => v.to_string(),
        _ => s.to_string(),
    }
}

/// System (and, with `developer`, developer) messages moved to the front, joined into one or
/// kept apart: Responses joins system text into `instructions`; Anthropic joins both into
/// `system`; Gemini keeps each as a part of `systemInstruction`.
fn fold_system(messages: &mut Vec<Message>, developer: bool, join: bool) {
    let is_sys = |m: &Message| {
        matches!(m, Message::System { .. }) || (developer && matches!(m, Message::Developer { .. }))
    };
    let texts: Vec<String> = messages
        .iter()
        .filter(|m| is_sys(m))
        .map(|m| match m {
            Message::System { content } | Message::Developer { content } => content.clone(),
            _ => unreachable!(),
        })
        .collect();
    messages.retain(|m| !is_sys(m));
    if !join {
        for (i, content) in texts.into_iter().enumerate() {
            messages.insert(i, Message::System { content });
        }
    } else if !texts.is_empty() {
        messages.insert(
            0,
            Message::System {
                content: texts.join("\n\n"),
            },
        );
    }
}

fn keep_opaque(messages: &mut [Message], kept: fn(&Value) -> bool) {
    for m in messages {
        if let Message::Assistant { opaque, .. } = m {
            opaque.retain(kept);
        }
    }
}

fn clear_opaque(messages: &mut [Message]) {
    for m in messages {
        if let Message::Assistant { opaque, .. } = m {
            opaque.clear();
        }
    }
}

fn drop_empty_assistant(messages: &mut Vec<Message>) {
    messages.retain(|m| {
        !matches!(m, Message::Assistant { text, tool_calls, opaque, .. }
            if text.as_deref().is_none_or(str::is_empty) && tool_calls.is_empty() && opaque.is_empty())
    });
}

/// Each run of tool results stably sorted by the position of its call in the turn before.
fn order_results(messages: &mut [Message]) {
    let mut i = 0;
    while i < messages.len() {
        if !matches!(messages[i], Message::Tool { .. }) {
            i += 1;
            continue;
        }
        let start = i;
        while i < messages.len() && matches!(messages[i], Message::Tool { .. }) {
            i += 1;
        }
        let calls: Vec<String> = messages[..start]
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { tool_calls, .. } => {
                    Some(tool_calls.iter().map(|c| c.id.clone()).collect())
                }
                _ => None,
            })
            .unwrap_or_default();
        messages[start..i].sort_by_key(|m| match m {
            Message::Tool { call_id, .. } => calls
                .iter()
                .position(|c| c == call_id)
                .unwrap_or(usize::MAX),
            _ => usize::MAX,
        });
    }
}

/// The decoded request with tool result text compared as JSON.
fn comparable(d: &DecodedRequest) -> Value {
    let mut r = d.request.clone();
    for m in &mut r.messages {
        if let Message::Tool { content, .. } = m {
            *content = json_text(content);
        }
    }
    let mut v = DecodedRequest {
        request: r,
        extras: Vec::new(),
    }
    .to_json();
    v.as_object_mut().unwrap().remove("extras");
    v
}

/// Gemini links a `functionResponse` by name (its `id` is only echoed): a result under an id no
/// call had decodes as answering the first unanswered call of its name in the latest model turn.
fn link_by_name(messages: &mut [Message], call_ids: &[String]) {
    let mut turn: Vec<(String, String)> = Vec::new();
    for m in messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                turn = tool_calls
                    .iter()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
            }
            Message::Tool { call_id, name, .. } => {
                if !call_ids.contains(call_id)
                    && let Some(i) = turn.iter().position(|(_, n)| n == name)
                {
                    *call_id = turn[i].0.clone();
                }
                turn.retain(|(id, _)| id != call_id);
            }
            _ => {}
        }
    }
}

fn neutral_json(r: &ChatRequest) -> Value {
    comparable(&DecodedRequest {
        request: r.clone(),
        extras: Vec::new(),
    })
}

/// Decodes `wire` and compares it with the neutral request `n`; `Err` says how it differs.
fn round_trip(provider: Provider, wire: &HttpRequest, n: &ChatRequest) -> Result<(), String> {
    let decoded = tooltape::decode_request(provider, wire).map_err(|e| e.to_string())?;
    if provider == Provider::TextProtocol {
        // The Chat request the text protocol sends: tools live in the injected instructions.
        let r = &decoded.request;
        let ok = r.model == n.model
            && r.stream == n.stream
            && r.max_tokens == n.max_tokens
            && r.tools.is_empty()
            && r.tool_choice.is_none()
            && matches!(
                r.messages.first(),
                Some(Message::System { .. }) | Some(Message::User { .. })
            );
        return if ok {
            Ok(())
        } else {
            Err(format!(
                "text-protocol request decoded as {:#?}",
                decoded.request
            ))
        };
    }
    let unknown: Vec<_> = decoded
        .extras
        .iter()
        .filter(|e| e.kind == tooltape::providers::ExtraKind::Unknown)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "the project's own encoder sent unknown fields: {unknown:?}"
        ));
    }
    let got = comparable(&decoded);
    let want = neutral_json(&expected(provider, n));
    if got == want {
        return Ok(());
    }
    // One line per differing key: what was decoded, what the neutral request means.
    let diff: Vec<String> = want
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, w)| got.get(k.as_str()) != Some(*w))
        .map(|(k, w)| {
            format!(
                "  {k}:\n    - decoded:  {}\n    + expected: {w}",
                got[k.as_str()]
            )
        })
        .collect();
    Err(diff.join("\n"))
}

#[test]
fn every_shipped_trial_round_trips() {
    let d = tooltape::discover(repo());
    assert!(!d.trials.is_empty(), "no trials discovered");
    let mut failures = Vec::new();
    let (mut first_ok, mut encode_refused, mut followups_ok, mut cassettes) = (0, 0, 0, 0);
    for trial in &d.trials {
        let neutral = trial.first_request();
        match tooltape::encode(trial.provider, &neutral) {
            Err(_) => encode_refused += 1,
            Ok(enc) => match round_trip(trial.provider, &enc.request, &neutral) {
                Ok(()) => first_ok += 1,
                Err(e) => failures.push(format!(
                    "{}:1: {}: the first request does not decode back:\n{e}",
                    trial.case.path.display(),
                    trial.name()
                )),
            },
        }
        let (n, f) = cassette_round_trips(repo(), trial);
        cassettes += usize::from(n > 0 || !f.is_empty());
        followups_ok += n;
        failures.extend(f);
    }
    eprintln!(
        "request decoders: {first_ok} first requests round-trip ({encode_refused} refused by the \
         encoder, not sent); {followups_ok} recorded requests in {cassettes} cassettes round-trip; \
         {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} request(s) do not decode back to their neutral request:\n\n{}\n\n\
         fix the decoder (src/providers/*/request.rs) or `expected` here, then: \
         cargo test --test it request_decoders",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Replays the trial's cassette (the one road: `harness::run_on_cassette`) to get each
/// exchange's neutral request, and decodes the request the cassette recorded for it.
fn cassette_round_trips(root: &Path, trial: &Trial) -> (usize, Vec<String>) {
    let path = root.join(trial.cassette_path());
    let Ok(Some((cassette, _))) = tooltape::cassette::load(&path) else {
        return (0, Vec::new());
    };
    let (run, mismatches) =
        tooltape::runtime().block_on(tooltape::harness::run_on_cassette(trial, &cassette));
    if !mismatches.is_empty() {
        // Stale: the suite's own replay test reports it; the requests are not the encoder's.
        return (0, Vec::new());
    }
    let mut ok = 0;
    let mut failures = Vec::new();
    for (i, (ex, it)) in run.exchanges.iter().zip(&cassette.interactions).enumerate() {
        match round_trip(
            trial.provider,
            &it.request,
            &as_referred(&it.request, as_continued(&it.request, &ex.neutral)),
        ) {
            Ok(()) => ok += 1,
            Err(e) => failures.push(format!(
                "{}:1: interaction {} does not decode back:\n{e}",
                trial.cassette_path().display(),
                i + 1
            )),
        }
    }
    (ok, failures)
}

/// A round continued by `previous_response_id` (class 22) carries only its results besides the
/// instructions: the neutral request as that request means it.
fn as_continued(wire: &HttpRequest, n: &ChatRequest) -> ChatRequest {
    let mut c = n.clone();
    if wire.body.get("previous_response_id").is_none() {
        return c;
    }
    let results = (c.messages.iter().rev())
        .take_while(|m| matches!(m, Message::Tool { .. }))
        .count();
    let cut = c.messages.len() - results;
    let mut kept: Vec<Message> = (c.messages[..cut].iter())
        .filter(|m| matches!(m, Message::System { .. }))
        .cloned()
        .collect();
    kept.extend(c.messages.drain(cut..));
    c.messages = kept;
    c
}

/// A round sending reasoning items back by `item_reference` (class 19, `continue_with =
/// "item_reference"`): each reasoning item the request refers to stands as its reference.
fn as_referred(wire: &HttpRequest, mut n: ChatRequest) -> ChatRequest {
    let referred: Vec<&Value> = (wire.body["input"].as_array().into_iter().flatten())
        .filter(|i| i["type"] == "item_reference")
        .map(|i| &i["id"])
        .collect();
    for m in &mut n.messages {
        if let Message::Assistant { opaque, .. } = m {
            for item in opaque.iter_mut() {
                if item["type"] == "reasoning" && referred.contains(&&item["id"]) {
                    *item = serde_json::json!({"type": "item_reference", "id": item["id"]});
                }
            }
        }
    }
    n
}

// ---- Real traffic ----

/// The record's request as an `HttpRequest`: the URL's path and query, the parsed body.
fn http_request(record: &Value) -> HttpRequest {
    let r = &record["request"];
    let url = r["url"].as_str().unwrap();
    let after_host = url.splitn(4, '/').nth(3).unwrap_or("");
    let (path, query) = after_host.split_once('?').unwrap_or((after_host, ""));
    let mut req = HttpRequest::post(format!("/{path}"), r["body"].clone());
    req.method = r["method"].as_str().unwrap_or("POST").to_string();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        req.query.insert(k.to_string(), v.to_string());
    }
    req
}

/// The decoded tool choice in `request_meta`'s spelling (`required`, `any`, `ANY`,
/// `forced:NAME`, `forced:NAME+no_parallel`, `ANY:NAME`, `allowed_tools:MODE:A,B`).
fn meta_choice(provider: Provider, r: &ChatRequest) -> Option<String> {
    let choice = r.tool_choice.as_ref()?;
    Some(match (provider, choice) {
        (Provider::Gemini, ToolChoice::Auto) => "AUTO".into(),
        (Provider::Gemini, ToolChoice::None) => "NONE".into(),
        (Provider::Gemini, ToolChoice::Required) => "ANY".into(),
        (Provider::Gemini, ToolChoice::Forced(n)) => format!("ANY:{n}"),
        (Provider::Gemini, ToolChoice::Allowed { tools, .. }) => format!("ANY:{}", tools.join(",")),
        (Provider::Anthropic, ToolChoice::Required) => "any".into(),
        (Provider::Anthropic, ToolChoice::Forced(n)) if r.parallel_tool_calls == Some(false) => {
            format!("forced:{n}+no_parallel")
        }
        (_, ToolChoice::Forced(n)) => format!("forced:{n}"),
        (_, ToolChoice::Auto) => "auto".into(),
        (_, ToolChoice::None) => "none".into(),
        (_, ToolChoice::Required) => "required".into(),
        (_, ToolChoice::Allowed { mode, tools }) => format!(
            "allowed_tools:{}:{}",
            match mode {
                AllowedMode::Auto => "auto",
                AllowedMode::Required => "required",
            },
            tools.join(",")
        ),
    })
}

#[test]
fn real_requests_decode_with_their_declared_tools_and_choice() {
    let Some(records) = crate::needs::real_traffic_records() else {
        return;
    };
    let mut failures = Vec::new();
    let mut decoded_n = 0;
    let mut unknown = std::collections::BTreeSet::new();
    for rec in &records {
        let id = rec["id"].as_str().unwrap();
        let provider = Provider::from_slug(rec["api"].as_str().unwrap()).unwrap();
        let meta = &rec["request_meta"];
        let d = match tooltape::decode_request(provider, &http_request(rec)) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{id}: {e}"));
                continue;
            }
        };
        decoded_n += 1;
        let r = &d.request;
        let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
        let want: Vec<&str> = meta["tool_names"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if names != want {
            failures.push(format!("{id}: tools {names:?}, request_meta says {want:?}"));
        }
        let choice = meta_choice(provider, r);
        if choice.as_deref() != meta["tool_choice"].as_str() {
            failures.push(format!(
                "{id}: tool_choice {choice:?} ({:?}), request_meta says {}",
                r.tool_choice, meta["tool_choice"]
            ));
        }
        if let Some(model) = meta["model"].as_str()
            && r.model != model
        {
            failures.push(format!(
                "{id}: model {}, request_meta says {model}",
                r.model
            ));
        }
        if r.stream != rec["stream"].as_bool().unwrap_or(false) {
            failures.push(format!(
                "{id}: stream {}, the record says otherwise",
                r.stream
            ));
        }
        let results: Vec<&Message> = r
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { .. }))
            .collect();
        if results.is_empty() == meta["has_tool_results"].as_bool().unwrap_or(false) {
            failures.push(format!(
                "{id}: {} tool results, request_meta has_tool_results = {}",
                results.len(),
                meta["has_tool_results"]
            ));
        }
        // Every result is linked to a call made earlier, and names it.
        for (i, m) in r.messages.iter().enumerate() {
            if let Message::Tool { call_id, name, .. } = m {
                let linked = r.messages[..i].iter().any(|p| match p {
                    Message::Assistant { tool_calls, .. } => tool_calls
                        .iter()
                        .any(|c| &c.id == call_id && &c.name == name),
                    _ => false,
                });
                if !linked {
                    failures.push(format!(
                        "{id}: tool result `{call_id}` ({name}) answers no earlier call"
                    ));
                }
            }
        }
        for e in d.extras_of(tooltape::providers::ExtraKind::Unknown) {
            unknown.insert(format!("{}: {}", rec["api"].as_str().unwrap(), e.pointer));
        }
    }
    eprintln!(
        "real traffic: {decoded_n} of {} requests decode; fields unknown to the decoders: {unknown:?}",
        records.len()
    );
    assert!(
        failures.is_empty(),
        "{} problem(s) decoding real requests:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---- The command ----

fn parse_request(args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(bin())
        .arg("parse-request")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn parse_request_prints_the_neutral_request_in_a_fixed_key_order() {
    let whole = r#"{"method":"POST","path":"/v1beta/models/gemini-3.8-flash:streamGenerateContent",
        "query":{"alt":"sse","key":"SECRET"},
        "body":{"contents":[{"role":"user","parts":[{"text":"hi"}]}],
                "tools":[{"functionDeclarations":[{"name":"ping"}]}],
                "toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}}"#;
    let out = parse_request(&["--provider", "gemini"], whole);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains("SECRET"),
        "a credential was printed:\n{text}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "model",
            "stream",
            "max_tokens",
            "thinking",
            "strict",
            "tools",
            "hosted",
            "tool_choice",
            "parallel_tool_calls",
            "messages",
            "extras"
        ]
    );
    assert_eq!(v["model"], "gemini-3.8-flash");
    assert_eq!(v["stream"], true);
    assert_eq!(v["tool_choice"], "required");
    assert_eq!(
        v["tools"][0]["parameters"],
        serde_json::json!({"type": "object", "properties": {}})
    );

    // A bare body takes the provider's path; a bare Gemini body needs --path.
    let bare = r#"{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"tool_choice":"required"}"#;
    let out = parse_request(&["--provider", "openai-chat"], bare);
    assert_eq!(out.status.code(), Some(0));
    let out = parse_request(&["--provider", "gemini"], r#"{"contents":[]}"#);
    assert_eq!(out.status.code(), Some(2));
    let out = parse_request(
        &[
            "--provider",
            "gemini",
            "--path",
            "/v1beta/models/m:generateContent?alt=sse",
        ],
        r#"{"contents":[]}"#,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn parse_request_names_the_field_of_a_body_that_is_not_a_request() {
    let out = parse_request(
        &["--provider", "anthropic"],
        r#"{"model":"c","messages":{}}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "<stdin>: not a valid anthropic request: /messages: expected an array, found an object\n"
    );
    let out = parse_request(&["--provider", "anthropic"], "{\n  \"model\": ,\n}");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("<stdin>:2:12: not JSON:"),
    );
}

#[test]
fn parse_request_reads_a_named_or_detected_chat_dialect() {
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],
        "tools":[{"type":"function","function":{"name":"ping","parameters":{"type":"object"}}}],
        "tool_choice":"any"}"#;
    for args in [
        &["--provider", "openai-chat", "--dialect", "mistral"][..],
        &["--provider", "openai-chat"][..],
    ] {
        let out = parse_request(args, body);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["tool_choice"], "required", "{v}");
        assert_eq!(v["extras"][0]["pointer"], "dialect", "{v}");
        assert_eq!(v["extras"][0]["value"], "mistral", "{v}");
    }
    // OpenAI's own dialect refuses Mistral's `any`, naming the field.
    let out = parse_request(&["--provider", "openai-chat", "--dialect", "openai"], body);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/tool_choice: unknown tool choice `any`"),
        "{err}"
    );
    // An unknown dialect, or one given for another format, is a usage error naming the choices.
    // (No input: the command stops before reading it.)
    let out = parse_request(&["--provider", "openai-chat", "--dialect", "nope"], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(0) && err.contains("mistral, groq"),
        "{err}"
    );
    let out = parse_request(&["--provider", "anthropic", "--dialect", "groq"], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(0) && err.contains("--dialect is for"),
        "{err}"
    );
}
