//! Programmatic tool calling as the simulated model answers it (class 30): the model writes
//! code that the runner executes, and the code calls the client tools `allowed_callers` lets it
//! call. The answer carries the runner's server call (Anthropic a code-execution
//! `server_tool_use` block, Responses a `program` item), each call with its `caller`, and on
//! Anthropic the `container` the code runs in; after the results, the program's output (a
//! `code_execution_tool_result` block, a `program_output` item) before the text. The next
//! round is checked as the APIs do: a caller whose server call is not in the conversation, a
//! tool only code may call called directly, and (Anthropic) a container not named again are
//! refused. The simulator's own reading: it shares no codec with `providers/` (sources and
//! UNCONFIRMED wordings: docs/wire-formats.md).

use serde_json::{Value, json};

use super::decide::{Ask, Call};
use super::errors::Rejection;
use super::wire;

/// The prefix of Anthropic's code-execution tool types (the runner, and the callers it names).
pub(super) const ANTHROPIC_PREFIX: &str = "code_execution_";

/// Responses' runner type, and the caller type its calls carry.
pub(super) const RESPONSES_TYPE: &str = "programmatic_tool_calling";
const RESPONSES_CALLER: &str = "program";

/// A tool's `allowed_callers` read: whether code may call it, and whether the model may
/// (absent: the model only).
pub(super) fn callers(tool: &Value) -> (bool, bool) {
    let Some(list) = tool.get("allowed_callers").and_then(Value::as_array) else {
        return (false, true);
    };
    let names = || list.iter().filter_map(Value::as_str);
    let by_code = names().any(|c| c.starts_with(ANTHROPIC_PREFIX) || c == "programmatic");
    (by_code, names().any(|c| c == "direct"))
}

/// Records a declared tool's callers in `ask`; a tool only code may call with no runner
/// declared is refused once every tool is read (see [`check_runner`]).
pub(super) fn read_tool(ask: &mut Ask, name: &str, tool: &Value) {
    let (by_code, direct) = callers(tool);
    if by_code {
        ask.by_code.push(name.to_string());
    }
    if !direct {
        ask.code_only.push(name.to_string());
    }
}

/// A tool only code may call needs the runner beside it (UNCONFIRMED wording).
pub(super) fn check_runner(ask: &Ask) -> Result<(), Rejection> {
    match ask.code_only.first() {
        Some(name) if ask.programmatic.is_none() => Err(Rejection::bad_request(format!(
            "tool `{name}` can only be called from code (allowed_callers) but the request declares no code execution tool to call it"
        ))),
        _ => Ok(()),
    }
}

/// The code the model writes: one awaited call per call it makes.
fn code(calls: &[&Call]) -> String {
    (calls.iter())
        .map(|c| {
            format!(
                "print(await {}(**{}))\n",
                c.name,
                wire::compact(&c.arguments)
            )
        })
        .collect()
}

/// The calls the turn's code makes.
pub(super) fn by_program(calls: &[Call]) -> Vec<&Call> {
    calls.iter().filter(|c| c.by_program).collect()
}

/// Anthropic's runner block for the calls its code makes, and its id (the callers' `tool_id`).
pub(super) fn anthropic_runner(seed: u64, calls: &[&Call]) -> (Value, String) {
    let id = wire::id("srvtoolu_", seed, "code-execution", 0, 24);
    let block = json!({"type": "server_tool_use", "id": id, "name": "code_execution",
                       "input": {"code": code(calls)}});
    (block, id)
}

/// An Anthropic `tool_use` block's caller: the runner's type and server call.
pub(super) fn anthropic_caller(variant: &str, runner: &str) -> Value {
    json!({"type": variant, "tool_id": runner})
}

/// Anthropic's `container` of an answer whose code runs on.
pub(super) fn container(seed: u64) -> Value {
    json!({"id": wire::id("container_", seed, "container", 0, 24),
           "expires_at": "2026-12-31T23:59:59Z"})
}

/// Anthropic's result of the program once its calls are answered.
pub(super) fn anthropic_output(runner: &str, results: &[String]) -> Value {
    json!({"type": "code_execution_tool_result", "tool_use_id": runner,
           "content": {"type": "code_execution_result", "stdout": stdout(results),
                       "stderr": "", "return_code": 0, "content": []}})
}

fn stdout(results: &[String]) -> String {
    results.iter().map(|r| format!("{r}\n")).collect()
}

/// Responses' `program` item for the calls its code makes, and its `call_id` (the callers'
/// `caller_id`).
pub(super) fn responses_program(seed: u64, calls: &[&Call]) -> (Value, String) {
    let call_id = wire::id("call_", seed, "program", 0, 24);
    let item = json!({"id": wire::id("cm_", seed, "cm", 0, 48), "type": "program",
        "call_id": call_id, "code": code(calls),
        "fingerprint": wire::id("gAAAAAB", seed, "program-fingerprint", 0, 96)});
    (item, call_id)
}

/// A Responses `function_call` item's caller: the program's call.
pub(super) fn responses_caller(program: &str) -> Value {
    json!({"type": RESPONSES_CALLER, "caller_id": program})
}

/// Responses' `program_output` item once the program's calls are answered.
pub(super) fn responses_output(program: &str, results: &[String]) -> Value {
    let seed = crate::fnv::fnv1a(program.as_bytes());
    json!({"id": wire::id("cmo_", seed, "cmo", 0, 48), "type": "program_output",
           "status": "completed", "call_id": program, "result": stdout(results)})
}

/// An Anthropic request's history checked as the API does: a `tool_use` whose caller names a
/// server call the conversation does not hold ("source tool … not found"), a tool only code may
/// call in a `tool_use` without a caller, and a conversation with programmatic calls that does
/// not name their `container`. Returns the runner call whose calls the last turn answers.
pub(super) fn anthropic_history(
    body: &Value,
    messages: &[Value],
    ask: &Ask,
) -> Result<Option<String>, Rejection> {
    let mut runners: Vec<&str> = Vec::new();
    let mut pending = None;
    for (i, m) in messages.iter().enumerate() {
        let blocks = m.get("content").and_then(Value::as_array);
        for (k, b) in blocks.into_iter().flatten().enumerate() {
            let at = format!("messages.{i}.content.{k}");
            match b.get("type").and_then(Value::as_str).unwrap_or_default() {
                "server_tool_use" if b.get("name") == Some(&json!("code_execution")) => {
                    runners.extend(b.get("id").and_then(Value::as_str));
                }
                "tool_use" => {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default();
                    let name = b.get("name").and_then(Value::as_str).unwrap_or_default();
                    let caller = b.get("caller").filter(|c| c["type"] != "direct");
                    match caller.map(|c| c.get("tool_id").and_then(Value::as_str)) {
                        Some(Some(source)) if runners.contains(&source) => {
                            pending = Some(source.to_string());
                        }
                        Some(source) => {
                            return Err(Rejection::bad_request(format!(
                                "source tool `{}` not found for tool use block `{id}`",
                                source.unwrap_or_default()
                            )));
                        }
                        None if ask.code_only.iter().any(|t| t == name) => {
                            return Err(Rejection::bad_request(format!(
                                "{at}: tool `{name}` can only be called from code execution (allowed_callers), but tool use block `{id}` has no caller"
                            )));
                        }
                        None => {}
                    }
                }
                _ => {}
            }
        }
    }
    if pending.is_some() && body.get("container").is_none_or(Value::is_null) {
        return Err(Rejection::bad_request(
            "container: the conversation continues programmatic tool calls: name the container they run in (the `container` id of the response that made them)",
        ));
    }
    Ok(pending)
}

/// A Responses request's input items checked as the API does: a `function_call` whose caller
/// names a program the input does not hold, and a function only code may call replayed without
/// a caller. Returns the program whose calls the input answers.
pub(super) fn responses_history(items: &[Value], ask: &Ask) -> Result<Option<String>, Rejection> {
    let mut programs: Vec<&str> = Vec::new();
    let mut pending = None;
    for (i, item) in items.iter().enumerate() {
        match item.get("type").and_then(Value::as_str).unwrap_or_default() {
            "program" => programs.extend(item.get("call_id").and_then(Value::as_str)),
            "function_call" => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                let caller = item.get("caller").filter(|c| c["type"] != "direct");
                match caller.map(|c| c.get("caller_id").and_then(Value::as_str)) {
                    Some(Some(program)) if programs.contains(&program) => {
                        pending = Some(program.to_string());
                    }
                    Some(program) => {
                        return Err(Rejection::bad_request(format!(
                            "No program found for caller_id '{}' of function_call input[{i}]",
                            program.unwrap_or_default()
                        ))
                        .param(&format!("input[{i}].caller")));
                    }
                    None if ask.code_only.iter().any(|t| t == name) => {
                        return Err(Rejection::bad_request(format!(
                            "input[{i}]: function '{name}' can only be called by a program (allowed_callers), but the function_call has no caller"
                        ))
                        .param(&format!("input[{i}].caller")));
                    }
                    None => {}
                }
            }
            _ => {}
        }
    }
    Ok(pending)
}

#[cfg(test)]
#[path = "tests/programmatic.rs"]
mod tests;
