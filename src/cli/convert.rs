//! `tooltape convert`: the request the encoder builds for a case's first exchange.

use std::path::Path;

use serde_json::json;

use super::ConvertArgs;
use super::exit::{CliError, CommandResult};
use super::select::provider_arg;
use tooltape::{ChoiceSpec, Mode, Trial, case::load_case, case::load_providers, encode};

/// Runs `tooltape convert`.
pub(super) fn run(a: &ConvertArgs) -> CommandResult {
    let provider = provider_arg(&a.provider)?;
    let cases_dir = a.case.parent().unwrap_or(Path::new("."));
    let loaded =
        load_providers(cases_dir).and_then(|p| load_case(&a.case, &cases_dir.join("tools"), &p));
    let case = std::sync::Arc::new(loaded.map_err(|e| e.to_string())?);
    let choice = ChoiceSpec::from_slug(&a.choice)
        .ok_or_else(|| format!("unknown tool choice `{}`", a.choice))?;
    let declared: Vec<&str> = case.tools.iter().map(|t| t.name.as_str()).collect();
    if let Some(bad) = choice
        .named_tools()
        .into_iter()
        .find(|n| !declared.contains(&n.as_str()))
    {
        return Err(format!(
            "{}: tool choice `{}` names `{bad}`, which is not among the case's tools {declared:?}",
            a.case.display(),
            a.choice
        )
        .into());
    }
    let mode = if a.stream {
        Mode::Stream
    } else {
        Mode::Buffered
    };
    let trial = Trial {
        case,
        provider,
        choice,
        mode,
    };
    match encode(provider, &trial.first_request()) {
        Ok(enc) => {
            outln!(
                "{}",
                serde_json::to_string_pretty(&enc.request.body).unwrap_or_default()
            );
            for n in &enc.notes {
                eprintln!("note: {n}");
            }
            Ok(())
        }
        Err(e) => {
            eprintln!("{e}");
            outln!(
                "{}",
                json!({"error": {"code": e.code, "message": e.message}})
            );
            Err(CliError::Failed)
        }
    }
}
