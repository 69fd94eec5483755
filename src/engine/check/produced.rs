//! The contract a model's own answer keeps, whatever the model chose (server mode: the system
//! under test is the model's server, so there is no upstream answer to compare against): the
//! caller's `tool_choice` honoured (none, required, named, an allowed subset), the parallel switch
//! off honoured, every call naming a tool in force, its arguments a JSON object valid against that
//! tool's schema. One finding kind each, `Breaking`: a 200 that drops the constraint is the bug.

use super::finding::{Finding, FindingKind, Side};
use crate::model::{AllowedMode, Outcome, Severity, Tool, ToolCall, ToolChoice};

/// What the model was asked: the tool choice in force (`None`: omitted), the parallel switch
/// and the tools in force.
pub(crate) struct Asked<'a> {
    pub choice: Option<&'a ToolChoice>,
    pub parallel: Option<bool>,
    pub tools: &'a [Tool],
}

/// Every way `got` breaks the contract `asked` set. A call the text protocol's parser withheld
/// comes first: it is why the choice may then look unhonoured.
pub(crate) fn produced(asked: &Asked<'_>, got: &Outcome) -> Vec<Finding> {
    let mut out = text_calls(got);
    out.extend(choice_honoured(asked, got));
    out.extend(calls_valid(asked.tools, got));
    out
}

/// The `<tool_call>` blocks the text protocol's parser read and did not hand over as calls (its
/// unrecovered diagnostics). A block the output-token limit cut is the limit's, when the answer
/// says so (finish `Length`); native decoders' diagnostics are not these.
fn text_calls(got: &Outcome) -> Vec<Finding> {
    use crate::model::{DiagnosticKind as D, Finish};
    (got.diagnostics.iter())
        .filter(|d| !d.recovered)
        .filter(|d| match d.kind {
            D::MalformedJson
            | D::MissingName
            | D::ArgumentsNotObject
            | D::UnknownTool
            | D::SchemaViolation => true,
            D::TruncatedCall => got.finish != Finish::Length,
            _ => false,
        })
        .map(|d| {
            found(
                FindingKind::TextCall,
                format!(
                    "a <tool_call> the model wrote was not handed over as a call ({:?}): {}",
                    d.kind,
                    super::finding::clip(&d.message)
                ),
            )
        })
        .collect()
}

fn found(kind: FindingKind, message: String) -> Finding {
    Finding::new(kind, Severity::Breaking, Side::Downstream, message)
}

/// The tool choice (and the parallel switch off) honoured by the calls made.
fn choice_honoured(asked: &Asked<'_>, got: &Outcome) -> Vec<Finding> {
    let names: Vec<&str> = got.tool_calls.iter().map(|c| c.name.as_str()).collect();
    let mut out = Vec::new();
    let mut push = |m: String| out.push(found(FindingKind::ChoiceHonoured, m));
    match asked.choice {
        None | Some(ToolChoice::Auto) => {}
        Some(ToolChoice::None) if !names.is_empty() => {
            push(format!("tool_choice none answered with calls {names:?}"));
        }
        Some(ToolChoice::Required) if names.is_empty() => push(format!(
            "tool_choice required answered without a call (finish {})",
            got.raw_finish.as_deref().unwrap_or("none")
        )),
        Some(ToolChoice::Forced(want)) => {
            if names.is_empty() {
                push(format!(
                    "tool_choice {want} (named) answered without a call (finish {})",
                    got.raw_finish.as_deref().unwrap_or("none")
                ));
            } else if let Some(other) = names.iter().find(|n| *n != want) {
                push(format!(
                    "tool_choice {want} (named) answered with a call to {other}"
                ));
            }
        }
        Some(ToolChoice::Allowed { mode, tools }) => {
            if *mode == AllowedMode::Required && names.is_empty() {
                push(format!(
                    "allowed tools {tools:?} (required) answered without a call"
                ));
            }
            if let Some(other) = names.iter().find(|n| !tools.iter().any(|t| t == *n)) {
                push(format!(
                    "allowed tools {tools:?} answered with a call to {other}, which is not allowed"
                ));
            }
        }
        Some(_) => {}
    }
    if asked.parallel == Some(false) && names.len() > 1 {
        push(format!(
            "parallel tool calls off answered with {} calls",
            names.len()
        ));
    }
    out
}

/// Each call names a tool in force, and its arguments are a JSON object its schema accepts.
fn calls_valid(tools: &[Tool], got: &Outcome) -> Vec<Finding> {
    (got.tool_calls.iter())
        .filter_map(|call| call_problem(tools, call))
        .map(|m| found(FindingKind::CallValid, m))
        .collect()
}

/// What is wrong with one call against the tools in force: it names none of them, or its
/// arguments are not a JSON object its tool's schema accepts. `None`: a valid call.
pub(crate) fn call_problem(tools: &[Tool], call: &ToolCall) -> Option<String> {
    let Some(tool) = tools.iter().find(|t| t.name == call.name) else {
        return Some(format!(
            "a call to `{}`, which is not a tool in force",
            call.name
        ));
    };
    if !call.arguments.is_object() {
        return Some(format!(
            "arguments of {} are not a JSON object: {}",
            call.name,
            super::finding::clip(&call.arguments.to_string())
        ));
    }
    let errors = crate::contract::schema_errors(&tool.parameters, &call.arguments);
    errors.first().map(|first| {
        format!(
            "arguments of {} do not match its schema ({} error(s), first: {})",
            call.name,
            errors.len(),
            super::finding::clip(first)
        )
    })
}

#[cfg(test)]
mod tests;
