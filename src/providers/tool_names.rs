//! The function names each API accepts, checked by its encoder before anything is sent: a name
//! the API would refuse fails closed with `TOOL_NAME`, naming the tool and the API's rule.

use crate::model::{EncodeError, Provider, Tool};

/// Why `provider`'s API would refuse the function name `name`, or `None` when it accepts it
/// (the text protocol names tools in prose: any name).
pub(crate) fn problem(provider: Provider, name: &str) -> Option<String> {
    let (ok, rule): (bool, fn() -> String) = match provider {
        Provider::OpenaiChat => (plain_ok(name), || plain_rule("Chat Completions")),
        Provider::OpenaiResponses => (plain_ok(name), || plain_rule("Responses")),
        Provider::Anthropic => (plain_ok(name), || plain_rule("Anthropic")),
        Provider::Gemini => (gemini_ok(name), gemini_rule),
        Provider::TextProtocol => (true, String::new),
    };
    (!ok).then(rule)
}

fn plain_ok(n: &str) -> bool {
    (1..=64).contains(&n.len())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn plain_rule(api: &str) -> String {
    format!("{api} accepts function names matching ^[a-zA-Z0-9_-]{{1,64}}$ (no dots)")
}

fn gemini_ok(n: &str) -> bool {
    n.len() <= 128
        && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

fn gemini_rule() -> String {
    "Gemini accepts function names that start with a letter or `_` and use letters, digits, `_`, `.`, `:` and `-`, at most 128 characters".to_string()
}

/// OpenAI (Chat Completions, Responses) and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn check_plain(api: &str, tools: &[Tool]) -> Result<(), EncodeError> {
    check(tools, plain_ok, || plain_rule(api))
}

/// Gemini: starts with a letter or an underscore; letters, digits, `_`, `.`, `:` and `-`; at
/// most 128 characters (providers.md §4.2).
pub(crate) fn check_gemini(tools: &[Tool]) -> Result<(), EncodeError> {
    check(tools, gemini_ok, gemini_rule)
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
