//! One call candidate → a checked call: `name`, `arguments` (a JSON string holding an object, or
//! an object), the allowed-tool check with a nearest-name suggestion, and strict schema validation.

use std::borrow::Cow;
use std::fmt::Write as _;

use jsonschema::error::ValidationErrorKind as ErrorKind;
use serde_json::{Map, Value};

use super::config::ParserConfig;
use super::json::Tracked;
use crate::model::DiagnosticKind as K;

/// A recovered problem or a fatal one, with its message.
pub(super) type Note = (K, Cow<'static, str>);

pub(super) struct Checked {
    pub name: String,
    pub arguments: Value,
}

/// The parts of a call candidate the checks read. A JSON object is reduced to these fields as
/// it is parsed ([`body`](super::body) deserializes them directly, without building the object),
/// so the checks take them owned and never clone the arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Candidate {
    /// False for a non-object array item (it cannot be a call).
    pub object: bool,
    pub name: Name,
    /// The last `arguments`, else the last `parameters` (then `alias` is set).
    pub arguments: Option<Arguments>,
    pub alias: bool,
}

/// The `name` member.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) enum Name {
    #[default]
    Missing,
    Text(String),
    /// Not a string.
    Other,
}

/// `arguments` (or `parameters`) as read from the call.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Arguments {
    /// A JSON string, already parsed: the value it holds, or serde_json's message.
    Text(Result<Tracked, String>),
    /// Any other JSON value.
    Value(Tracked),
}

impl Arguments {
    /// A value that cannot hold a repeated key.
    pub(super) fn other(value: Value) -> Arguments {
        Arguments::Value(Tracked {
            value,
            duplicates: Vec::new(),
        })
    }
}

/// Checks a candidate: appends its recovered notes (in order) to `notes`, then gives the call or
/// the fatal problem.
pub(super) fn check(
    config: &ParserConfig,
    candidate: Candidate,
    notes: &mut Vec<Note>,
    unknown: &mut LastUnknown,
) -> Result<Checked, Note> {
    if !candidate.object {
        return Err((K::MissingName, "the call is not a JSON object".into()));
    }
    let name = match candidate.name {
        // A name starting with a visible ASCII char (the usual one) needs no trimming to tell.
        Name::Text(n) if n.bytes().next().is_some_and(|b| b.is_ascii_graphic()) => n,
        Name::Text(n) if !n.trim().is_empty() => n,
        Name::Text(_) | Name::Other => {
            return Err((K::MissingName, "\"name\" is not a non-empty string".into()));
        }
        Name::Missing => return Err((K::MissingName, "the call has no \"name\"".into())),
    };
    let arguments = match candidate.arguments {
        Some(a) if !candidate.alias => arguments_object(a, &ARGUMENTS, notes)?,
        Some(p) => {
            notes.push((
                K::ParametersAlias,
                "read \"parameters\" as \"arguments\"".into(),
            ));
            arguments_object(p, &PARAMETERS, notes)?
        }
        None => {
            notes.push((
                K::MissingArguments,
                "no \"arguments\": called with {}".into(),
            ));
            Tracked {
                value: Value::Object(Map::new()),
                duplicates: Vec::new(),
            }
        }
    };
    if let Some(first) = arguments.duplicates.first() {
        notes.push((
            K::DuplicateKey,
            duplicate_message(first, arguments.duplicates.len()).into(),
        ));
    }
    let arguments = arguments.value;
    if !config.allowed.contains(&name) {
        return Err((K::UnknownTool, unknown.message(config, name).into()));
    }
    if let Some(v) = config.validator(&name) {
        match v {
            // `is_valid` first: much cheaper than collecting errors for the common, valid call.
            Ok(validator) if validator.is_valid(&arguments) => {}
            Ok(validator) => {
                let errors: Vec<String> = validator
                    .iter_errors(&arguments)
                    .map(|e| {
                        let mut pointer = e.instance_path().as_str().to_string();
                        // Point at the offending key itself, not at its parent object.
                        match e.kind() {
                            ErrorKind::AdditionalProperties { unexpected } => {
                                if let Some(first) = unexpected.first() {
                                    pointer = crate::pointer::push(&pointer, first);
                                }
                            }
                            ErrorKind::Required {
                                property: Value::String(p),
                            } => {
                                pointer = crate::pointer::push(&pointer, p);
                            }
                            _ => {}
                        }
                        format!("{}: {e}", if pointer.is_empty() { "/" } else { &pointer })
                    })
                    .collect();
                if let Some(first) = errors.first() {
                    let more = if errors.len() > 1 {
                        format!(" (and {} more)", errors.len() - 1)
                    } else {
                        String::new()
                    };
                    return Err((K::SchemaViolation, format!("{first}{more}").into()));
                }
            }
            Err(msg) => {
                // A schema the validator cannot compile cannot reject anything: say so, keep the call.
                notes.push((
                    K::SchemaViolation,
                    format!("schema of {name:?} not checked: {msg}").into(),
                ));
            }
        }
    }
    Ok(Checked { name, arguments })
}

/// The member the arguments were read from, and the note when it held an object (the usual
/// recovery: fixed text, no allocation per call).
struct Member {
    key: &'static str,
    as_object: &'static str,
}

const ARGUMENTS: Member = Member {
    key: "arguments",
    as_object: "\"arguments\" is an object, not a JSON string",
};

const PARAMETERS: Member = Member {
    key: "parameters",
    as_object: "\"parameters\" is an object, not a JSON string",
};

/// `arguments` as the protocol wants it (a string holding an object) or as an object.
fn arguments_object(a: Arguments, member: &Member, notes: &mut Vec<Note>) -> Result<Tracked, Note> {
    let key = member.key;
    match a {
        Arguments::Text(Ok(t)) if t.value.is_object() => Ok(t),
        Arguments::Text(Ok(_)) => Err((
            K::ArgumentsNotObject,
            format!("\"{key}\" holds JSON that is not an object").into(),
        )),
        Arguments::Text(Err(e)) => Err((
            K::ArgumentsNotObject,
            format!("\"{key}\" is not a JSON object string: {e}").into(),
        )),
        Arguments::Value(t) if t.value.is_object() => {
            notes.push((K::ArgumentsAsObject, member.as_object.into()));
            Ok(t)
        }
        Arguments::Value(_) => Err((
            K::ArgumentsNotObject,
            format!("\"{key}\" is neither a JSON string nor an object").into(),
        )),
    }
}

/// Names the first repeated key by its pointer. Kept, not rejected: the call's meaning is the
/// one every JSON reader of the arguments string gives it (the last value wins in `JSON.parse`,
/// serde_json and Python alike), and a strict schema still checks that value; the diagnostic
/// says the model sent something ambiguous.
fn duplicate_message(pointer: &str, count: usize) -> String {
    let key = crate::pointer::tokens(pointer).pop().unwrap_or_default();
    let mut msg = format!("{pointer}: duplicate key {key:?}, the last value is kept");
    if count > 1 {
        msg.push_str(&format!(" (and {} more)", count - 1));
    }
    msg
}

/// The last name rejected as not allowed, and its message: a model that invents a tool name
/// tends to repeat it, and the nearest-name search is the costly part of the message.
#[derive(Debug, Default)]
pub(super) struct LastUnknown(Option<(String, String)>);

impl LastUnknown {
    fn message(&mut self, config: &ParserConfig, name: String) -> String {
        if let Some((last, message)) = &self.0
            && *last == name
        {
            return message.clone();
        }
        let message = unknown_message(config, &name);
        self.0 = Some((name, message.clone()));
        message
    }
}

fn unknown_message(config: &ParserConfig, name: &str) -> String {
    let mut msg = String::with_capacity(2 * name.len() + 64);
    if config.declared.iter().any(|d| d == name) {
        msg.push_str("tool ");
        push_quoted(&mut msg, name);
        msg.push_str(" is not allowed by tool_choice");
    } else {
        msg.push_str("unknown tool ");
        push_quoted(&mut msg, name);
    }
    match config.names.nearest(name) {
        Some(s) => {
            msg.push_str("; did you mean ");
            push_quoted(&mut msg, s);
            msg.push('?');
        }
        None if config.allowed.is_empty() => msg.push_str("; no tool may be called"),
        None => {}
    }
    msg
}

/// Appends `s` as `{s:?}` would; a plain ASCII name (the usual one) needs no formatter.
fn push_quoted(out: &mut String, s: &str) {
    if s.bytes()
        .all(|b| matches!(b, b' '..=b'~') && b != b'"' && b != b'\\')
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        // Writing into a `String` cannot fail.
        let _ = write!(out, "{s:?}");
    }
}
