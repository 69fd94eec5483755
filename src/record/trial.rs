//! Recording: runs a trial against a live provider or the simulator (retrying 429/5xx with
//! bounded backoff) and turns what happened into a redacted, scanned cassette. A failed
//! recording never replaces an existing cassette.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::case::Trial;
use crate::cassette::{self, Cassette, Interaction, Provenance, ProvenanceKind, StoredResponse};
use crate::http::HttpResponse;
use crate::model::DiagnosticKind;
use crate::redact::{self, Secrets};
use crate::run::{self, Endpoint, TrialRun};

/// The simulator identifies itself with `SIMULATOR_HEADER` (its answers are never presented
/// as recorded) and reads a case's scenario from `SCENARIO_HEADER` (never stored).
pub(crate) use crate::simulate::{SCENARIO_HEADER, SIMULATOR_HEADER};

/// How often and how long to retry a trial answered with 429 or 5xx.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub attempts: u32,
    /// Backoff before retry n (1-based) is `base * 2^(n-1)`, or the server's hint when longer.
    pub base: Duration,
    /// No wait is longer than this, whatever the server asks.
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 3,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
        }
    }
}

/// Everything a recording needs besides the trial and its endpoint.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub retry: RetryPolicy,
    /// Literal keys to redact wherever they appear (the ones in the environment).
    pub secrets: Secrets,
    /// Per-request timeout (a slower answer is a failed recording).
    pub timeout: Duration,
}

impl Default for RecordOptions {
    fn default() -> RecordOptions {
        RecordOptions {
            retry: RetryPolicy::default(),
            secrets: Secrets::default(),
            timeout: Duration::from_secs(180),
        }
    }
}

/// How long the server asks us to wait: `retry-after-ms`, `retry-after` (seconds or an HTTP
/// date, relative to `now`), or Gemini's `RetryInfo.retryDelay` (`"34.4s"`) in the body.
pub fn server_hint(resp: &HttpResponse, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = resp
        .header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    if let Some(v) = resp.header("retry-after") {
        if let Ok(s) = v.trim().parse::<f64>() {
            return Some(Duration::from_secs_f64(s.max(0.0)));
        }
        if let Some(at) = parse_http_date(v) {
            return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
        }
    }
    let body: serde_json::Value = serde_json::from_slice(&resp.body).ok()?;
    let details = body.pointer("/error/details")?.as_array()?;
    details.iter().find_map(|d| {
        let is_retry = d
            .get("@type")
            .and_then(|t| t.as_str())
            .is_some_and(|t| t.ends_with("RetryInfo"));
        let delay = d
            .get("retryDelay")?
            .as_str()?
            .strip_suffix('s')?
            .parse::<f64>()
            .ok()?;
        is_retry.then(|| Duration::from_secs_f64(delay.max(0.0)))
    })
}

/// Parses an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`).
pub(crate) fn parse_http_date(s: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [_, day, mon, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x == mon)? as i64 + 1;
    let (d, y): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let [h, mi, se] = hms.as_slice() else {
        return None;
    };
    // Days from civil (Howard Hinnant).
    let (y2, m2) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + h * 3600 + mi * 60 + se).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// The wait before retry number `retry` (1-based): the longer of the backoff and the server's
/// hint, capped.
pub fn backoff(policy: &RetryPolicy, retry: u32, hint: Option<Duration>) -> Duration {
    let exp = policy
        .base
        .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
    exp.max(hint.unwrap_or(Duration::ZERO)).min(policy.cap)
}

/// The first response of the run that should be retried (429 or 5xx, not an expected error).
fn retryable<'r>(trial: &Trial, run: &'r TrialRun) -> Option<&'r HttpResponse> {
    let expected = expected_status(trial);
    let last = run.exchanges.len().saturating_sub(1);
    run.exchanges
        .iter()
        .enumerate()
        .map(|(i, ex)| (i, &ex.response))
        .find_map(|(i, r)| {
            let retry = r.status == 429 || r.status >= 500;
            (retry && !(i == last && expected == Some(r.status))).then_some(r)
        })
}

fn expected_status(trial: &Trial) -> Option<u16> {
    trial
        .expectations()
        .iter()
        .find_map(|e| e.get_ref().error_status)
}

/// Builds the cassette for a finished run, or says why the recording failed.
pub fn cassette_from_run(trial: &Trial, run: &TrialRun, source: &str) -> Result<Cassette, String> {
    if let Some(e) = &run.transport_error {
        return Err(e.clone());
    }
    let expected = expected_status(trial);
    let mut interactions = Vec::new();
    let mut simulated = source.starts_with("simulator");
    let mut answered_model = None;
    // A fallback attempt (superseded) answered its 400 on purpose; an expected error is the
    // last exchange's answer (a trial stops at an error; a superseded attempt is never last).
    let last = run.exchanges.len().saturating_sub(1);
    for (i, ex) in run.exchanges.iter().enumerate() {
        let status = ex.response.status;
        let expected_error = ex.superseded.is_some() || (i == last && expected == Some(status));
        if !(ex.response.is_success() || expected_error) {
            let body = String::from_utf8_lossy(&ex.response.body)
                .chars()
                .take(300)
                .collect::<String>();
            return Err(format!(
                "exchange {} answered {status}: {}",
                i + 1,
                redact::redact_text(&body, &Secrets::default())
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
                // A case whose simulated stream is cut on purpose records the cut.
                let cut_on_purpose = trial.case.file.simulate.stream_fault
                    == Some(crate::scenario::StreamFault::Cut);
                if !cut_on_purpose
                    && o.diagnostics
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
        simulated |= ex.response.header(SIMULATOR_HEADER).is_some();
        interactions.push(Interaction {
            request: ex.encoded.request.clone(),
            response: StoredResponse::from_http(&ex.response, ex.neutral.stream),
        });
    }
    // An encoder refusal is recorded as what it is: the interactions before it (maybe none).
    if interactions.is_empty() && run.encode_error.is_none() {
        return Err("the trial sent no request".into());
    }
    let kind = if simulated {
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
            server: None,
        },
        interactions,
    })
}

/// Redacts a cassette, serializes it, scans the whole text and writes it atomically; refuses
/// (writing nothing) when the scan finds anything.
pub fn write_cassette(
    path: &Path,
    shown: &Path,
    mut c: Cassette,
    secrets: &Secrets,
) -> Result<(), String> {
    redact::redact_cassette(&mut c, secrets);
    if let Some(src) = &mut c.provenance.source {
        *src = redact::redact_text(src, secrets);
    }
    let text = cassette::to_text(&c);
    let findings = redact::scan(&text, secrets);
    if !findings.is_empty() {
        let lines: Vec<String> = findings
            .iter()
            .map(|f| format!("{}:{}:{}: {}", shown.display(), f.line, f.column, f.what))
            .collect();
        return Err(format!(
            "refusing to write the cassette: the secret scan found\n  {}\n  add the pattern to src/redact.rs, then record again",
            lines.join("\n  ")
        ));
    }
    cassette::write_atomic(path, &text)
        .map_err(|e| format!("cannot write {}: {e}", shown.display()))
}

/// Records one trial (retrying 429/5xx per the policy) and writes its cassette under `root`.
/// Returns the path written and how many attempts it took.
pub async fn record_trial(
    (client, endpoint): (&reqwest::Client, &Endpoint),
    root: &Path,
    trial: &Trial,
    source: &str,
    opts: &RecordOptions,
) -> Result<(PathBuf, u32), String> {
    let mut endpoint = endpoint.clone();
    let scenario = &trial.case.file.simulate;
    if *scenario != crate::scenario::Scenario::default() {
        endpoint
            .extra_headers
            .push((SCENARIO_HEADER.to_string(), scenario.header_value()));
    }
    let attempts = opts.retry.attempts.max(1);
    let mut attempt = 1;
    let run = loop {
        // Fresh per attempt, like replay: a cassette always holds the whole fallback sequence.
        let cache = crate::run::SupportCache::new(crate::run::SupportCache::DEFAULT_TTL);
        let run = run::run_trial(client, trial, &endpoint, &cache).await;
        let Some(resp) = retryable(trial, &run) else {
            break run;
        };
        if attempt >= attempts {
            let why = cassette_from_run(trial, &run, source)
                .err()
                .unwrap_or_default();
            return Err(format!("gave up after {attempts} attempts: {why}"));
        }
        let wait = backoff(&opts.retry, attempt, server_hint(resp, SystemTime::now()));
        tokio::time::sleep(wait).await;
        attempt += 1;
    };
    let cassette = cassette_from_run(trial, &run, source)
        .map_err(|e| redact::redact_text(&e, &opts.secrets))?;
    let rel = trial.cassette_path();
    write_cassette(&root.join(&rel), &rel, cassette, &opts.secrets)?;
    Ok((rel, attempt))
}
