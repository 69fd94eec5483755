//! Recording: runs a trial against a live provider or the simulator and turns what happened
//! into a cassette. A failed recording never replaces an existing cassette.

use std::path::Path;

use crate::case::Trial;
use crate::cassette::{self, Cassette, Interaction, Provenance, ProvenanceKind, StoredResponse};
use crate::model::DiagnosticKind;
use crate::run::{self, Endpoint, TrialRun};

/// Response header by which the project's simulator identifies itself: its answers are never
/// presented as recorded.
pub const SIMULATOR_HEADER: &str = "x-tooltape-simulator";

/// Request header carrying a case's `[simulate]` scenario to the simulator (never stored).
pub const SCENARIO_HEADER: &str = "x-tooltape-scenario";

/// Builds the cassette for a finished run, or says why the recording failed.
pub fn cassette_from_run(trial: &Trial, run: &TrialRun, source: &str) -> Result<Cassette, String> {
    if let Some(e) = &run.transport_error {
        return Err(e.clone());
    }
    let expected_status = trial
        .expectations()
        .iter()
        .find_map(|e| e.get_ref().error_status);
    let mut interactions = Vec::new();
    let mut simulated = !run.exchanges.is_empty();
    let mut answered_model = None;
    for (i, ex) in run.exchanges.iter().enumerate() {
        let status = ex.response.status;
        if !ex.response.is_success() && !(i == 0 && expected_status == Some(status)) {
            return Err(format!(
                "exchange {} answered {status}: {}",
                i + 1,
                String::from_utf8_lossy(&ex.response.body)
                    .chars()
                    .take(300)
                    .collect::<String>()
            ));
        }
        match &ex.outcome {
            Err(e) => {
                return Err(format!(
                    "exchange {}: the answer does not decode: {e}",
                    i + 1
                ));
            }
            Ok(o) => {
                if o.diagnostics
                    .iter()
                    .any(|d| d.kind == DiagnosticKind::StreamTruncated)
                {
                    return Err(format!(
                        "exchange {}: the stream was cut off before its terminal event",
                        i + 1
                    ));
                }
                if o.model.is_some() {
                    answered_model.clone_from(&o.model);
                }
            }
        }
        simulated &= ex.response.header(SIMULATOR_HEADER).is_some();
        interactions.push(Interaction {
            request: ex.encoded.request.clone(),
            response: StoredResponse::from_http(&ex.response, ex.neutral.stream),
        });
    }
    let kind = if simulated || (run.exchanges.is_empty() && source.starts_with("simulator")) {
        ProvenanceKind::Synthetic
    } else {
        ProvenanceKind::Recorded
    };
    Ok(Cassette {
        tooltape: cassette::FORMAT,
        trial: trial.name(),
        provenance: Provenance {
            kind,
            date: cassette::today(),
            model: trial.model().to_string(),
            answered_model,
            tooltape: env!("CARGO_PKG_VERSION").to_string(),
            case_hash: Some(trial.case.hash.clone()),
            source: Some(source.to_string()),
        },
        interactions,
    })
}

/// Records one trial and writes its cassette under `root` (atomically). Returns the path written.
pub async fn record_trial(
    client: &reqwest::Client,
    root: &Path,
    trial: &Trial,
    endpoint: &Endpoint,
    source: &str,
) -> Result<std::path::PathBuf, String> {
    let mut endpoint = endpoint.clone();
    let scenario = &trial.case.file.simulate;
    if *scenario != crate::scenario::Scenario::default() {
        let json = serde_json::to_string(scenario).map_err(|e| e.to_string())?;
        endpoint
            .extra_headers
            .push((SCENARIO_HEADER.to_string(), json));
    }
    // Fresh per trial, like replay: a cassette always holds the whole fallback sequence.
    let cache = crate::policy::SupportCache::new(crate::policy::SupportCache::DEFAULT_TTL);
    let run = run::run_trial(client, trial, &endpoint, &cache).await;
    let cassette = cassette_from_run(trial, &run, source)?;
    let rel = trial.cassette_path();
    let text = cassette::to_text(&cassette);
    cassette::write_atomic(&root.join(&rel), &text)
        .map_err(|e| format!("cannot write {}: {e}", rel.display()))?;
    Ok(rel)
}
