//! The simulator's programmatic calling: the next round's refusals as the APIs answer them (a
//! caller whose server call the conversation lacks, a tool only code may call called directly,
//! Anthropic's container not named), and the runner call it continues.

use serde_json::{Value, json};

use super::super::decide::Ask;
use super::*;

fn ask() -> Ask {
    let mut ask = Ask::new("m");
    ask.programmatic = Some("code_execution_20250825".into());
    read_tool(
        &mut ask,
        "query",
        &json!({"allowed_callers": ["code_execution_20250825"]}),
    );
    ask
}

fn anthropic_turn(runner: bool, caller: Option<&str>) -> Value {
    let mut content = Vec::new();
    if runner {
        content.push(json!({"type": "server_tool_use", "id": "srvtoolu_1",
                            "name": "code_execution", "input": {"code": "…"}}));
    }
    let mut call = json!({"type": "tool_use", "id": "toolu_1", "name": "query", "input": {}});
    if let Some(id) = caller {
        call["caller"] = json!({"type": "code_execution_20250825", "tool_id": id});
    }
    content.push(call);
    json!({"role": "assistant", "content": content})
}

#[test]
fn a_tool_only_code_may_call_needs_the_runner() {
    let mut a = ask();
    assert_eq!(
        (a.by_code.clone(), a.code_only.clone()),
        (vec!["query".to_string()], vec!["query".to_string()])
    );
    assert!(check_runner(&a).is_ok());
    a.programmatic = None;
    assert!(
        check_runner(&a)
            .unwrap_err()
            .message
            .contains("no code execution tool")
    );
    // `direct` beside it: the model may call it too.
    assert_eq!(
        callers(&json!({"allowed_callers": ["direct", "programmatic"]})),
        (true, true)
    );
    assert_eq!(callers(&json!({})), (false, true));
}

#[test]
fn anthropic_continues_a_program_whose_server_call_and_container_come_back() {
    let body = json!({"container": "container_1"});
    let turn = [anthropic_turn(true, Some("srvtoolu_1"))];
    assert_eq!(
        anthropic_history(&body, &turn, &ask()).unwrap().as_deref(),
        Some("srvtoolu_1")
    );
}

#[test]
fn anthropic_refuses_a_lost_server_call_a_lost_caller_and_a_lost_container() {
    let body = json!({"container": "container_1"});
    let err = anthropic_history(&body, &[anthropic_turn(false, Some("srvtoolu_1"))], &ask());
    assert_eq!(
        err.unwrap_err().message,
        "source tool `srvtoolu_1` not found for tool use block `toolu_1`"
    );
    let err = anthropic_history(&body, &[anthropic_turn(true, None)], &ask());
    assert!(err.unwrap_err().message.contains("has no caller"));
    let err = anthropic_history(
        &json!({}),
        &[anthropic_turn(true, Some("srvtoolu_1"))],
        &ask(),
    );
    assert!(err.unwrap_err().message.starts_with("container:"));
}

#[test]
fn responses_refuses_a_lost_program_and_a_lost_caller() {
    let mut a = ask();
    a.programmatic = Some(RESPONSES_TYPE.into());
    let program = json!({"type": "program", "call_id": "call_p", "code": "…"});
    let call = |caller: Option<&str>| {
        let mut c = json!({"type": "function_call", "call_id": "call_1", "name": "query", "arguments": "{}"});
        if let Some(id) = caller {
            c["caller"] = json!({"type": "program", "caller_id": id});
        }
        c
    };
    let ok = [program.clone(), call(Some("call_p"))];
    assert_eq!(
        responses_history(&ok, &a).unwrap().as_deref(),
        Some("call_p")
    );
    let err = responses_history(&[call(Some("call_p"))], &a).unwrap_err();
    assert!(
        err.message
            .contains("No program found for caller_id 'call_p'"),
        "{}",
        err.message
    );
    let err = responses_history(&[program, call(None)], &a).unwrap_err();
    assert!(
        err.message.contains("can only be called by a program"),
        "{}",
        err.message
    );
}
