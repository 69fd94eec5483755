//! `tooltape parse --provider text-protocol --request REQ.json [--stream] [FILE]`: a raw Chat
//! Completions body (JSON or SSE) → one JSON object with calls, text, finish and diagnostics.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::exit::{CliError, CommandResult};
use tooltape::providers::text_protocol::{Stream, decode_with};
use tooltape::textcall::ParserConfig;
use tooltape::{
    ChatRequest, HttpResponse, Outcome, StrictPolicy, Tool, ToolChoice, inject::request::Choice,
    inject::request::function_tools, inject::request::tool_choice, model::AllowedMode,
};

/// Prints the outcome of `body` decoded under `request_json`'s parser configuration. Exit 2 with
/// one line (`NAME: request: …` or `NAME: response: …`, with line and column where known) when
/// an input cannot be read; exit 1 when the body is a provider error (`NAME: response: provider
/// error …`), since there is no outcome to print. `name` names the body.
pub(super) fn run(request_json: &str, body: &[u8], stream: bool, name: &str) -> CommandResult {
    let request =
        super::inject::request_object(request_json).map_err(|line| format!("{name}: {line}"))?;
    let req = chat_request(&request, stream);
    let config = ParserConfig::from_request(&request);
    let decoded = if stream {
        let mut s = Stream::with_config(&req, config);
        s.push(body).and_then(|()| s.finish())
    } else {
        let resp = HttpResponse {
            status: 200,
            headers: BTreeMap::new(),
            body: body.to_vec(),
        };
        decode_with(&req, &resp, config)
    };
    let outcome = decoded.map_err(|e| format!("{name}: response: {e}"))?;
    if let Some(e) = &outcome.error {
        return Err(CliError::FailedWith(format!(
            "{name}: response: provider error ({}): {}",
            e.status, e.message
        )));
    }
    // The rendered object ends in a newline, and `outln!` adds one: a blank line closes it.
    outln!("{}", render(&outcome));
    Ok(())
}

/// The printed object, keys in the documented order, pretty-printed with a final newline.
fn render(outcome: &Outcome) -> String {
    let calls: Vec<Value> = outcome
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
        .collect();
    let v = json!({
        "tool_calls": calls,
        "text": outcome.text,
        "finish_reason": outcome.finish,
        "raw_finish_reason": outcome.raw_finish,
        "diagnostics": outcome.diagnostics,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// The neutral request the Chat decoder needs, from a Responses- or Chat-shaped request JSON.
fn chat_request(request: &Value, stream: bool) -> ChatRequest {
    let tools = function_tools(request)
        .into_iter()
        .map(|t| Tool {
            strict: t.strict.then_some(true),
            ..Tool::function(
                t.name,
                t.description.map(str::to_string),
                (t.parameters.cloned()).unwrap_or_else(tooltape::model::empty_parameters),
            )
        })
        .collect();
    let tool_choice = request
        .get("tool_choice")
        .map(|_| match tool_choice(request) {
            Choice::Auto => ToolChoice::Auto,
            Choice::None => ToolChoice::None,
            Choice::Required => ToolChoice::Required,
            Choice::Forced(n) => ToolChoice::Forced(n),
            Choice::Allowed { required, tools } => ToolChoice::Allowed {
                mode: if required {
                    AllowedMode::Required
                } else {
                    AllowedMode::Auto
                },
                tools,
            },
        });
    ChatRequest {
        server: tooltape::model::ServerContext::default(),
        model: request
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        messages: Vec::new(),
        tools,
        hosted: Vec::new(),
        tool_choice,
        parallel_tool_calls: None,
        stream,
        max_tokens: None,
        strict: StrictPolicy::Off,
        thinking: None,
    }
}
