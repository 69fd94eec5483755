//! The side-by-side table of gateways run over the same trials in one run: conformance, added
//! latency (client time minus upstream time, paired per request), streamed time to the first
//! tool-call delta, peak memory; and its Markdown region, rewritten between markers in a file.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::profile::LoadedGateway;
use crate::engine::{Cell, TrialResult};
use crate::text::md_cell;

pub const BEGIN: &str = "<!-- compare:begin -->";
pub const END: &str = "<!-- compare:end -->";

/// What one gateway's run produced.
pub struct GatewayRun {
    pub profile: Arc<LoadedGateway>,
    pub results: Vec<TrialResult>,
    /// Peak resident memory of the process group we started, KiB (`None`: not started by us,
    /// or not readable).
    pub peak_memory_kib: Option<u64>,
    /// Start-up time, when we started it.
    pub started_in: Option<Duration>,
    /// The trials' wall time (start-up excluded).
    pub wall: Duration,
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    pub gateway: String,
    pub version: String,
    /// Passed / applicable over the trials of the routes every compared gateway serves.
    pub common: (usize, usize),
    /// Passed / applicable over the gateway's whole suite.
    pub whole: (usize, usize),
    pub common_trials: usize,
    pub whole_trials: usize,
    /// Added latency (ms) over the common trials' paired requests: p50, p99.
    pub added: Option<(f64, f64)>,
    /// Requests paired with their upstream time / requests sent (common trials).
    pub paired: (usize, usize),
    /// Streamed time to the first tool-call delta (ms) over the common trials: p50, p99.
    pub first_call: Option<(f64, f64)>,
    pub first_call_samples: usize,
    pub peak_memory_mib: Option<f64>,
    pub started_in: Option<Duration>,
    pub wall: Duration,
}

/// The routes (by name, `chat→anthropic`) every profile serves, in the first profile's order.
pub fn common_routes(profiles: &[&LoadedGateway]) -> Vec<String> {
    let names = |p: &LoadedGateway| -> Vec<String> {
        p.profile
            .routes
            .iter()
            .map(|r| r.get_ref().name())
            .collect()
    };
    let Some((first, rest)) = profiles.split_first() else {
        return Vec::new();
    };
    let others: Vec<Vec<String>> = rest.iter().map(|p| names(p)).collect();
    names(first)
        .into_iter()
        .filter(|n| others.iter().all(|o| o.contains(n)))
        .collect()
}

/// The gateway's version: the profile's pinned one, this build (debug or release) for a profile
/// that starts the running `tooltape`, else `n/a`.
pub fn version(profile: &LoadedGateway) -> String {
    if let Some(v) = &profile.profile.version {
        return v.clone();
    }
    let runs_self = profile
        .profile
        .start
        .as_ref()
        .is_some_and(|s| s.command.iter().any(|a| a.contains("{{tooltape}}")));
    if runs_self {
        let build = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        format!("{} (this {build} build)", env!("CARGO_PKG_VERSION"))
    } else {
        "n/a".into()
    }
}

/// Whether the trial passed on its own merits: `Pass`, or a known failure that now passes (the
/// runner turns exactly those into `Fail`; a failure it names becomes `Known`).
fn passed(profile: &LoadedGateway, r: &TrialResult) -> bool {
    match &r.cell {
        Cell::Pass => true,
        Cell::Fail(_) => {
            crate::engine::known_failure(&profile.profile.known_failure, &r.id.key(), None)
                .is_some()
        }
        _ => false,
    }
}

fn conformance<'a>(
    profile: &LoadedGateway,
    results: impl Iterator<Item = &'a TrialResult>,
) -> (usize, usize) {
    let (mut passed_n, mut applicable) = (0, 0);
    for r in results {
        if matches!(r.cell, Cell::NotApplicable(_)) {
            continue;
        }
        applicable += 1;
        passed_n += usize::from(passed(profile, r));
    }
    (passed_n, applicable)
}

/// Nearest-rank percentile (`p` in 0..=100) of unsorted samples.
pub fn percentile(samples: &[f64], p: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    Some(s[rank.clamp(1, s.len()) - 1])
}

fn p50_p99(samples: &[f64]) -> Option<(f64, f64)> {
    Some((percentile(samples, 50.0)?, percentile(samples, 99.0)?))
}

/// The table line of one run; `common` are the route names every compared gateway serves.
pub fn row(run: &GatewayRun, common: &[String]) -> CompareRow {
    let profile = &run.profile;
    let in_common = |r: &&TrialResult| common.contains(&r.id.route);
    let common_results: Vec<&TrialResult> = run.results.iter().filter(in_common).collect();
    let requests: Vec<_> = common_results
        .iter()
        .flat_map(|r| r.requests.iter())
        .collect();
    let added: Vec<f64> = requests.iter().filter_map(|t| t.added_ms()).collect();
    let first: Vec<f64> = requests
        .iter()
        .filter(|t| t.streamed)
        .filter_map(|t| t.first_call.map(|d| d.as_secs_f64() * 1000.0))
        .collect();
    CompareRow {
        gateway: profile.name.clone(),
        version: version(profile),
        common: conformance(profile, common_results.iter().copied()),
        whole: conformance(profile, run.results.iter()),
        common_trials: common_results.len(),
        whole_trials: run.results.len(),
        added: p50_p99(&added),
        paired: (added.len(), requests.len()),
        first_call: p50_p99(&first),
        first_call_samples: first.len(),
        peak_memory_mib: run.peak_memory_kib.map(|k| k as f64 / 1024.0),
        started_in: run.started_in,
        wall: run.wall,
    }
}

/// How the table was made: shown above it.
pub struct CompareMeta {
    pub date: String,
    pub machine: String,
    pub command: String,
    pub concurrency: usize,
    pub common_routes: Vec<String>,
    pub filter: Option<String>,
}

fn pct(passed: usize, of: usize) -> String {
    if of == 0 {
        return "0/0".into();
    }
    format!("{passed}/{of} ({:.0}%)", passed as f64 * 100.0 / of as f64)
}

fn pair(v: Option<(f64, f64)>) -> String {
    v.map_or_else(|| "n/a".into(), |(a, b)| format!("{a:.2} / {b:.2}"))
}

fn cells(r: &CompareRow) -> [String; 9] {
    [
        r.gateway.clone(),
        r.version.clone(),
        pct(r.common.0, r.common.1),
        pct(r.whole.0, r.whole.1),
        format!(
            "{} ({} of {} paired)",
            pair(r.added),
            r.paired.0,
            r.paired.1
        ),
        format!("{} ({})", pair(r.first_call), r.first_call_samples),
        r.peak_memory_mib
            .map_or_else(|| "n/a".into(), |m| format!("{m:.0}")),
        format!("{} / {}", r.common_trials, r.whole_trials),
        format!(
            "{}{:.1} s",
            r.started_in
                .map(|s| format!("start {:.1} s, run ", s.as_secs_f64()))
                .unwrap_or_default(),
            r.wall.as_secs_f64()
        ),
    ]
}

const HEADERS: [&str; 9] = [
    "gateway",
    "version",
    "conformance, common trials",
    "conformance, whole suite",
    "added latency p50 / p99 (ms)",
    "first tool-call delta p50 / p99 (ms)",
    "peak memory (MiB)",
    "trials common / whole",
    "wall time",
];

/// The table as aligned text for the terminal.
pub fn terminal(rows: &[CompareRow]) -> String {
    let lines: Vec<[String; 9]> = rows.iter().map(cells).collect();
    let width = |i: usize| {
        lines
            .iter()
            .map(|l| l[i].chars().count())
            .chain([HEADERS[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..HEADERS.len()).map(width).collect();
    let mut s = String::new();
    let head: Vec<String> = HEADERS.iter().map(|h| (*h).to_string()).collect();
    let mut put = |cols: &[String]| {
        let padded: Vec<String> = cols
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(s, "{}", padded.join("  ").trim_end());
    };
    put(&head);
    for l in &lines {
        put(l);
    }
    s
}

/// The Markdown that goes between the markers: when, where, the command, the table, what the
/// columns mean.
pub fn markdown(rows: &[CompareRow], meta: &CompareMeta) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Measured {} on {}, all gateways in one run, one after another, each with concurrency {} (trials of different cases in parallel, one case's trials in turn). Remake it with `make gateway-compare` (`{}`).\n",
        meta.date, meta.machine, meta.concurrency, meta.command
    );
    if let Some(f) = &meta.filter {
        let _ = writeln!(s, "Only trials matching `{f}`.\n");
    }
    let _ = writeln!(s, "| {} |", HEADERS.join(" | "));
    let _ = writeln!(s, "|{}", " --- |".repeat(HEADERS.len()));
    for r in rows {
        let c = cells(r);
        let _ = writeln!(s, "| {} |", c.map(|x| md_cell(&x)).join(" | "));
    }
    let routes = meta
        .common_routes
        .iter()
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        s,
        "\nCommon trials: the trials of the routes every compared gateway serves ({routes}); \
         latency and first-delta figures are over those. Conformance is passed of applicable \
         (not applicable: the client cannot express the trial; a known failure counts as failed, \
         a clean 4xx refusal as not passed). Added latency: for each request, the client's time \
         (send → answer complete) minus the recording upstream's time for the same request \
         (request received → answer written; retries summed); a request nothing reached upstream \
         for is not paired. First tool-call delta: send → the first tool call the inbound \
         format's stream decoder sees, streamed requests only (sample count in brackets); it \
         includes the upstream's time. Peak memory: the sum of `VmHWM` over the gateway's process \
         group, sampled every 200 ms (n/a for a gateway given by `--url`). Wall time: start-up, \
         then the trials."
    );
    s
}

/// `text` with the region between [`BEGIN`] and [`END`] replaced by `body` (markers kept,
/// everything outside them byte-identical).
pub fn replace_region(text: &str, body: &str) -> Result<String, String> {
    let begin = text
        .find(BEGIN)
        .ok_or_else(|| format!("no `{BEGIN}` marker"))?;
    let end = text.find(END).ok_or_else(|| format!("no `{END}` marker"))?;
    if text[begin + BEGIN.len()..].contains(BEGIN) || text[end + END.len()..].contains(END) {
        return Err(format!("`{BEGIN}` and `{END}` must each appear once"));
    }
    if end < begin {
        return Err(format!("`{END}` comes before `{BEGIN}`"));
    }
    let inner = if body.ends_with('\n') {
        format!("\n{body}")
    } else {
        format!("\n{body}\n")
    };
    Ok(format!(
        "{}{inner}{}",
        &text[..begin + BEGIN.len()],
        &text[end..]
    ))
}

/// Rewrites the region of the file at `path` (a temporary file renamed over it); the file is left
/// untouched when the markers are missing.
pub fn rewrite_region(path: &Path, body: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let new = replace_region(&text, body).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::cassette::write_atomic(path, &new)
        .map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
