//! Running the matrix: which systems (`KIND:NAME`, or every shipped profile), each loaded as a
//! suite, its trials under the filter, the shard's pieces of them run on the engine's one road
//! (`engine::run`), one system after another, into the matrix document.

use std::path::Path;
use std::sync::Arc;

use super::document::{Document, Planned, SystemEntry, TrialCell, status_word};
use super::shard::{Piece, Shard, ShardInfo, plan};
use crate::case::Case;
use crate::client::Library;
use crate::engine::{self, Route, RoutedTrial, RunOptions, System, SystemKind};
use crate::gateway::LoadedGateway;
use crate::server::LoadedServer;

/// A system as `--systems` names it: `gateway:NAME` or `client:NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemName {
    pub kind: SystemKind,
    pub name: String,
}

impl SystemName {
    /// Reads `KIND:NAME`.
    pub fn parse(s: &str) -> Result<SystemName, String> {
        let kind = match s.split_once(':') {
            Some(("gateway", n)) if !n.is_empty() => (SystemKind::Gateway, n),
            Some(("client", n)) if !n.is_empty() => (SystemKind::Client, n),
            Some(("server", n)) if !n.is_empty() => (SystemKind::Server, n),
            _ => {
                return Err(format!(
                    "`{s}`: name a system as gateway:NAME, client:NAME or server:NAME (gateway:litellm, client:openai, server:llama-cpp)"
                ));
            }
        };
        Ok(SystemName {
            kind: kind.0,
            name: kind.1.to_string(),
        })
    }

    /// `KIND:NAME`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.kind.slug(), self.name)
    }
}

/// Every shipped profile under `root`: `gateways/*.toml`, `clients/*.toml`, then
/// `servers/*.toml`, each by name.
pub fn shipped(root: &Path) -> Vec<SystemName> {
    let mut out = Vec::new();
    for (kind, dir) in [
        (SystemKind::Gateway, "gateways"),
        (SystemKind::Client, "clients"),
        (SystemKind::Server, "servers"),
    ] {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                let stem = p.file_stem()?.to_string_lossy().into_owned();
                (p.extension()? == "toml" && p.is_file()).then_some(stem)
            })
            .collect();
        names.sort();
        out.extend(names.into_iter().map(|name| SystemName { kind, name }));
    }
    out
}

/// A loaded system: a gateway profile, a client library or a model server.
pub enum Suite {
    Gateway(Arc<LoadedGateway>),
    Client(Arc<Library>),
    Server(Arc<LoadedServer>),
}

impl Suite {
    /// Loads the profile `name` names (`gateways/NAME.toml`, `clients/NAME.toml`).
    pub fn load(root: &Path, name: &SystemName) -> Result<Suite, String> {
        match name.kind {
            SystemKind::Gateway => crate::gateway::load_gateway(root, &name.name)
                .map(|p| Suite::Gateway(Arc::new(p)))
                .map_err(|e| e.to_string()),
            SystemKind::Client => crate::client::load_client(root, &name.name)
                .map(|p| Suite::Client(Arc::new(Library::new(p, root))))
                .map_err(|e| e.to_string()),
            SystemKind::Server => crate::server::load_server(root, &name.name)
                .map(|p| Suite::Server(Arc::new(p)))
                .map_err(|e| e.to_string()),
        }
    }

    fn routes(&self) -> Vec<Route> {
        match self {
            Suite::Gateway(g) => g.routes(),
            Suite::Client(c) => System::routes(&**c),
            Suite::Server(s) => s.routes(),
        }
    }

    /// Whether the system runs `case` (`System::takes`).
    fn takes(&self, case: &Case) -> bool {
        match self {
            Suite::Gateway(g) => g.takes(case),
            Suite::Client(c) => c.takes(case),
            Suite::Server(s) => s.takes(case),
        }
    }

    async fn run(
        &self,
        label: &str,
        trials: Vec<RoutedTrial>,
        options: &RunOptions,
        note: &(dyn Fn(&str) + Sync),
    ) -> SystemEntry {
        match self {
            Suite::Gateway(g) => run_system(g, label, trials, options, note).await,
            Suite::Client(c) => run_system(c, label, trials, options, note).await,
            Suite::Server(s) => run_system(s, label, trials, options, note).await,
        }
    }
}

/// One piece of one system's suite on the engine's road, as the document's entry.
async fn run_system<S: System>(
    system: &Arc<S>,
    label: &str,
    trials: Vec<RoutedTrial>,
    options: &RunOptions,
    note: &(dyn Fn(&str) + Sync),
) -> SystemEntry {
    let mut entry = SystemEntry {
        system: label.to_string(),
        kind: system.kind().slug().to_string(),
        target: system.name().to_string(),
        version: system.version().map(str::to_string),
        routes: system.routes().iter().map(Route::name).collect(),
        summary: String::new(),
        status: String::new(),
        error: None,
        stale: Vec::new(),
        exited: None,
        causes: Vec::new(),
        trials: Vec::new(),
        scores: None,
    };
    if trials.is_empty() {
        entry.settle();
        return entry;
    }
    let mut cases: Vec<Arc<Case>> = Vec::new();
    for t in &trials {
        if !cases.iter().any(|c| Arc::ptr_eq(c, &t.case)) {
            cases.push(Arc::clone(&t.case));
        }
    }
    match engine::run(Arc::clone(system), trials, options, note).await {
        Ok(ran) => {
            if system.kind() == SystemKind::Server {
                entry.scores = Some(crate::server::scores(&ran.results, &cases));
            }
            let status = engine::status(&ran.results, ran.stale.len(), ran.exited.is_some(), false);
            entry.trials = ran.results.iter().map(TrialCell::of).collect();
            entry.causes = (ran.causes.iter())
                .map(|c| serde_json::to_value(c).unwrap_or_default())
                .collect();
            entry.stale = ran.stale;
            entry.exited = ran.exited;
            entry.settle();
            debug_assert_eq!(entry.status, status_word(status));
        }
        Err(e) => {
            entry.error = Some(e.message);
            entry.settle();
        }
    }
    entry
}

/// What a matrix run is given.
pub struct Request<'a> {
    pub suites: &'a [(SystemName, Suite)],
    pub cases: &'a [Arc<Case>],
    pub filter: Option<&'a str>,
    pub shard: Option<Shard>,
    /// When the run started (UTC, ISO 8601).
    pub date: String,
    pub options: RunOptions,
}

/// Runs the matrix (this shard's pieces, or every suite whole) into its document.
pub async fn run(req: &Request<'_>, note: &(dyn Fn(&str) + Sync)) -> Document {
    let all: Vec<Vec<RoutedTrial>> = (req.suites.iter())
        .map(|(_, s)| {
            let cases: Vec<Arc<Case>> =
                (req.cases.iter()).filter(|c| s.takes(c)).cloned().collect();
            engine::trials(&cases, &s.routes(), req.filter)
        })
        .collect();
    let suites: Vec<(String, Vec<String>)> = (req.suites.iter().zip(&all))
        .map(|((n, _), t)| (n.label(), t.iter().map(|t| t.case.name.clone()).collect()))
        .collect();
    let pieces: Vec<Piece> = match req.shard {
        Some(s) => plan(&suites, s.n).swap_remove(s.k - 1),
        None => (suites.iter())
            .map(|(system, t)| Piece {
                system: system.clone(),
                from: 0,
                to: t.len(),
            })
            .collect(),
    };
    let mut systems = Vec::new();
    for p in &pieces {
        let Some(i) = suites.iter().position(|(s, _)| *s == p.system) else {
            continue;
        };
        note(&format!(
            "{}: trials {}..{} of {}",
            p.system,
            p.from,
            p.to,
            all[i].len()
        ));
        let trials = all[i][p.from..p.to].to_vec();
        systems.push(
            req.suites[i]
                .1
                .run(&p.system, trials, &req.options, note)
                .await,
        );
    }
    Document {
        tooltape: env!("CARGO_PKG_VERSION").to_string(),
        date: req.date.clone(),
        filter: req.filter.map(str::to_string),
        plan: (suites.iter())
            .map(|(system, t)| Planned {
                system: system.clone(),
                trials: t.len(),
            })
            .collect(),
        shard: req.shard.map(|s| ShardInfo {
            k: s.k,
            n: s.n,
            pieces,
        }),
        systems,
    }
}
