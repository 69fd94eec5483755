//! `tooltape inject [FILE]` as a pure function: request text in, (stdout, exit code) out.

use super::exit;
use serde_json::Value;
use tooltape::{inject::developer_instructions, inject::json_message};

/// `tooltape inject [FILE]`: stdout is exactly the developer instructions (empty when there are
/// none), exit 0; a bad request is one line with where it is wrong, exit 2.
pub fn cli_inject(input: &str) -> (String, i32) {
    match request_object(input) {
        Ok(v) => (developer_instructions(&v).unwrap_or_default(), exit::OK),
        Err(line) => (line, exit::ERROR),
    }
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
