//! `tooltape schema strict|check` as pure functions: input text in, (stdout, exit code) out.

use super::exit;
use serde_json::Value;
use tooltape::{Provider, schema::Violation, schema::strict_parameters};

/// Reads a neutral parameters schema and prints what the encoder would send for `provider`
/// with strict required. Exit 0 with pretty JSON, and what was dropped to get it as the second
/// value (`lost: POINTER: KEYWORD dropped …` lines, for stderr); 1 with one reason per line
/// when it cannot be made strict; 2 when the input is not JSON. Gemini prints `{"parameters":
/// …}` or `{"parametersJsonSchema": …}` (or `{}` for a tool without parameters) so the choice
/// shows.
pub fn cli_strict(provider: Provider, input: &str) -> (String, String, i32) {
    let schema = match parse(input) {
        Ok(v) => v,
        Err((out, code)) => return (out, String::new(), code),
    };
    match strict_parameters(provider, &schema) {
        Ok(s) => {
            let lost = s.lost.iter().map(|l| format!("lost: {l}\n")).collect();
            (pretty(&s.schema), lost, exit::OK)
        }
        Err(reasons) => (lines(&reasons), String::new(), exit::FAILED),
    }
}

/// Checks a schema as `provider` would receive it: one `POINTER: RULE: message` per line, exit
/// 1 when there are any, 0 when none, 2 on bad JSON.
pub fn cli_check(provider: Provider, input: &str) -> (String, i32) {
    let schema = match parse(input) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let violations = tooltape::schema::check(provider, &schema);
    (lines(&violations), exit::failed_if(!violations.is_empty()))
}

fn parse(input: &str) -> Result<Value, (String, i32)> {
    serde_json::from_str(input).map_err(|e| {
        (
            format!(
                "invalid JSON at line {}, column {}: {e}\n",
                e.line(),
                e.column()
            ),
            exit::ERROR,
        )
    })
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn lines(vs: &[Violation]) -> String {
    vs.iter().map(|v| format!("{v}\n")).collect()
}
