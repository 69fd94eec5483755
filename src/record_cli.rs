//! `tooltape record`: selects trials (missing, stale or all), resolves keys and base URLs, refuses
//! under CI, and records with bounded concurrency against the live APIs or the simulator.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::case::{self, Trial};
use crate::cli::RecordArgs;
use crate::harness::{self, ReplayStatus};
use crate::providers::Provider;
use crate::run::Endpoint;

/// Which trials a record run takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Missing,
    Stale,
    All,
}

/// Where each provider's requests go, or why it is skipped.
pub fn endpoints(
    root: &Path,
    simulator: Option<&str>,
) -> BTreeMap<Provider, Result<(Endpoint, String), String>> {
    let table = case::load_providers(&root.join("cases")).ok();
    let mut out = BTreeMap::new();
    for p in Provider::ALL {
        let entry = if let Some(url) = simulator {
            Ok((
                Endpoint {
                    base_url: url.to_string(),
                    key: Some("tooltape-simulator-key".into()),
                    extra_headers: Vec::new(),
                },
                format!("simulator {}", env!("CARGO_PKG_VERSION")),
            ))
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

/// Trials to record under `which`, with the reason for each.
pub async fn select(root: &Path, trials: Vec<Trial>, which: Which) -> Vec<(Trial, String)> {
    let mut out = Vec::new();
    for t in trials {
        let path = root.join(t.cassette_path());
        let exists = path.is_file();
        match which {
            Which::All => out.push((
                t,
                if exists {
                    "re-record".into()
                } else {
                    "missing".into()
                },
            )),
            Which::Missing => {
                if !exists {
                    out.push((t, "missing".into()));
                }
            }
            Which::Stale => {
                if exists
                    && let Err(ReplayStatus::Stale(why)) =
                        harness::replay_trial(root, &t).await.status
                {
                    out.push((t, why));
                }
            }
        }
    }
    out
}

pub fn run(root: &Path, a: &RecordArgs) -> i32 {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        eprintln!(
            "tooltape record refuses to run under CI (CI is set): recording calls paid APIs and writes files. Record locally, commit the cassettes."
        );
        return 1;
    }
    let which = if a.all {
        Which::All
    } else if a.stale {
        Which::Stale
    } else {
        Which::Missing
    };
    let provider = match a
        .provider
        .as_deref()
        .map(|s| Provider::from_slug(s).ok_or(s))
    {
        Some(Err(s)) => {
            eprintln!("unknown provider `{s}`");
            return 2;
        }
        Some(Ok(p)) => Some(p),
        None => None,
    };
    let trials: Vec<Trial> = crate::cli::select(root, a.filter.as_deref())
        .into_iter()
        .filter(|t| provider.is_none_or(|p| t.provider == p))
        .collect();
    harness::runtime().block_on(async {
        let chosen = select(root, trials, which).await;
        if a.dry_run {
            let mut requests = 0;
            for (t, why) in &chosen {
                let n = 1 + t.case.file.rounds.len();
                requests += n;
                println!(
                    "{}  ({why}; up to {n} request{})",
                    t.name(),
                    if n == 1 { "" } else { "s" }
                );
            }
            println!(
                "{} trials, up to {requests} requests; nothing sent (--dry-run)",
                chosen.len()
            );
            return 0;
        }
        let sim = if a.simulate {
            match crate::simulate::Simulator::start(crate::simulate::SimConfig::default()).await {
                Ok(s) => Some(s),
                Err(e) => {
                    eprintln!("cannot start the simulator: {e}");
                    return 1;
                }
            }
        } else {
            None
        };
        let sim_url = sim.as_ref().map(crate::simulate::Simulator::base_url);
        let endpoints = endpoints(root, sim_url.as_deref());
        let summary = record_all(root, chosen, &endpoints, a.concurrency.max(1)).await;
        println!("{}", summary.render());
        i32::from(!summary.failed.is_empty())
    })
}

/// What a record run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub recorded: Vec<String>,
    pub skipped: Vec<(String, String)>,
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
        reasons.dedup();
        for r in reasons {
            s.push_str(&format!("\n  skipped: {r}"));
        }
        for (t, why) in &self.failed {
            s.push_str(&format!("\n  failed: {t}: {why}"));
        }
        s
    }
}

/// Records the chosen trials, at most `concurrency` at once.
pub async fn record_all(
    root: &Path,
    chosen: Vec<(Trial, String)>,
    endpoints: &BTreeMap<Provider, Result<(Endpoint, String), String>>,
    concurrency: usize,
) -> Summary {
    let client = crate::run::client(Duration::from_secs(180));
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut summary = Summary::default();
    let mut futs = Vec::new();
    for (t, _) in chosen {
        match endpoints.get(&t.provider) {
            Some(Ok((endpoint, source))) => {
                let (client, sem, endpoint, source) = (
                    client.clone(),
                    Arc::clone(&sem),
                    endpoint.clone(),
                    source.clone(),
                );
                futs.push(async move {
                    let _permit = sem.acquire().await;
                    let r =
                        crate::record::record_trial(&client, root, &t, &endpoint, &source).await;
                    (t.name(), r)
                });
            }
            Some(Err(why)) => summary.skipped.push((t.name(), why.clone())),
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
