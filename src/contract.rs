//! Contract checks on a trial's outcomes, and the verdict (pass, fail, known failure, not
//! supported by design).

use serde::Serialize;
use serde_json::Value;

use crate::case::{ChoiceSpec, Trial};
use crate::model::{AllowedMode, DiagnosticKind, Outcome, Tool, ToolChoice};
use crate::run::TrialRun;

/// The result of checking one trial.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum ContractVerdict {
    Pass,
    /// What was expected and what came, one line each.
    Fail {
        problems: Vec<String>,
    },
    /// The case marks this trial as a known failure and it does fail.
    KnownFailure {
        reason: String,
        problems: Vec<String>,
    },
    /// The trial is marked a known failure but passes: the note must go.
    KnownFailurePasses {
        reason: String,
        note_at: String,
    },
    /// Encoding failed closed as the case expects: nothing was sent.
    NotApplicable {
        code: String,
        message: String,
    },
}

impl ContractVerdict {
    pub fn is_ok(&self) -> bool {
        matches!(
            self,
            ContractVerdict::Pass
                | ContractVerdict::KnownFailure { .. }
                | ContractVerdict::NotApplicable { .. }
        )
    }

    /// One-word status for reports.
    pub fn label(&self) -> &'static str {
        match self {
            ContractVerdict::Pass => "pass",
            ContractVerdict::Fail { .. } => "fail",
            ContractVerdict::KnownFailure { .. } => "known-failure",
            ContractVerdict::KnownFailurePasses { .. } => "fail",
            ContractVerdict::NotApplicable { .. } => "not-applicable",
        }
    }
}

/// Checks a finished run against the tool_choice contract, the tools' schemas and the case's
/// expectations, then applies the known-failure note.
pub(crate) fn verdict(trial: &Trial, run: &TrialRun) -> ContractVerdict {
    let expected_encode_error = trial
        .expectations()
        .into_iter()
        .find_map(|e| e.get_ref().encode_error.clone());
    if let (Some(code), Some(err)) = (&expected_encode_error, &run.encode_error)
        && &err.code == code
        && run.exchanges.is_empty()
    {
        return ContractVerdict::NotApplicable {
            code: err.code.clone(),
            message: err.message.clone(),
        };
    }
    let problems = problems(trial, run, expected_encode_error.as_deref());
    match (trial.known_failure(), problems.is_empty()) {
        (None, true) => ContractVerdict::Pass,
        (None, false) => ContractVerdict::Fail { problems },
        (Some(k), false) => ContractVerdict::KnownFailure {
            reason: k.get_ref().reason.clone(),
            problems,
        },
        (Some(k), true) if k.get_ref().flaky => ContractVerdict::Pass,
        (Some(k), true) => ContractVerdict::KnownFailurePasses {
            reason: k.get_ref().reason.clone(),
            note_at: trial.locate(k.span()),
        },
    }
}

/// Every way the run breaks the contract or the expectations; empty when it holds.
pub(crate) fn problems(
    trial: &Trial,
    run: &TrialRun,
    expected_encode_error: Option<&str>,
) -> Vec<String> {
    let mut p = Vec::new();
    if let Some(code) = expected_encode_error {
        match &run.encode_error {
            None => p.push(format!(
                "expected encoding to fail closed with {code}, but a request was built and sent"
            )),
            Some(e) => p.push(format!(
                "expected encoding to fail closed with {code}, got {e}"
            )),
        }
        return p;
    }
    if let Some(e) = &run.encode_error {
        p.push(format!("encoding failed: {e}"));
    }
    if let Some(e) = &run.transport_error {
        p.push(format!("transport failed: {e}"));
    }
    let expectations: Vec<_> = trial
        .expectations()
        .into_iter()
        .map(|e| e.get_ref().clone())
        .collect();
    let error_status = expectations.iter().find_map(|e| e.error_status);
    // An expected error is the last exchange's answer (a trial stops at an error).
    let last_index = run.judged().count().saturating_sub(1);
    for (i, ex) in run.judged().enumerate() {
        let outcome = match &ex.outcome {
            Ok(o) => o,
            Err(e) => {
                p.push(format!(
                    "exchange {}: the response does not decode: {e}",
                    i + 1
                ));
                continue;
            }
        };
        if i == last_index && error_status.is_some() {
            check_expected_error(&expectations, outcome, &mut p);
            continue;
        }
        if let Some(err) = &outcome.error {
            p.push(format!(
                "exchange {}: the provider answered an error: {} {} {}",
                i + 1,
                err.status,
                err.kind.as_deref().unwrap_or("-"),
                err.message
            ));
            continue;
        }
        if i == 0 {
            check_choice(trial, outcome, &mut p);
        }
        check_calls(&ex.neutral.tools, i, outcome, &mut p);
        check_diagnostics(i, outcome, &expectations, &mut p);
    }
    check_expectations(trial, run, &expectations, &mut p);
    if run.exchanges.is_empty() && run.encode_error.is_none() && run.transport_error.is_none() {
        p.push("no exchange took place".into());
    }
    p
}

/// Diagnostics of exchange `i`: a truncated stream or an unrecovered diagnostic the case's
/// expectations do not allow.
fn check_diagnostics(
    i: usize,
    outcome: &Outcome,
    expectations: &[crate::case::Expectation],
    p: &mut Vec<String>,
) {
    let allowed_diags: Vec<&String> = expectations
        .iter()
        .filter_map(|e| e.diagnostics.as_ref())
        .flatten()
        .collect();
    for d in &outcome.diagnostics {
        let name = kind_name(d.kind);
        if d.kind == DiagnosticKind::StreamTruncated
            && !allowed_diags.iter().any(|a| *a == "StreamTruncated")
        {
            p.push(format!(
                "exchange {}: the stream ended before its terminal event",
                i + 1
            ));
        } else if !d.recovered && !allowed_diags.iter().any(|a| **a == name) {
            p.push(format!(
                "exchange {}: unexpected diagnostic {name}: {}",
                i + 1,
                d.message
            ));
        }
    }
}

/// The case's `[[expect]]` entries, each against the run (calls, diagnostics, text, finish,
/// usage, arguments of the first exchange; counts; grounding).
fn check_expectations(
    trial: &Trial,
    run: &TrialRun,
    expectations: &[crate::case::Expectation],
    p: &mut Vec<String>,
) {
    let first = run.judged().next().and_then(|e| e.outcome.as_ref().ok());
    let last = run.judged().last().and_then(|e| e.outcome.as_ref().ok());
    for e in expectations {
        if let (Some(want), Some(o)) = (&e.calls, first) {
            let got: Vec<&str> = o.tool_calls.iter().map(|c| c.name.as_str()).collect();
            if got != want.iter().map(String::as_str).collect::<Vec<_>>() {
                p.push(format!("expected calls {want:?}, got {got:?}"));
            }
        }
        if let (Some(want), Some(o)) = (&e.diagnostics, first) {
            for w in want {
                if !o.diagnostics.iter().any(|d| kind_name(d.kind) == *w) {
                    let got: Vec<String> =
                        o.diagnostics.iter().map(|d| kind_name(d.kind)).collect();
                    p.push(format!("expected diagnostic {w}, got {got:?}"));
                }
            }
        }
        if let Some(want) = &e.final_text_contains {
            let text = last.and_then(|o| o.text.as_deref()).unwrap_or("");
            if !text.contains(want.as_str()) {
                p.push(format!(
                    "expected the final text to contain {want:?}, got {text:?}"
                ));
            }
        }
        if let (Some(want), Some(o)) = (&e.finish, first) {
            let got = serde_json::to_value(o.finish).unwrap_or_default();
            if got.as_str() != Some(want.as_str()) {
                p.push(format!("expected finish {want}, got {got}"));
            }
        }
        if let (Some(want), Some(o)) = (e.usage, first)
            && o.usage.is_some() != want
        {
            p.push(format!(
                "expected usage {}, got {:?}",
                if want { "reported" } else { "absent" },
                o.usage
            ));
        }
        if let (Some(want), Some(o)) = (&e.arguments, first) {
            let got: Vec<&Value> = o.tool_calls.iter().map(|c| &c.arguments).collect();
            if got != want.iter().collect::<Vec<_>>() {
                p.push(format!(
                    "expected call arguments {}, got {}",
                    serde_json::to_string(want).unwrap_or_default(),
                    serde_json::to_string(&got).unwrap_or_default()
                ));
            }
        }
        let judged = run.judged().count();
        if let Some(n) = e.exchanges
            && judged != n
        {
            p.push(format!("expected {n} exchanges, got {judged}"));
        }
        if let Some(n) = e.attempts
            && run.exchanges.len() != n
        {
            p.push(format!(
                "expected {n} HTTP interactions (fallback attempts included), got {}",
                run.exchanges.len()
            ));
        }
        if let Some(want) = &e.grounding {
            let t = crate::run::trial_telemetry(trial.provider, run);
            let ok = if want == "effective" {
                t.grounded_effective
            } else {
                t.why_not_grounded
                    .as_deref()
                    .is_some_and(|w| w.starts_with(want.as_str()))
            };
            if !ok {
                p.push(format!(
                    "expected grounding {want}, got effective={} why_not_grounded={:?}",
                    t.grounded_effective, t.why_not_grounded
                ));
            }
        }
    }
}

fn check_expected_error(
    expectations: &[crate::case::Expectation],
    o: &Outcome,
    p: &mut Vec<String>,
) {
    let status = expectations.iter().find_map(|e| e.error_status);
    let contains = expectations.iter().find_map(|e| e.error_contains.clone());
    match &o.error {
        None => p.push(format!(
            "expected the provider to answer {}, but it answered normally",
            status.unwrap_or(0)
        )),
        Some(err) => {
            if Some(err.status) != status {
                p.push(format!(
                    "expected error status {}, got {}: {}",
                    status.unwrap_or(0),
                    err.status,
                    err.message
                ));
            }
            if let Some(c) = contains
                && !err.message.contains(&c)
            {
                p.push(format!(
                    "expected the error message to contain {c:?}, got {:?}",
                    err.message
                ));
            }
        }
    }
}

/// The tool_choice contract on the first exchange.
fn check_choice(trial: &Trial, o: &Outcome, p: &mut Vec<String>) {
    let names: Vec<&str> = o.tool_calls.iter().map(|c| c.name.as_str()).collect();
    match &trial.choice {
        ChoiceSpec::Omitted | ChoiceSpec::Choice(ToolChoice::Auto) => {}
        ChoiceSpec::Choice(ToolChoice::None) => {
            if !names.is_empty() {
                p.push(format!(
                    "tool_choice none: expected no tool calls, got {names:?}"
                ));
            }
        }
        ChoiceSpec::Choice(ToolChoice::Required) => {
            if names.is_empty() {
                p.push("tool_choice required: expected at least one tool call, got none".into());
            }
        }
        ChoiceSpec::Choice(ToolChoice::Forced(want)) => {
            if names.is_empty() {
                p.push(format!(
                    "tool_choice forced {want}: expected a call to {want}, got none"
                ));
            } else if let Some(other) = names.iter().find(|n| *n != want) {
                p.push(format!(
                    "tool_choice forced {want}: expected only {want}, got a call to {other}"
                ));
            }
        }
        ChoiceSpec::Choice(ToolChoice::Allowed { mode, tools }) => {
            if *mode == AllowedMode::Required && names.is_empty() {
                p.push(format!(
                    "allowed tools {tools:?} (required): expected at least one call, got none"
                ));
            }
            if let Some(other) = names.iter().find(|n| !tools.iter().any(|t| t == *n)) {
                p.push(format!(
                    "allowed tools {tools:?}: got a call to {other}, which is not allowed"
                ));
            }
        }
    }
    if trial.case.file.parallel == Some(false) && names.len() > 1 {
        p.push(format!(
            "parallel calls off: expected at most one call, got {}",
            names.len()
        ));
    }
}

/// Every call names a tool in force for its exchange (the tools its request carried: a round
/// may change them) and its arguments validate against that tool's schema.
fn check_calls(tools: &[Tool], exchange: usize, o: &Outcome, p: &mut Vec<String>) {
    for (k, call) in o.tool_calls.iter().enumerate() {
        let Some(tool) = tools.iter().find(|t| t.name == call.name) else {
            p.push(format!(
                "exchange {}: call {k} names `{}`, which is not a declared tool in force",
                exchange + 1,
                call.name
            ));
            continue;
        };
        if !call.arguments.is_object() {
            p.push(format!(
                "exchange {}: call {k} ({}): arguments are not a JSON object: {}",
                exchange + 1,
                call.name,
                call.arguments
            ));
            continue;
        }
        for e in schema_errors(&tool.parameters, &call.arguments) {
            p.push(format!(
                "exchange {}: call {k} ({}): arguments do not match the tool's schema: {e}",
                exchange + 1,
                call.name
            ));
        }
    }
}

/// Validation errors of `instance` against `schema` (`pointer: message`); a schema that does
/// not compile is reported as one error.
pub(crate) fn schema_errors(schema: &Value, instance: &Value) -> Vec<String> {
    match crate::schema::validator(schema) {
        Ok(v) => v
            .iter_errors(instance)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect(),
        Err(e) => vec![format!("the tool's schema does not compile: {e}")],
    }
}

/// The name a diagnostic kind has in case files (`ArrayWrapped`, ...).
pub(crate) fn kind_name(kind: DiagnosticKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
