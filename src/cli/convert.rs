//! `tooltape convert`: the request the encoder builds for a case's first exchange.

use std::path::Path;

use serde_json::json;

use super::ConvertArgs;
use super::exit;
use super::select::provider_arg;
use tooltape::ChoiceSpec;
use tooltape::Mode;
use tooltape::Trial;
use tooltape::case::load_case;
use tooltape::case::load_providers;
use tooltape::encode;

/// Runs `tooltape convert`.
pub(super) fn run(a: &ConvertArgs) -> i32 {
    let provider = match provider_arg(&a.provider) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return exit::ERROR;
        }
    };
    let cases_dir = a.case.parent().unwrap_or(Path::new("."));
    let loaded =
        load_providers(cases_dir).and_then(|p| load_case(&a.case, &cases_dir.join("tools"), &p));
    let case = match loaded {
        Ok(c) => std::sync::Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            return exit::ERROR;
        }
    };
    let Some(choice) = ChoiceSpec::from_slug(&a.choice) else {
        eprintln!("unknown tool choice `{}`", a.choice);
        return exit::ERROR;
    };
    let declared: Vec<&str> = case.tools.iter().map(|t| t.name.as_str()).collect();
    if let Some(bad) = choice
        .named_tools()
        .into_iter()
        .find(|n| !declared.contains(&n.as_str()))
    {
        eprintln!(
            "{}: tool choice `{}` names `{bad}`, which is not among the case's tools {declared:?}",
            a.case.display(),
            a.choice
        );
        return exit::ERROR;
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
            0
        }
        Err(e) => {
            eprintln!("{e}");
            outln!(
                "{}",
                json!({"error": {"code": e.code, "message": e.message}})
            );
            1
        }
    }
}
