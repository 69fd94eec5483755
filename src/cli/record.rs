//! `tooltape record`: selects trials (missing, stale or all), resolves keys and base URLs, refuses
//! under CI, and records with bounded concurrency against the live APIs or the simulator, with a
//! progress bar per provider and a summary.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::RecordArgs;
use super::cases::Corpus;
use super::exit::{self, CliError, CommandResult};
use super::select::provider_arg;
use tooltape::{
    Provider, Trial, record::Endpoints, record::RecordOptions, record::Refresh, record::Summary,
    record::dry_run_listing, record::endpoints, record::in_ci, record::record_all_with,
    redact::Secrets, runtime,
};

/// Runs `tooltape record`: exit 1 under CI, when a recording failed or the suite is broken.
pub fn run(corpus: Corpus<'_>, a: &RecordArgs) -> CommandResult {
    let root = corpus.root;
    if in_ci() {
        return Err(CliError::FailedWith(
            "tooltape record refuses to run under CI (CI is set): recording calls paid APIs and writes files.\n  record locally (make record), review with `tooltape scan` and `git diff`, and commit the cassettes".into()
        ));
    }
    let refresh = if a.all {
        Refresh::All
    } else if a.stale {
        Refresh::Stale
    } else {
        Refresh::Missing
    };
    let provider = a.provider.as_deref().map(provider_arg).transpose()?;
    // Temporary files a killed recording left behind (their process is gone).
    for p in tooltape::cassette::clean_stale_temps(&root.join("cassettes"), true) {
        eprintln!("removed {} (left by a killed recording)", p.display());
    }
    let sel = super::select::select(corpus, a.filter.as_deref());
    let trials: Vec<Trial> = (sel.trials.iter())
        .filter(|t| provider.is_none_or(|p| t.provider == p))
        .cloned()
        .collect();
    let recorded = runtime().block_on(async {
        let chosen = tooltape::record::select(root, trials, refresh).await;
        if a.dry_run {
            out!("{}", dry_run_listing(&chosen));
            return Ok(());
        }
        if chosen.is_empty() {
            outln!("nothing to record");
            return Ok(());
        }
        let sim = if a.simulate {
            match tooltape::Simulator::start(tooltape::SimConfig::default()).await {
                Ok(s) => Some(s),
                Err(e) => {
                    // Said now: the suite's problems, when there are any, come after.
                    eprintln!("cannot start the simulator on loopback: {e}");
                    return Err(CliError::Failed);
                }
            }
        } else {
            None
        };
        let endpoints = endpoints(root, sim.as_ref().map(|s| s.base_url()).as_deref());
        let opts = RecordOptions {
            secrets: Secrets::from_env(),
            ..RecordOptions::default()
        };
        let summary = record_with_bars(root, chosen, &endpoints, a.concurrency.max(1), &opts).await;
        outln!("{}", summary.render());
        exit::failed_if(!summary.failed.is_empty())
    });
    if sel.broken_files > 0 {
        sel.report_problems();
        eprintln!(
            "the suite is broken{}: those cases were not recorded",
            sel.broken_suffix(0)
        );
        return Err(CliError::Failed);
    }
    recorded
}

fn bars(chosen: &[(Trial, String)]) -> BTreeMap<Provider, ProgressBar> {
    let multi = MultiProgress::new();
    if !std::io::stderr().is_terminal() {
        multi.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = ProgressStyle::with_template("{prefix:>16} [{bar:30}] {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    let mut out = BTreeMap::new();
    for p in Provider::ALL {
        let n = chosen.iter().filter(|(t, _)| t.provider == p).count() as u64;
        if n > 0 {
            let bar = multi.add(
                ProgressBar::new(n)
                    .with_style(style.clone())
                    .with_prefix(p.slug()),
            );
            out.insert(p, bar);
        }
    }
    out
}

/// Records the chosen trials, at most `concurrency` at once, with the default options (three
/// attempts, backoff from 1 s capped at 60 s, keys from the environment redacted).
pub async fn record_all(
    root: &Path,
    chosen: Vec<(Trial, String)>,
    endpoints: &Endpoints,
    concurrency: usize,
) -> Summary {
    let opts = RecordOptions {
        secrets: Secrets::from_env(),
        ..RecordOptions::default()
    };
    record_with_bars(root, chosen, endpoints, concurrency, &opts).await
}

/// Records with one progress bar per provider on a terminal's stderr (hidden otherwise).
async fn record_with_bars(
    root: &Path,
    chosen: Vec<(Trial, String)>,
    endpoints: &Endpoints,
    concurrency: usize,
    opts: &RecordOptions,
) -> Summary {
    let bars = bars(&chosen);
    let progress = |p: Provider, done: Option<bool>| {
        if let Some(b) = bars.get(&p) {
            b.inc(1);
            if let Some(ok) = done {
                b.set_message(if ok { "" } else { "(failures)" });
            }
        }
    };
    let summary = record_all_with(root, chosen, (endpoints, concurrency), opts, &progress).await;
    for b in bars.values() {
        b.finish();
    }
    summary
}
