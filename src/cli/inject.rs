//! `tooltape inject [FILE]` as a pure function: request text in, (stdout, exit code) out.

use super::exit;
use serde_json::Value;
use tooltape::{inject::developer_instructions, inject::json_message};

/// `tooltape inject [FILE]`: stdout is exactly the developer instructions (empty when there are
/// none), exit 0; a bad request is one line with where it is wrong, exit 2.
pub fn cli_inject(input: &str) -> (String, i32) {
    match serde_json::from_str::<Value>(input) {
        Ok(v) if v.is_object() => (developer_instructions(&v).unwrap_or_default(), exit::OK),
        Ok(_) => (
            "request: line 1, column 1: expected a JSON object".into(),
            exit::ERROR,
        ),
        Err(e) => (
            format!(
                "request: line {}, column {}: {}",
                e.line(),
                e.column(),
                json_message(&e)
            ),
            exit::ERROR,
        ),
    }
}
