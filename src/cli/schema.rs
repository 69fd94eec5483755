//! `tooltape schema strict|check [FILE]`: a neutral parameters schema (FILE or stdin) made
//! strict for a provider, or checked as that provider would receive it.

use super::SchemaAction;
use super::exit::{self, CliError, CommandResult};
use super::select::{provider_arg, read_text};
use serde_json::Value;
use tooltape::{Provider, schema::Violation, schema::strict_parameters};

/// Runs `tooltape schema strict|check`: the provider is read before the input; input that is
/// not JSON is exit 2, named (`FILE: invalid JSON at line L, column C: …`).
pub(super) fn run(action: &SchemaAction) -> CommandResult {
    let (provider, file, strict) = match action {
        SchemaAction::Strict { provider, file } => (provider, file, true),
        SchemaAction::Check { provider, file } => (provider, file, false),
    };
    let provider = provider_arg(provider)?;
    let (name, input) = read_text(file.as_deref())?;
    let schema: Value = serde_json::from_str(&input).map_err(|e| {
        // The message's own newline and eprintln's: the contract has a blank line there.
        format!(
            "{name}: invalid JSON at line {}, column {}: {e}\n",
            e.line(),
            e.column()
        )
    })?;
    if strict {
        self::strict(provider, &schema)
    } else {
        check(provider, &schema)
    }
}

/// What the encoder would send for `provider` with strict required: exit 0 with pretty JSON on
/// stdout, and what was dropped to get it on stderr (`lost: POINTER: KEYWORD dropped …`); 1 with
/// one reason per line when it cannot be made strict. Gemini prints `{"parameters": …}` or
/// `{"parametersJsonSchema": …}` (or `{}` for a tool without parameters) so the choice shows.
fn strict(provider: Provider, schema: &Value) -> CommandResult {
    match strict_parameters(provider, schema) {
        Ok(s) => {
            let lost: String = s.lost.iter().map(|l| format!("lost: {l}\n")).collect();
            eprint!("{lost}");
            outln!(
                "{}",
                serde_json::to_string_pretty(&s.schema).unwrap_or_default()
            );
            Ok(())
        }
        Err(reasons) => {
            print_lines(&reasons);
            Err(CliError::Failed)
        }
    }
}

/// One `POINTER: RULE: message` per line; exit 1 when there are any, 0 when none.
fn check(provider: Provider, schema: &Value) -> CommandResult {
    let violations = tooltape::schema::check(provider, schema);
    print_lines(&violations);
    exit::failed_if(!violations.is_empty())
}

/// One violation per line on stdout (nothing when there are none).
fn print_lines(vs: &[Violation]) {
    let text: String = vs.iter().map(|v| format!("{v}\n")).collect();
    if !text.is_empty() {
        outln!("{}", text.trim_end_matches('\n'));
    }
}
