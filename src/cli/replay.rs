//! `tooltape replay`: every selected trial against its cassette, as a matrix; or one cassette,
//! replayed repeatedly (`--cassette`, `--repeat`).

use std::path::Path;
use std::time::{Duration, Instant};

use super::ReplayArgs;
use super::cases::Corpus;
use super::exit::{self, CliError, CommandResult};
use super::parse::{bare_request, outcome_json};
use super::select::{provider_arg, select};
use serde_json::Value;
use tooltape::{ChatRequest, Provider, ReplayServer, harness::ReplayStatus, harness::replay_all};

/// Runs `tooltape replay`: the matrix of the selected trials, or `--cassette`'s outcomes.
pub(super) fn run(corpus: Corpus<'_>, a: &ReplayArgs) -> CommandResult {
    match &a.cassette {
        Some(path) => replay_cassette(corpus, path, a.repeat, a.provider.as_deref()),
        None => replay_matrix(corpus, a.filter.as_deref()),
    }
}

fn replay_matrix(corpus: Corpus<'_>, filter: Option<&str>) -> CommandResult {
    let sel = select(corpus, filter);
    let trials = &sel.trials;
    if trials.is_empty() {
        sel.report_problems();
        return Err(CliError::FailedWith(format!(
            "no trials match{}",
            filter.map(|f| format!(" `{f}`")).unwrap_or_default()
        )));
    }
    let results = replay_all(corpus.root, trials);
    let mut cells = std::collections::BTreeMap::new();
    let mut failed = 0;
    let mut broken_cassettes = 0;
    for (t, r) in trials.iter().zip(&results) {
        let cell = match &r.status {
            Ok((v, _)) => v.label().to_string(),
            Err(ReplayStatus::Missing) => "missing".into(),
            Err(ReplayStatus::Stale(_)) => "stale".into(),
            Err(ReplayStatus::Broken(_)) => {
                broken_cassettes += 1;
                "broken".into()
            }
        };
        if r.failure.is_some() {
            failed += 1;
        }
        cells.insert((t.id().row(), t.provider), cell);
    }
    let providers: Vec<Provider> = Provider::ALL
        .into_iter()
        .filter(|p| trials.iter().any(|t| t.provider == *p))
        .collect();
    let rows: std::collections::BTreeSet<&String> = cells.keys().map(|(r, _)| r).collect();
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(10).max(5);
    let mut header = format!("{:width$}", "trial");
    for p in &providers {
        header.push_str(&format!("  {:>16}", p.slug()));
    }
    outln!("{header}");
    for row in rows {
        let mut line = format!("{row:width$}");
        for p in &providers {
            let c = cells.get(&(row.clone(), *p)).map_or("-", String::as_str);
            line.push_str(&format!("  {c:>16}"));
        }
        outln!("{line}");
    }
    for r in &results {
        if let Some(f) = &r.failure {
            eprintln!("\n{}:\n{f}", r.trial);
        }
    }
    sel.report_problems();
    outln!(
        "\n{} trials: {} passed, {failed} failed{}",
        results.len(),
        results.len() - failed,
        sel.broken_suffix(broken_cassettes)
    );
    exit::failed_if(failed > 0 || sel.broken_files > 0)
}

/// The provider of a cassette: `--provider`, else `cassettes/<provider>/…` in its path, else its trial name.
fn cassette_provider(path: &Path, trial: &str, flag: Option<&str>) -> Result<Provider, String> {
    if let Some(f) = flag {
        return provider_arg(f);
    }
    if let Some(p) = path
        .iter()
        .filter_map(|s| s.to_str())
        .find_map(Provider::from_slug)
    {
        return Ok(p);
    }
    trial
        .split("::")
        .find_map(Provider::from_slug)
        .ok_or_else(|| {
            format!(
                "{}: cannot tell the provider; pass --provider",
                path.display()
            )
        })
}

fn replay_cassette(
    corpus: Corpus<'_>,
    path: &Path,
    repeat: usize,
    provider: Option<&str>,
) -> CommandResult {
    let (cassette, _) = tooltape::cassette::load(path)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{}: no such cassette", path.display()))?;
    let provider = cassette_provider(path, &cassette.trial, provider)?;
    // The neutral request configures decoding (text-protocol parser, schema restore): use the
    // owning trial's when the cassette belongs to a known trial.
    let trial = corpus
        .discover()
        .trials
        .into_iter()
        .find(|t| t.name() == cassette.trial);
    let repeat = repeat.max(1);
    // A current-thread runtime: one cassette's requests go one after another, and cross-thread
    // wake-ups would dominate the per-interaction figure.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    let started = Instant::now();
    let outcomes = rt.block_on(async {
        let server = ReplayServer::start(&cassette).await;
        let endpoint = server.endpoint();
        let client = tooltape::run::client(Duration::from_secs(30));
        let mut last = Vec::new();
        for _ in 0..repeat {
            last.clear();
            for it in &cassette.interactions {
                let stream = it
                    .request
                    .body
                    .get("stream")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    || it.request.path.contains("streamGenerateContent");
                let neutral = trial.as_ref().map_or_else(
                    || bare_request(stream),
                    |t| ChatRequest {
                        stream,
                        ..t.first_request()
                    },
                );
                let r =
                    tooltape::run::send(&client, &endpoint, provider, &neutral, &it.request).await;
                last.push(r);
            }
            server.take_received();
        }
        server.close().await;
        last
    });
    let elapsed = started.elapsed();
    let mut failed = false;
    for (i, r) in outcomes.iter().enumerate() {
        match r {
            Ok((_, Ok(o))) => outln!("{}", outcome_json(o)),
            Ok((_, Err(e))) => {
                eprintln!("{}: interaction {}: {e}", path.display(), i + 1);
                failed = true;
            }
            Err(e) => {
                eprintln!("{}: interaction {}: {e}", path.display(), i + 1);
                failed = true;
            }
        }
    }
    if repeat > 1 {
        let per_s = repeat as f64 / elapsed.as_secs_f64();
        let per_int =
            elapsed.as_secs_f64() * 1e3 / (repeat * cassette.interactions.len().max(1)) as f64;
        outln!(
            "{repeat} trials in {:.3} s: {per_s:.1} trials/s, {per_int:.3} ms per interaction",
            elapsed.as_secs_f64()
        );
    }
    exit::failed_if(failed)
}
