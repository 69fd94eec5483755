//! The `tooltape server NAME` command: load the server profile, install the pinned server and
//! its model package (or use `--url`), start it on loopback, run every case it can play against
//! it, stop it, and print the matrix, the scores and the closing totals.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use super::cases::Corpus;
use super::exit::CommandResult;
use super::releases;
use super::suite::{self, Extras, ProfileArgs};
use tooltape::engine::{Run, RunOptions};
use tooltape::report::suite::{ServerRun, server_markdown};
use tooltape::runtime;
use tooltape::server::{LoadedServer, Scores, scores, scripted};

#[derive(Args, Debug)]
#[command(mut_args(suite::profile_help("servers")))]
pub struct ServerArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// A server that is already running (its model loaded): only the profile's routes, headers
    /// and settings are used.
    #[arg(long)]
    pub url: Option<String>,
    /// Instead of the case suite, every tool of the corpus (the cases' tools, the MCP servers'
    /// among them) forced one at a time on every route, buffered and streamed: the scores by
    /// schema feature say which schemas the server's grammar holds.
    #[arg(long, conflicts_with = "versions")]
    pub schemas: bool,
    /// Keep every trial's exchanges with the server as a cassette under DIR
    /// (`ROUTE/CASE/CHOICE-MODE.json`), its provenance naming the server, the model file (its
    /// SHA-256 and package) and the route's settings.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["versions", "replay"])]
    pub record: Option<PathBuf>,
    /// Run the suite against what the server answered when DIR was recorded, without the
    /// server: each request is checked against the recorded one, and a recorded interaction no
    /// request asks for fails the run.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["versions", "url"])]
    pub replay: Option<PathBuf>,
}

/// Runs `tooltape server`: 0 when every result is expected, 1 otherwise, 2 when the server could
/// not be installed, started or used (the reason and its log tail are printed).
pub fn run(corpus: Corpus<'_>, a: &ServerArgs) -> CommandResult {
    let root = corpus.root;
    let args = &a.profile;
    if args.list {
        return suite::list(root, "servers", tooltape::server::load_server);
    }
    let name = args.named("server: name a profile (servers/NAME.toml)")?;
    let mut loaded = tooltape::server::load_server(root, name).map_err(|e| e.to_string())?;
    loaded.profile.tape = tape(&loaded, a)?.map(Arc::new);
    let tape = loaded.profile.tape.clone();
    let profile = Arc::new(loaded);
    let options = RunOptions {
        url: a.url.clone(),
        ..RunOptions::default()
    };
    if args.suite.versions.is_some() {
        let load = || tooltape::server::load_server(root, name).map_err(|e| e.to_string());
        return releases::run_pinned(corpus, &args.suite, (options, a.url.is_some()), &load);
    }
    let sweep;
    let mut suite_args = args.suite.clone();
    let corpus = if a.schemas {
        sweep = tooltape::server::Sweep::write(&tooltape::engine::cases_of(&corpus.discover()))?;
        suite_args.filter = Some(match &args.suite.filter {
            Some(f) => format!("{}{f}", tooltape::server::SWEEP_PREFIX),
            None => tooltape::server::SWEEP_PREFIX.to_string(),
        });
        eprintln!("{} tools, each forced in a case of its own", sweep.tools);
        Corpus {
            root,
            cases: Some(sweep.dir()),
        }
    } else {
        corpus
    };
    let cases = tooltape::engine::cases_of(&corpus.discover());
    let scripted: Vec<(String, &'static str)> = (cases.iter())
        .filter_map(|c| Some((c.name.clone(), scripted(c)?)))
        .collect();
    let score = |ran: &Run| -> Scores { scores(&ran.results, &cases) };
    let extras = Extras {
        document: &|p: &LoadedServer, ran: &Run| {
            let scores = score(ran);
            let run = ServerRun {
                results: &ran.results,
                causes: &ran.causes,
                scores: &scores,
                scripted: &scripted,
            };
            server_markdown(p, &run)
        },
        after: &|ran: &Run| {
            let Some(tape) = &tape else { return Ok(()) };
            let keys: Vec<String> = ran.results.iter().map(|r| r.id.key()).collect();
            let complete = args.suite.filter.is_none();
            let secrets = tooltape::redact::Secrets::new(profile.profile.key.clone());
            let done = runtime().block_on(tape.finish(&keys, complete, &secrets));
            done.map(|summary| eprintln!("{summary}"))
                .map_err(|problems| problems.join("\n"))
        },
        json: &|ran: &Run| {
            vec![
                (
                    "scores",
                    serde_json::to_value(score(ran)).unwrap_or_default(),
                ),
                (
                    "cases_not_run",
                    serde_json::json!(
                        scripted
                            .iter()
                            .map(|(c, why)| serde_json::json!({"case": c, "why": why}))
                            .collect::<Vec<_>>()
                    ),
                ),
            ]
        },
    };
    suite::run(corpus, &profile, &suite_args, options, &extras)
}

/// The tape `--record DIR` or `--replay DIR` asks for: what every recorded cassette says of
/// the server, or the cassettes a replay answers from.
fn tape(p: &LoadedServer, a: &ServerArgs) -> Result<Option<tooltape::record::Tape>, String> {
    if let Some(dir) = &a.replay {
        return tooltape::record::Tape::replaying(dir, &p.name).map(Some);
    }
    let Some(dir) = &a.record else {
        return Ok(None);
    };
    let version = p.profile.version.clone();
    let source = match &a.url {
        Some(url) => format!("server {} at {url}", p.name),
        None => format!("server {} {}", p.name, version.as_deref().unwrap_or("")),
    };
    let routes = (p.routes().iter())
        .map(|r| {
            let mut settings = serde_json::json!({"body": p.body_for(&r.name())});
            if let Some(cap) = p.profile.max_output_tokens {
                settings["max_output_tokens"] = cap.into();
            }
            (r.name(), (r.model.clone(), settings))
        })
        .collect();
    let server = tooltape::cassette::ServerProvenance {
        name: p.name.clone(),
        version,
        route: String::new(),
        ..Default::default()
    };
    let recorded = tooltape::record::Recorded {
        source: source.trim_end().to_string(),
        server,
        routes,
    };
    Ok(Some(tooltape::record::Tape::recording(dir, recorded)))
}
