//! The function names each API accepts, checked by its encoder before anything is sent: a name
//! the API would refuse fails closed with `TOOL_NAME`, naming the tool and the API's rule.

use crate::model::{EncodeError, Tool};

/// OpenAI (Chat Completions, Responses) and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn check_plain(api: &str, tools: &[Tool]) -> Result<(), EncodeError> {
    let ok = |n: &str| {
        (1..=64).contains(&n.len())
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    check(tools, ok, || {
        format!("{api} accepts function names matching ^[a-zA-Z0-9_-]{{1,64}}$ (no dots)")
    })
}

/// Gemini: starts with a letter or an underscore; letters, digits, `_`, `.`, `:` and `-`; at
/// most 128 characters (providers.md §4.2).
pub(crate) fn check_gemini(tools: &[Tool]) -> Result<(), EncodeError> {
    let ok = |n: &str| {
        n.len() <= 128
            && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
    };
    check(tools, ok, || {
        "Gemini accepts function names that start with a letter or `_` and use letters, digits, `_`, `.`, `:` and `-`, at most 128 characters".to_string()
    })
}

fn check(
    tools: &[Tool],
    ok: impl Fn(&str) -> bool,
    rule: impl Fn() -> String,
) -> Result<(), EncodeError> {
    match tools.iter().find(|t| !ok(&t.name)) {
        None => Ok(()),
        Some(t) => Err(EncodeError::new(
            "TOOL_NAME",
            format!("tool `{}`: {}", t.name, rule()),
        )),
    }
}

#[cfg(test)]
mod tests;
