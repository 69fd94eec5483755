//! The programmatic checks (class 30): the runner and each tool's callers upstream; each call
//! the model's code made handed over with its caller (and Anthropic's container); on the next
//! round the caller, the runner's server call and the container carried back. Silence when
//! they are, and where the answer had none.

use serde_json::{Value, json};

use super::{one, round_after, silent, weather_call};
use crate::engine::check::{FindingKind, Side, callers_handed, program_kept, programmable_kept};
use crate::model::{
    Caller, ChatRequest, HostedTool, Message, Outcome, PROGRAMMATIC, Provider, Severity, Tool,
    ToolCall,
};

const RUNNER_ID: &str = "srvtoolu_run";

fn caller() -> Caller {
    Caller {
        kind: "code_execution_20250825".into(),
        id: RUNNER_ID.into(),
    }
}

fn call(caller: Option<Caller>) -> ToolCall {
    ToolCall {
        caller,
        ..weather_call()
    }
}

fn runner() -> Value {
    json!({"type": "server_tool_use", "id": RUNNER_ID, "name": "code_execution",
           "input": {"code": "print(await get_weather(city='Bern'))"}})
}

fn answered(container: Option<&str>) -> Outcome {
    Outcome {
        tool_calls: vec![call(Some(caller()))],
        opaque: vec![runner()],
        container: container.map(str::to_string),
        ..Outcome::default()
    }
}

fn follow_up(caller: Option<Caller>, opaque: Vec<Value>, container: Option<&str>) -> ChatRequest {
    let mut req = round_after(Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![call(caller)],
        opaque,
    });
    req.server.container = container.map(str::to_string);
    req
}

fn client(callers: Vec<String>, runner: bool) -> ChatRequest {
    let mut req = ChatRequest::new("m").with_user("weather?").with_tool(Tool {
        allowed_callers: callers,
        ..Tool::function("get_weather", None, json!({"type": "object"}))
    });
    if runner {
        req.hosted.push(HostedTool::Programmatic {
            variant: "code_execution_20250825".into(),
        });
    }
    req
}

#[test]
fn runner_and_callers_sent_are_silent() {
    let c = client(vec![PROGRAMMATIC.into()], true);
    silent(&programmable_kept(&c, &c.clone()));
}

#[test]
fn runner_dropped_is_a_breaking_finding() {
    let found = programmable_kept(
        &client(vec![PROGRAMMATIC.into()], true),
        &client(vec![PROGRAMMATIC.into()], false),
    );
    one(
        &found,
        FindingKind::Programmatic,
        Side::Upstream,
        Severity::Breaking,
        "runner `code_execution_20250825` dropped",
    );
}

#[test]
fn callers_dropped_is_a_breaking_finding() {
    let found = programmable_kept(
        &client(vec![PROGRAMMATIC.into()], true),
        &client(Vec::new(), true),
    );
    one(
        &found,
        FindingKind::Programmatic,
        Side::Upstream,
        Severity::Breaking,
        "`allowed_callers` dropped or changed",
    );
}

#[test]
fn caller_and_container_handed_over_are_silent() {
    let a = answered(Some("container_1"));
    silent(&callers_handed(&a, &a.clone(), Provider::Anthropic));
}

#[test]
fn caller_lost_downstream_is_a_breaking_finding() {
    let got = Outcome {
        tool_calls: vec![call(None)],
        container: Some("container_1".into()),
        ..Outcome::default()
    };
    let found = callers_handed(&answered(Some("container_1")), &got, Provider::Anthropic);
    one(
        &found,
        FindingKind::Programmatic,
        Side::Downstream,
        Severity::Breaking,
        "handed over without its caller `srvtoolu_run`",
    );
}

#[test]
fn container_lost_downstream_is_a_finding_for_anthropic_callers_only() {
    let got = Outcome {
        tool_calls: vec![call(Some(caller()))],
        ..Outcome::default()
    };
    let a = answered(Some("container_1"));
    one(
        &callers_handed(&a, &got, Provider::Anthropic),
        FindingKind::Programmatic,
        Side::Downstream,
        Severity::Breaking,
        "container `container_1` not handed over",
    );
    // Another API's caller has nothing to carry the call's caller or the container in.
    silent(&callers_handed(
        &a,
        &Outcome::default(),
        Provider::OpenaiChat,
    ));
}

#[test]
fn everything_carried_back_is_silent() {
    let sent = follow_up(Some(caller()), vec![runner()], Some("container_1"));
    silent(&program_kept(&answered(Some("container_1")), &sent));
    // Calls the model made itself carry nothing more.
    silent(&program_kept(
        &Outcome {
            tool_calls: vec![weather_call()],
            ..Outcome::default()
        },
        &follow_up(None, Vec::new(), None),
    ));
}

#[test]
fn caller_not_sent_back_is_a_breaking_finding() {
    let sent = follow_up(None, vec![runner()], Some("container_1"));
    one(
        &program_kept(&answered(Some("container_1")), &sent),
        FindingKind::Programmatic,
        Side::Upstream,
        Severity::Breaking,
        "sent back without its caller `srvtoolu_run`",
    );
}

#[test]
fn runner_call_not_sent_back_is_a_breaking_finding() {
    let sent = follow_up(Some(caller()), Vec::new(), Some("container_1"));
    one(
        &program_kept(&answered(Some("container_1")), &sent),
        FindingKind::Programmatic,
        Side::Upstream,
        Severity::Breaking,
        "server call `srvtoolu_run` that made call call_1 not sent back",
    );
}

#[test]
fn a_responses_program_item_is_found_by_its_call_id() {
    let program = json!({"type": "program", "id": "cm_1", "call_id": RUNNER_ID, "code": "…"});
    let a = Outcome {
        opaque: vec![program.clone()],
        ..answered(None)
    };
    silent(&program_kept(
        &a,
        &follow_up(Some(caller()), vec![program], None),
    ));
}

#[test]
fn a_program_sent_back_by_reference_is_carried() {
    let program = json!({"type": "program", "id": "cm_1", "call_id": RUNNER_ID, "code": "…"});
    let a = Outcome {
        opaque: vec![program],
        ..answered(None)
    };
    let reference = json!({"type": "item_reference", "id": "cm_1"});
    silent(&program_kept(
        &a,
        &follow_up(Some(caller()), vec![reference], None),
    ));
    let other = json!({"type": "item_reference", "id": "rs_1"});
    assert_eq!(
        program_kept(&a, &follow_up(Some(caller()), vec![other], None)).len(),
        1
    );
}

#[test]
fn container_not_named_is_a_breaking_finding() {
    let sent = follow_up(Some(caller()), vec![runner()], None);
    one(
        &program_kept(&answered(Some("container_1")), &sent),
        FindingKind::Programmatic,
        Side::Upstream,
        Severity::Breaking,
        "container `container_1` the programmatic calls ran in not named",
    );
}
