//! Recording a suite: which trials to record (missing, stale, all), where each provider's
//! requests go (keys and base URLs, or the simulator), bounded concurrency, and the summary.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::case::Trial;
use crate::harness::{self, ReplayStatus};
use crate::model::Provider;
use crate::record::trial::{RecordOptions, record_trial};
use crate::redact::Secrets;
use crate::run::Endpoint;

/// Which cassettes a record run (re)records: the missing ones, the stale ones, or all
/// (`tooltape record --missing|--stale|--all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refresh {
    Missing,
    Stale,
    All,
}

/// The key the simulator is sent (it checks that one is present, nothing more).
pub const SIMULATOR_KEY: &str = "tooltape-simulator-key";

/// Where each provider's requests go (endpoint, provenance source), or why it is skipped.
pub type Endpoints = BTreeMap<Provider, Result<(Endpoint, String), String>>;

/// Resolves endpoints: everything to `simulator` when given, else keys and base URLs from the
/// environment, base URLs falling back to the corpus's `providers.toml`.
pub fn endpoints(root: &Path, simulator: Option<&str>) -> Endpoints {
    let table = crate::case::providers_of(root).ok();
    let mut out = BTreeMap::new();
    for p in Provider::ALL {
        let entry = if let Some(url) = simulator {
            let endpoint = Endpoint {
                base_url: url.to_string(),
                key: Some(SIMULATOR_KEY.into()),
                extra_headers: Vec::new(),
            };
            Ok((endpoint, format!("simulator {}", env!("CARGO_PKG_VERSION"))))
        } else {
            let key = p
                .key_vars()
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|k| !k.is_empty()));
            match key {
                None => Err(format!("set {} to record {p}", p.key_vars().join(" or "))),
                Some(key) => {
                    let base = std::env::var(p.base_url_var())
                        .ok()
                        .filter(|u| !u.is_empty())
                        .or_else(|| {
                            table
                                .as_ref()
                                .and_then(|t| t.get(&p))
                                .map(|c| c.base_url.clone())
                        })
                        .unwrap_or_default();
                    // Accept SDK-style base URLs ending in /v1 (or /v1beta): request paths carry it.
                    let base = base
                        .trim_end_matches('/')
                        .trim_end_matches("/v1beta")
                        .trim_end_matches("/v1")
                        .to_string();
                    Ok((
                        Endpoint {
                            base_url: base.clone(),
                            key: Some(key),
                            extra_headers: Vec::new(),
                        },
                        base,
                    ))
                }
            }
        };
        out.insert(p, entry);
    }
    out
}

/// Trials to record under `refresh`, with the reason for each. `--stale` replays each existing
/// cassette on loopback (nothing leaves the machine) and keeps the stale ones.
pub async fn select(root: &Path, trials: Vec<Trial>, refresh: Refresh) -> Vec<(Trial, String)> {
    let mut out = Vec::new();
    for t in trials {
        let exists = root.join(t.cassette_path()).is_file();
        match refresh {
            Refresh::All => out.push((
                t,
                if exists {
                    "re-record".into()
                } else {
                    "missing".into()
                },
            )),
            Refresh::Missing if !exists => out.push((t, "missing".into())),
            Refresh::Missing => {}
            Refresh::Stale => {
                if exists
                    && let Err(ReplayStatus::Stale(why)) =
                        harness::replay_trial(root, &t).await.status
                {
                    out.push((t, format!("stale: {why}")));
                }
            }
        }
    }
    out
}

/// Whether `CI` is set to something: recording is refused there.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// `--dry-run` output: one line per trial with why and how many requests, then the totals.
pub fn dry_run_listing(chosen: &[(Trial, String)]) -> String {
    let mut out = String::new();
    let mut requests = 0;
    for (t, why) in chosen {
        let n = 1 + t.case.file.rounds.len();
        requests += n;
        out.push_str(&format!(
            "{}  ({why}; up to {n} request{})\n",
            t.name(),
            if n == 1 { "" } else { "s" }
        ));
    }
    out.push_str(&format!(
        "{} trials, up to {requests} requests; nothing sent (--dry-run)\n",
        chosen.len()
    ));
    out
}

/// What a record run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub recorded: Vec<String>,
    /// (trial, "set VAR to record PROVIDER")
    pub skipped: Vec<(String, String)>,
    /// (trial, reason)
    pub failed: Vec<(String, String)>,
}

impl Summary {
    pub fn render(&self) -> String {
        let mut s = format!(
            "recorded {}, skipped {} (missing key), failed {}",
            self.recorded.len(),
            self.skipped.len(),
            self.failed.len()
        );
        let mut reasons: Vec<&String> = self.skipped.iter().map(|(_, why)| why).collect();
        reasons.sort();
        reasons.dedup();
        for r in reasons {
            let n = self.skipped.iter().filter(|(_, w)| w == r).count();
            s.push_str(&format!(
                "\n  skipped {n} trial{}: {r}",
                if n == 1 { "" } else { "s" }
            ));
        }
        for (t, why) in &self.failed {
            s.push_str(&format!(
                "\n  failed: {t}: {why}\n    (an existing cassette was left as it was)"
            ));
        }
        s
    }
}

/// Records the chosen trials, at most `concurrency` at once. `progress` hears of each trial as
/// it ends: `Some(ok)` when it was recorded or failed, `None` when its provider was skipped.
pub async fn record_all_with(
    root: &Path,
    chosen: Vec<(Trial, String)>,
    (endpoints, concurrency): (&Endpoints, usize),
    opts: &RecordOptions,
    progress: &(dyn Fn(Provider, Option<bool>) + Sync),
) -> Summary {
    let client = crate::run::client(opts.timeout);
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut opts = opts.clone();
    let keys = endpoints
        .values()
        .filter_map(|e| e.as_ref().ok())
        .filter_map(|(e, _)| e.key.clone());
    opts.secrets = Secrets::new(opts.secrets.values().iter().cloned().chain(keys));
    let opts = &opts;
    let mut summary = Summary::default();
    let mut futs = Vec::new();
    for (t, _) in chosen {
        match endpoints.get(&t.provider) {
            Some(Ok((endpoint, source))) => {
                let (client, sem) = (client.clone(), Arc::clone(&sem));
                futs.push(async move {
                    let _permit = sem.acquire().await;
                    let r = record_trial((&client, endpoint), root, &t, source, opts).await;
                    progress(t.provider, Some(r.is_ok()));
                    (t.name(), r)
                });
            }
            Some(Err(why)) => {
                progress(t.provider, None);
                summary.skipped.push((t.name(), why.clone()));
            }
            None => summary.skipped.push((t.name(), "no endpoint".into())),
        }
    }
    for (name, r) in futures_util::future::join_all(futs).await {
        match r {
            Ok(_) => summary.recorded.push(name),
            Err(e) => summary.failed.push((name, e)),
        }
    }
    summary
}
