//! One trial through the replay pipeline, as the test harness and `tooltape replay` run it:
//! cassette → loopback server → encode/send/decode → verify requests → contract → snapshot value.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::case::{Discovery, Trial, TrialId};
use crate::cassette::{self, Cassette, ProvenanceKind};
use crate::contract::{self, ContractVerdict};
use crate::model::Outcome;
use crate::providers;
use crate::replay::{self, Mismatch, ReplayServer};
use crate::run::{self, TrialRun};

/// What a reviewer reads in a trial's snapshot.
#[derive(Debug, Serialize)]
pub struct TrialSnapshot {
    pub trial: String,
    pub description: String,
    pub cassette: ProvenanceKind,
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encode_error: Option<String>,
    /// Hosted search telemetry, for cases with hosted tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding: Option<crate::run::Telemetry>,
    pub exchanges: Vec<ExchangeSnapshot>,
}

#[derive(Debug, Serialize)]
pub struct ExchangeSnapshot {
    /// Tools block, tool choice, parallel switch, instructions or injected text.
    pub request: Value,
    /// This attempt was rejected and retried with another hosted tool variant (why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
    /// Follow-up exchanges: the conversation items added since the previous request (the
    /// model's calls echoed back and the tool results).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_back: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub outcome: Outcome,
}

/// Why a trial's replay could not be judged on its contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayStatus {
    Missing,
    /// The case (or its tools) changed since recording, or the produced request changed.
    Stale(String),
    Broken(String),
}

/// A replayed trial: its verdict and snapshot, or why it could not be replayed.
#[derive(Debug)]
pub struct ReplayedTrial {
    pub trial: String,
    pub provenance: Option<ProvenanceKind>,
    pub status: Result<(ContractVerdict, TrialSnapshot), ReplayStatus>,
    /// The complete failure message (`path:line: what`, diff, command), when the trial fails.
    pub failure: Option<String>,
}

/// The command that (re)records one trial.
pub(crate) fn record_command(trial: &Trial, how: &str) -> String {
    format!(
        "make record FILTER='{}' MODE={how}   (or: cargo run -- record '{}' --{how})",
        trial.name(),
        trial.name()
    )
}

/// Replays one trial from its cassette under `root`.
pub async fn replay_trial(root: &Path, trial: &Trial) -> ReplayedTrial {
    let rel = trial.cassette_path();
    let path = root.join(&rel);
    let mut result = ReplayedTrial {
        trial: trial.name(),
        provenance: None,
        status: Err(ReplayStatus::Missing),
        failure: None,
    };
    let (cassette, text) = match cassette::load(&path) {
        Ok(Some(c)) => c,
        Ok(None) => {
            result.failure = Some(format!(
                "{}:1: missing cassette for trial {}\n  record it: {}",
                rel.display(),
                trial.name(),
                record_command(trial, "missing")
            ));
            return result;
        }
        Err(mut e) => {
            e.path = rel.clone();
            result.status = Err(ReplayStatus::Broken(e.message.clone()));
            result.failure = Some(format!(
                "{e}\n  fix the file, or re-record it: {}",
                record_command(trial, "all")
            ));
            return result;
        }
    };
    result.provenance = Some(cassette.provenance.kind);
    // A cassette that holds a secret is not served: replay must not pass on a leaked key.
    if let Some(f) = crate::redact::scan(&text, &crate::redact::Secrets::from_env()).first() {
        result.status = Err(ReplayStatus::Broken(format!("holds a secret: {}", f.what)));
        result.failure = Some(format!(
            "{}:{}:{}: {}: the secret scan flags this cassette, so it is not replayed\n  remove the secret (re-record: {}), and revoke the key if it was real",
            rel.display(),
            f.line,
            f.column,
            f.what,
            record_command(trial, "all")
        ));
        return result;
    }
    if cassette.provenance.case_hash.as_deref() != Some(trial.case.hash.as_str()) {
        let why = "case edited since recording".to_string();
        result.status = Err(ReplayStatus::Stale(why.clone()));
        result.failure = Some(format!(
            "{}:1: stale: {why} ({} changed; the cassette was recorded from another version)\n  re-record: {}",
            rel.display(),
            trial.case.path.display(),
            record_command(trial, "stale")
        ));
        return result;
    }
    let (run, mismatches) = run_on_cassette(trial, &cassette).await;
    if !mismatches.is_empty() {
        let (status, msg) = describe_mismatches(trial, &rel, &text, &mismatches);
        result.status = Err(status);
        result.failure = Some(msg);
        return result;
    }
    // A response that does not decode is the cassette's fault, not the case's.
    if let Some((i, e)) = run
        .exchanges
        .iter()
        .enumerate()
        .find_map(|(i, x)| x.outcome.as_ref().err().map(|e| (i, e)))
    {
        let key = if cassette
            .interactions
            .get(i)
            .is_some_and(|it| it.response.stream.is_some())
        {
            "\"stream\""
        } else {
            "\"body\""
        };
        let (line, column) = cassette::response_field(&text, i, key);
        result.status = Err(ReplayStatus::Broken(format!(
            "interaction {}'s response does not decode",
            i + 1
        )));
        result.failure = Some(format!(
            "{}:{line}:{column}: interaction {}: the recorded response does not decode: {e}\n  the cassette is corrupt: re-record it: {}",
            rel.display(),
            i + 1,
            record_command(trial, "all")
        ));
        return result;
    }
    let verdict = contract::verdict(trial, &run);
    let snapshot = snapshot(trial, &cassette, &run, &verdict);
    result.failure = failure_message(trial, &verdict);
    result.status = Ok((verdict, snapshot));
    result
}

/// The one road every trial takes: its cassette served on loopback, the trial run against it
/// as it would run live, and what the server received compared with what was recorded.
pub async fn run_on_cassette(trial: &Trial, cassette: &Cassette) -> (TrialRun, Vec<Mismatch>) {
    let client = replay_client();
    let server = ReplayServer::start(cassette).await;
    // A fresh support cache per trial: replay must not depend on which trials ran before.
    let cache = crate::run::SupportCache::new(crate::run::SupportCache::DEFAULT_TTL);
    let run = run::run_trial(client, trial, &server.endpoint(), &cache).await;
    let mismatches = replay::verify(cassette, &server.take_received());
    server.close().await;
    (run, mismatches)
}

/// One client for every replay (building one costs more than a replay). Connections are not
/// kept: each replay server lives for one trial, and a later one may reuse its port.
fn replay_client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        crate::tls::install_provider();
        reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(0)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new())
    })
}

/// How many trials [`replay_all`] replays at once.
pub(crate) const CONCURRENCY: usize = 8;

/// Replays the trials from their cassettes under `root`, [`CONCURRENCY`] at once, in their
/// order: what `tooltape replay`, `report` and `status` show.
pub fn replay_all(root: &Path, trials: &[Trial]) -> Vec<ReplayedTrial> {
    crate::runtime::runtime().block_on(async {
        let mut out = Vec::with_capacity(trials.len());
        for chunk in trials.chunks(CONCURRENCY) {
            let futs = chunk.iter().map(|t| replay_trial(root, t));
            out.extend(futures_util::future::join_all(futs).await);
        }
        out
    })
}

fn describe_mismatches(
    trial: &Trial,
    rel: &Path,
    text: &str,
    mismatches: &[Mismatch],
) -> (ReplayStatus, String) {
    let mut msg = String::new();
    let mut stale = None;
    for m in mismatches {
        match m {
            Mismatch::Request { index, what, diff } => {
                let line = cassette::request_line(text, *index);
                msg.push_str(&format!(
                    "{}:{line}: stale: conversion changed: request {} differs from the recording ({what})\n{diff}\n",
                    rel.display(),
                    index + 1
                ));
                stale.get_or_insert_with(|| {
                    format!("conversion changed (request {}: {what})", index + 1)
                });
            }
            Mismatch::Unused {
                first_unused,
                recorded,
            } => {
                let line = cassette::request_line(text, *first_unused);
                msg.push_str(&format!(
                    "{}:{line}: recorded interaction {} of {recorded} was never requested (the trial made {first_unused} requests)\n",
                    rel.display(),
                    first_unused + 1
                ));
            }
            Mismatch::Extra { recorded, made } => {
                msg.push_str(&format!(
                    "{}:1: the trial made {made} requests but the cassette holds {recorded}\n",
                    rel.display()
                ));
            }
        }
    }
    msg.push_str(&format!(
        "  if the new behaviour is right, re-record: {}",
        record_command(trial, "stale")
    ));
    let status = match stale {
        Some(why) => ReplayStatus::Stale(why),
        None => {
            ReplayStatus::Broken("recorded interactions do not match the trial's requests".into())
        }
    };
    (status, msg)
}

/// `cases/x.toml:LINE: trial: problem` lines for a failing verdict; `None` when it is acceptable.
pub(crate) fn failure_message(trial: &Trial, verdict: &ContractVerdict) -> Option<String> {
    let at = trial.choice_location();
    match verdict {
        ContractVerdict::Fail { problems } => Some(
            problems
                .iter()
                .map(|p| format!("{at}: {}: {p}", trial.name()))
                .collect::<Vec<_>>()
                .join("\n")
                + &format!(
                    "\n  if the provider is known not to conform, add to {}:\n    [[known_failure]]\n    trials = \"{}\"\n    reason = \"…\"",
                    trial.case.path.display(),
                    trial.key()
                ),
        ),
        ContractVerdict::KnownFailurePasses { reason, note_at } => Some(format!(
            "{note_at}: {}: marked as a known failure ({reason}) but it passes now\n  remove the [[known_failure]] note at {note_at}",
            trial.name()
        )),
        _ => None,
    }
}

fn snapshot(
    trial: &Trial,
    cassette: &Cassette,
    run: &TrialRun,
    verdict: &ContractVerdict,
) -> TrialSnapshot {
    let verdict_text = match verdict {
        ContractVerdict::KnownFailure { reason, .. } => format!("known-failure: {reason}"),
        ContractVerdict::NotApplicable { code, .. } => format!("not-applicable: {code}"),
        v => v.label().to_string(),
    };
    TrialSnapshot {
        trial: trial.name(),
        description: trial.case.file.description.clone(),
        cassette: cassette.provenance.kind,
        verdict: verdict_text,
        encode_error: run.encode_error.as_ref().map(ToString::to_string),
        grounding: (!trial.case.file.hosted.is_empty())
            .then(|| crate::run::trial_telemetry(trial.provider, run)),
        exchanges: run
            .exchanges
            .iter()
            .enumerate()
            .map(|(i, e)| ExchangeSnapshot {
                request: providers::projection(trial.provider, &e.encoded.request.body),
                superseded: e.superseded.clone(),
                sent_back: (i > 0).then(|| new_items(trial, &run.exchanges[i - 1], e)),
                notes: e.encoded.notes.clone(),
                outcome: e.outcome.clone().unwrap_or_default(),
            })
            .collect(),
    }
}

/// Conversation items in `cur`'s request beyond those of `prev`'s.
fn new_items(trial: &Trial, prev: &run::ExchangeRun, cur: &run::ExchangeRun) -> Value {
    let key = providers::conversation_key(trial.provider);
    let items = |e: &run::ExchangeRun| {
        e.encoded
            .request
            .body
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    // A round continued by `previous_response_id` sends only its new items.
    if cur
        .encoded
        .request
        .body
        .get("previous_response_id")
        .is_some()
    {
        return Value::Array(items(cur));
    }
    let (before, now) = (items(prev), items(cur));
    Value::Array(now.into_iter().skip(before.len()).collect())
}

/// Everything broken in the suite beyond single trials, one `path:line:col: what` message per
/// file: case, tool and provider files that did not load, then orphaned cassettes and snapshots.
/// Every command reports these and exits non-zero when there are any.
pub fn suite_problems(root: &Path, discovery: &Discovery) -> Vec<String> {
    let mut out: Vec<String> = discovery
        .broken
        .iter()
        .map(|(_, e)| e.to_string())
        .collect();
    if discovery.incomplete {
        out.push(
            "the suite could not be discovered, so no cassette or snapshot is judged orphaned: fix the file above first"
                .into(),
        );
    }
    out.extend(orphans(root, discovery));
    out
}

/// How many files a problem list from [`suite_problems`] names (the note on an incomplete
/// discovery is not a file).
pub fn broken_file_count(discovery: &Discovery, problems: &[String]) -> usize {
    problems.len() - usize::from(discovery.incomplete)
}

/// Cassettes and snapshots no trial owns (each one is a failure). Nothing is an orphan when
/// discovery was incomplete: a file that could not be read must not make others "deletable".
pub fn orphans(root: &Path, discovery: &Discovery) -> Vec<String> {
    if discovery.incomplete {
        return Vec::new();
    }
    let ids: Vec<TrialId> = discovery.trials.iter().map(Trial::id).collect();
    let mut owned_cassettes: Vec<PathBuf> = ids.iter().map(TrialId::cassette_path).collect();
    owned_cassettes.sort();
    let mut owned_snaps: Vec<String> = ids.iter().map(TrialId::snapshot_file).collect();
    owned_snaps.sort();
    // A broken case still owns its files: they must not be reported (or deleted) because of a typo.
    let broken: Vec<&str> = discovery.broken.iter().map(|(n, _)| n.as_str()).collect();
    let of_broken_case =
        |id: Option<TrialId>| id.is_some_and(|id| broken.contains(&id.case.as_str()));
    let mut out = Vec::new();
    // `cassettes/servers/` holds model servers' recorded runs, which `--replay` checks.
    let tapes = root.join("cassettes").join(cassette::SERVER_TAPES);
    for f in files_under(&root.join("cassettes"), "json") {
        if f.starts_with(&tapes) {
            continue;
        }
        let rel = f.strip_prefix(root).unwrap_or(&f).to_path_buf();
        if owned_cassettes.binary_search(&rel).is_err()
            && !of_broken_case(TrialId::from_cassette_path(&rel))
        {
            out.push(format!("{}:1: orphaned cassette: no trial owns it (delete it, or restore its case/choice/mode)", rel.display()));
        }
    }
    // `tests/snapshots/gateway/` holds gateway trials' snapshots (`src/gateway/snapshot.rs`).
    let gateway_snaps = root.join("tests").join("snapshots").join("gateway");
    for f in files_under(&root.join("tests").join("snapshots"), "snap")
        .into_iter()
        .filter(|f| !f.starts_with(&gateway_snaps))
    {
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if owned_snaps.binary_search(&name).is_err()
            && !of_broken_case(TrialId::from_snapshot_file(&name))
        {
            out.push(format!(
                "tests/snapshots/{name}:1: unused snapshot: no trial owns it (delete it)"
            ));
        }
    }
    out
}

/// Every file under `dir` (its subfolders too) whose extension is `ext`, sorted.
pub(crate) fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out.sort();
    out
}
