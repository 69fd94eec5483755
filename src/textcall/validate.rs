//! One call candidate → a checked call: `name`, `arguments` (a JSON string holding an object, or
//! an object), the allowed-tool check with a nearest-name suggestion, and strict schema validation.

use jsonschema::error::ValidationErrorKind as ErrorKind;
use serde_json::{Map, Value};

use super::body::Note;
use super::config::ParserConfig;
use crate::model::DiagnosticKind as K;

pub(super) struct Checked {
    pub name: String,
    pub arguments: Value,
}

/// The parts of a call candidate the checks read. A JSON object is reduced to these three
/// fields as it is parsed ([`body`](super::body) deserializes them directly, without building
/// the object), so the checks take them owned and never clone the arguments.
#[derive(Debug, Default)]
pub(super) struct Candidate {
    /// False for a non-object array item (it cannot be a call).
    pub object: bool,
    pub name: Option<Value>,
    pub arguments: Option<Value>,
    pub parameters: Option<Value>,
}

impl Candidate {
    /// From a parsed value (array items, repaired JSON): the same fields as a direct parse.
    pub(super) fn from_value(v: Value) -> Candidate {
        match v {
            Value::Object(mut obj) => Candidate {
                object: true,
                name: obj.remove("name"),
                arguments: obj.remove("arguments"),
                parameters: obj.remove("parameters"),
            },
            _ => Candidate::default(),
        }
    }
}

/// Checks a candidate: recovered notes (in order), then the call or the fatal problem.
pub(super) fn check(
    config: &ParserConfig,
    candidate: Candidate,
) -> (Vec<Note>, Result<Checked, Note>) {
    let mut notes = Vec::new();
    let result = check_inner(config, candidate, &mut notes);
    (notes, result)
}

fn check_inner(
    config: &ParserConfig,
    candidate: Candidate,
    notes: &mut Vec<Note>,
) -> Result<Checked, Note> {
    if !candidate.object {
        return Err((K::MissingName, "the call is not a JSON object".into()));
    }
    let name = match candidate.name {
        Some(Value::String(n)) if !n.trim().is_empty() => n,
        Some(_) => return Err((K::MissingName, "\"name\" is not a non-empty string".into())),
        None => return Err((K::MissingName, "the call has no \"name\"".into())),
    };
    let arguments = match (candidate.arguments, candidate.parameters) {
        (Some(a), _) => arguments_object(a, "arguments", notes)?,
        (None, Some(p)) => {
            notes.push((
                K::ParametersAlias,
                "read \"parameters\" as \"arguments\"".into(),
            ));
            arguments_object(p, "parameters", notes)?
        }
        (None, None) => {
            notes.push((
                K::MissingArguments,
                "no \"arguments\": called with {}".into(),
            ));
            Value::Object(Map::new())
        }
    };
    if !config.allowed.contains(&name) {
        return Err((K::UnknownTool, unknown_message(config, &name)));
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
                                    pointer = format!("{pointer}/{}", escape_pointer(first));
                                }
                            }
                            ErrorKind::Required {
                                property: Value::String(p),
                            } => {
                                pointer = format!("{pointer}/{}", escape_pointer(p));
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
                    return Err((K::SchemaViolation, format!("{first}{more}")));
                }
            }
            Err(msg) => {
                // A schema the validator cannot compile cannot reject anything: say so, keep the call.
                notes.push((
                    K::SchemaViolation,
                    format!("schema of {name:?} not checked: {msg}"),
                ));
            }
        }
    }
    Ok(Checked { name, arguments })
}

/// `arguments` as the protocol wants it (a string holding an object) or as an object.
fn arguments_object(v: Value, key: &str, notes: &mut Vec<Note>) -> Result<Value, Note> {
    match v {
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(obj @ Value::Object(_)) => Ok(obj),
            Ok(_) => Err((
                K::ArgumentsNotObject,
                format!("\"{key}\" holds JSON that is not an object"),
            )),
            Err(e) => Err((
                K::ArgumentsNotObject,
                format!("\"{key}\" is not a JSON object string: {e}"),
            )),
        },
        Value::Object(_) => {
            notes.push((
                K::ArgumentsAsObject,
                format!("\"{key}\" is an object, not a JSON string"),
            ));
            Ok(v)
        }
        _ => Err((
            K::ArgumentsNotObject,
            format!("\"{key}\" is neither a JSON string nor an object"),
        )),
    }
}

fn unknown_message(config: &ParserConfig, name: &str) -> String {
    let mut msg = if config.declared.iter().any(|d| d == name) {
        format!("tool {name:?} is not allowed by tool_choice")
    } else {
        format!("unknown tool {name:?}")
    };
    match suggest(name, &config.allowed) {
        Some(s) => msg.push_str(&format!("; did you mean {s:?}?")),
        None if config.allowed.is_empty() => msg.push_str("; no tool may be called"),
        None => {}
    }
    msg
}

/// The allowed name nearest to `name`: equal after normalization (case, `-`, `_`, `.`), else the
/// smallest edit distance if it is at most a third of the longer name (at least 2).
pub(super) fn suggest<'a>(name: &str, allowed: &'a [String]) -> Option<&'a str> {
    let n = normalize(name);
    let mut best: Option<(usize, &str)> = None;
    for a in allowed {
        let na = normalize(a);
        if na == n {
            return Some(a);
        }
        let d = levenshtein(&n, &na);
        let limit = (n.len().max(na.len()) / 3).max(2);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, a));
        }
    }
    best.map(|(_, a)| a)
}

/// Lower-case, without `-`, `_` and `.`; long names are cut (suggestions need no more).
fn normalize(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .flat_map(char::to_lowercase)
        .take(64)
        .collect()
}

fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}
