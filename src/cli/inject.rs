//! `tooltape inject [FILE]`: the text protocol's developer instructions for a request.

use super::exit::CommandResult;
use super::select::read_text;
use serde_json::Value;
use std::path::Path;
use tooltape::{inject::developer_instructions, inject::json_message};

/// `tooltape inject [FILE]`: stdout is exactly the developer instructions, no newline added
/// (empty when there are none), exit 0; a bad request is one line with where it is wrong
/// (`FILE: request: line L, column C: …`), exit 2.
pub(super) fn run(file: Option<&Path>) -> CommandResult {
    let (name, text) = read_text(file)?;
    let request = request_object(&text).map_err(|line| format!("{name}: {line}"))?;
    out!("{}", developer_instructions(&request).unwrap_or_default());
    Ok(())
}

/// The request text as a JSON object, or one line saying where it is wrong (`request: line L,
/// column C: …`).
pub(super) fn request_object(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err("request: line 1, column 1: expected a JSON object".into()),
        Err(e) => Err(format!(
            "request: line {}, column {}: {}",
            e.line(),
            e.column(),
            json_message(&e)
        )),
    }
}
