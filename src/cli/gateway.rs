//! The `tooltape gateway NAME` command: load the profile, install and start the gateway (or use
//! `--url`), run the trials through it, stop it, print the matrix and the closing totals; and
//! `tooltape gateway compare A B …`: the same trials through several gateways in one run, side
//! by side (conformance, added latency, first tool-call delta, memory).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use clap::{Args, Subcommand};

use super::cases::Corpus;
use super::exit::{CliError, CommandResult};
use super::releases;
use super::suite::{self, Extras, ProfileArgs};
use tooltape::engine::{self, Run, RunOptions, TrialResult};
use tooltape::gateway::{
    COMPARE_BEGIN, COMPARE_END, CompareMeta, GatewayRun, LoadedGateway, compare_markdown,
    compare_row, compare_terminal,
};
use tooltape::runtime;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(mut_args(suite::profile_help("gateways")))]
pub struct GatewayArgs {
    #[command(subcommand)]
    pub command: Option<GatewayCommand>,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// A gateway that is already running: only the profile's routes and headers are used.
    #[arg(long)]
    pub url: Option<String>,
    /// Where the recording upstream listens (`HOST:PORT`, or a port on 127.0.0.1): the address
    /// the gateway's own config points its providers at (`tooltape init gateway` prints the base
    /// URLs). Default: any free port on 127.0.0.1, handed to a gateway this run starts.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub upstream_listen: Option<SocketAddr>,
    /// Write one YAML snapshot per trial (insta's `.snap` format) under
    /// `tests/snapshots/gateway/NAME/`.
    #[arg(long)]
    pub snapshots: bool,
}

#[derive(Subcommand, Debug)]
pub enum GatewayCommand {
    /// Run the same trials through several gateways, one after another in one run, and print
    /// the side-by-side table: conformance, added latency, first tool-call delta, peak memory.
    Compare(CompareArgs),
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more profiles (`gateways/NAME.toml`), in table order.
    #[arg(required = true, num_args = 2..)]
    pub names: Vec<String>,
    /// Only trials whose `case::route::choice::mode` contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// `NAME=URL`: an already running gateway for NAME (its memory is then n/a). Repeatable.
    #[arg(long = "url", value_name = "NAME=URL")]
    pub urls: Vec<String>,
    /// Trials in flight at once, the same for every gateway.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Rewrite the region between `<!-- compare:begin -->` and `<!-- compare:end -->` of this
    /// file with the table (`docs/gateways/README.md`).
    #[arg(long)]
    pub md_out: Option<PathBuf>,
}

/// `--upstream-listen`: `HOST:PORT`, or a bare port on 127.0.0.1.
pub fn listen_addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().map_err(|_| {
        format!("`{s}` is not an address: give HOST:PORT (127.0.0.1:8790, [::1]:8790) or a port")
    })
}

/// Runs `tooltape gateway`: 0 when every result is expected, 1 otherwise, 2 when the gateway
/// could not be set up or used (the reason and its log tail are printed).
pub fn run(corpus: Corpus<'_>, a: &GatewayArgs) -> CommandResult {
    let root = corpus.root;
    if let Some(GatewayCommand::Compare(c)) = &a.command {
        return compare(corpus, c);
    }
    let args = &a.profile;
    if args.list {
        return suite::list(root, "gateways", tooltape::gateway::load_gateway);
    }
    let name = args.named("gateway: name a profile (gateways/NAME.toml) or `compare`")?;
    let profile = Arc::new(tooltape::gateway::load_gateway(root, name).map_err(|e| e.to_string())?);
    let options = RunOptions {
        url: a.url.clone(),
        upstream_listen: a.upstream_listen,
        ..RunOptions::default()
    };
    if args.suite.versions.is_some() {
        let load = || tooltape::gateway::load_gateway(root, name).map_err(|e| e.to_string());
        return releases::run_pinned(corpus, &args.suite, (options, a.url.is_some()), &load);
    }
    let snapshots = |ran: &Run| {
        if !a.snapshots {
            return Ok(());
        }
        let dir = root.join("tests/snapshots/gateway").join(&profile.name);
        write_snapshots(&dir, &ran.results)
            .map_err(|e| format!("cannot write snapshots under {}: {e}", dir.display()))?;
        eprintln!("{} snapshots in {}", ran.results.len(), dir.display());
        Ok(())
    };
    let extras = Extras {
        document: &|p: &LoadedGateway, ran: &Run| {
            let d = &p.profile.description;
            tooltape::report::suite::gateway_markdown(&p.name, d, &ran.results, &ran.causes)
        },
        after: &snapshots,
        json: &|_: &Run| Vec::new(),
    };
    suite::run(corpus, &profile, &args.suite, options, &extras)
}

/// Runs `tooltape gateway compare`: every gateway in turn over its whole suite (the common
/// trials are part of it), then the table; 0 when it was made, 2 on a usage or set-up error.
fn compare(corpus: Corpus<'_>, a: &CompareArgs) -> CommandResult {
    let profiles = compared_profiles(corpus, a)?;
    let urls = compared_urls(a, &profiles)?;
    if let Some(path) = &a.md_out {
        // Refuse before a long run, not after it.
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !(text.contains(COMPARE_BEGIN) && text.contains(COMPARE_END)) {
            return Err(format!(
                "{}: no `{COMPARE_BEGIN}` … `{COMPARE_END}` region to rewrite",
                path.display()
            )
            .into());
        }
    }
    let refs: Vec<&tooltape::gateway::LoadedGateway> = profiles.iter().map(AsRef::as_ref).collect();
    let common = tooltape::gateway::common_routes(&refs);
    if common.is_empty() {
        return Err(CliError::Error(
            "gateway compare: the gateways have no route in common".into(),
        ));
    }
    let (cases, unloadable) = suite::cases(corpus);
    if unloadable > 0 {
        return Err(format!(
            "gateway compare: {unloadable} case file(s) could not be loaded; fix them first (a table needs the whole suite)"
        )
        .into());
    }
    let concurrency = usize::from(a.concurrency);
    let date = tooltape::clock::utc_minute(SystemTime::now());
    let mut runs = Vec::new();
    for profile in &profiles {
        runs.push(compared_run(profile, &cases, a, &urls)?);
    }
    let rows: Vec<_> = runs.iter().map(|r| compare_row(r, &common)).collect();
    out!("{}", compare_terminal(&rows));
    if let Some(path) = &a.md_out {
        let meta = CompareMeta {
            date,
            machine: tooltape::system::machine_note(Path::new("/proc")),
            command: compare_command(a, path),
            concurrency,
            common_routes: common,
            filter: a.filter.clone(),
        };
        tooltape::gateway::rewrite_region(path, &compare_markdown(&rows, &meta))?;
        eprintln!("rewrote the table in {}", path.display());
    }
    Ok(())
}

/// The compared gateways' profiles, in the order named; an error when one is named twice.
fn compared_profiles(
    corpus: Corpus<'_>,
    a: &CompareArgs,
) -> Result<Vec<Arc<LoadedGateway>>, CliError> {
    let mut profiles = Vec::new();
    for name in &a.names {
        let profile = Arc::new(
            tooltape::gateway::load_gateway(corpus.root, name).map_err(|e| e.to_string())?,
        );
        if profiles
            .iter()
            .any(|p: &Arc<tooltape::gateway::LoadedGateway>| p.name == profile.name)
        {
            return Err(format!("gateway compare: `{name}` is named twice").into());
        }
        profiles.push(profile);
    }
    Ok(profiles)
}

/// The `--url NAME=URL` pairs, each naming one of the compared gateways.
fn compared_urls(
    a: &CompareArgs,
    profiles: &[Arc<LoadedGateway>],
) -> Result<Vec<(String, String)>, CliError> {
    let mut urls: Vec<(String, String)> = Vec::new();
    for u in &a.urls {
        let Some((name, url)) = u.split_once('=') else {
            return Err(format!("gateway compare: --url {u}: expected NAME=URL").into());
        };
        if !profiles.iter().any(|p| p.name == name) {
            return Err(format!(
                "gateway compare: --url {u}: `{name}` is not one of the compared gateways"
            )
            .into());
        }
        urls.push((name.to_string(), url.to_string()));
    }
    Ok(urls)
}

/// One gateway's whole suite run (at its `--url` when given); an error when no trial matches,
/// the run fails, or the gateway exits during it.
fn compared_run(
    profile: &Arc<LoadedGateway>,
    cases: &[Arc<tooltape::Case>],
    a: &CompareArgs,
    urls: &[(String, String)],
) -> Result<GatewayRun, CliError> {
    let concurrency = usize::from(a.concurrency);
    let trials = engine::trials(cases, &profile.routes(), a.filter.as_deref());
    if trials.is_empty() {
        return Err(format!("gateway {}: no trial matches", profile.name).into());
    }
    let url = urls
        .iter()
        .find(|(n, _)| *n == profile.name)
        .map(|(_, u)| u.as_str());
    eprintln!("{}: {} trials", profile.name, trials.len());
    let options = RunOptions {
        url: url.map(str::to_string),
        concurrency: Some(concurrency),
        ..RunOptions::default()
    };
    let note = |m: &str| eprintln!("{m}");
    let outcome = runtime().block_on(engine::run(Arc::clone(profile), trials, &options, &note));
    let ran = match outcome {
        Ok(r) if r.exited.is_some() => {
            return Err(CliError::FailedWith(format!(
                "gateway {}: exited during the run; no table",
                profile.name
            )));
        }
        Ok(r) => r,
        Err(e) => return Err(format!("gateway {}: {}", profile.name, e.message).into()),
    };
    eprintln!(
        "{}: {} in {:.1}s",
        profile.name,
        engine::summary(&ran.results),
        ran.wall.as_secs_f64()
    );
    Ok(GatewayRun {
        profile: Arc::clone(profile),
        results: ran.results,
        peak_memory_kib: ran.peak_memory_kib,
        started_in: ran.started_in,
        wall: ran.wall,
    })
}

/// The command line that remakes the table, as its Markdown shows it.
fn compare_command(a: &CompareArgs, path: &Path) -> String {
    let mut command = format!("tooltape gateway compare {}", a.names.join(" "));
    if let Some(f) = &a.filter {
        command.push_str(&format!(" --filter {f}"));
    }
    if a.concurrency != 4 {
        command.push_str(&format!(" --concurrency {}", a.concurrency));
    }
    command.push_str(&format!(" --md-out {}", path.display()));
    command
}

fn write_snapshots(dir: &Path, results: &[TrialResult]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for r in results {
        let name = r.id.snapshot_name();
        let text = format!(
            "---\nsource: src/cli/gateway.rs\nexpression: \"{}\"\n---\n{}",
            r.name,
            tooltape::report::suite::snapshot(r)
        );
        let path = dir.join(format!("{name}.snap"));
        let tmp = dir.join(format!(".{name}.snap.tmp"));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(())
}
