//! The `tooltape gateway NAME` command: load the profile, install and start the gateway (or use
//! `--url`), run the trials through it, stop it, print the matrix and the closing totals; and
//! `tooltape gateway compare A B …`: the same trials through several gateways in one run, side
//! by side (conformance, added latency, first tool-call delta, memory).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use clap::{Args, Subcommand, ValueEnum};

use super::cases::discover;
use super::exit;
use tooltape::{
    Case, gateway::COMPARE_BEGIN, gateway::COMPARE_END, gateway::Cell, gateway::CompareMeta,
    gateway::GatewayRun, gateway::GatewayTrial, gateway::TrialResult, gateway::Upstream,
    gateway::compare_markdown, gateway::compare_row, gateway::compare_terminal,
    gateway::machine_note, runtime,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GatewayFormat {
    Terminal,
    Md,
    Html,
    Json,
    /// JUnit XML: one test case per trial; known failures skipped with their reason.
    Junit,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct GatewayArgs {
    #[command(subcommand)]
    pub command: Option<GatewayCommand>,
    /// The profile: `gateways/NAME.toml` (or a path to a `.toml` file).
    #[arg(required = true)]
    pub name: Option<String>,
    /// Only trials whose `case::route::choice::mode` contains this.
    pub filter: Option<String>,
    /// A gateway that is already running: only the profile's routes and headers are used.
    #[arg(long)]
    pub url: Option<String>,
    /// Where the recording upstream listens (`HOST:PORT`, or a port on 127.0.0.1): the address
    /// the gateway's own config points its providers at (`tooltape init gateway` prints the base
    /// URLs). Default: any free port on 127.0.0.1, handed to a gateway this run starts.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub upstream_listen: Option<SocketAddr>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: GatewayFormat,
    /// Also write the Markdown matrix here (`docs/gateways/NAME.md`).
    #[arg(long)]
    pub md_out: Option<PathBuf>,
    /// Write one YAML snapshot per trial (insta's `.snap` format) under
    /// `tests/snapshots/gateway/NAME/`.
    #[arg(long)]
    pub snapshots: bool,
    /// Print the root causes (failures grouped by side, kind and normalized finding, each with
    /// its routes, trials and severity) instead of the matrix.
    #[arg(long, conflicts_with = "report_bug")]
    pub findings: bool,
    /// Print root cause ID (from `--findings`) as a ready-to-file Markdown issue: its reproducer
    /// as curl and JSON, what went upstream, what came back, the expected behaviour.
    #[arg(long, value_name = "ID")]
    pub report_bug: Option<String>,
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

/// What running one gateway's trials produced.
struct Ran {
    results: Vec<TrialResult>,
    tail: Option<String>,
    /// The gateway's exit status when it died during the trials (a gateway this run started).
    exited: Option<String>,
    peak_memory_kib: Option<u64>,
    started_in: Option<Duration>,
    wall: Duration,
}

/// The discovered cases (each once), and how many case files could not be loaded (reported
/// here; a suite with any is not a complete run, so the command cannot succeed).
pub(super) fn cases(root: &Path) -> (Vec<Arc<Case>>, usize) {
    let discovery = discover(root);
    for (name, e) in &discovery.broken {
        eprintln!("case {name}: {e}");
    }
    if discovery.incomplete {
        eprintln!("cases/ could not be read in full: the trials that exist are unknown");
    }
    let unloadable = discovery.broken.len() + usize::from(discovery.incomplete);
    (tooltape::gateway::cases_of(&discovery), unloadable)
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

/// Why the recording upstream could not start, and what to do.
fn upstream_error(addr: Option<SocketAddr>, e: &std::io::Error) -> String {
    match addr {
        Some(addr) => format!(
            "cannot listen on {addr} for the recording upstream: {e} (stop what holds the port, or give the gateway's config another address and pass it to --upstream-listen)"
        ),
        None => format!("cannot start the upstream: {e}"),
    }
}

/// Installs and starts the gateway (unless `url` names a running one), runs the trials through
/// it while sampling its process group's memory, and stops it.
async fn run_through(
    profile: &Arc<tooltape::gateway::LoadedProfile>,
    upstream: &Arc<Upstream>,
    url: Option<&str>,
    trials: Vec<GatewayTrial>,
    concurrency: usize,
) -> Result<Ran, String> {
    let mut running = None;
    let base_path = profile.profile.base_path.trim_end_matches('/');
    let url = match url {
        Some(u) => format!("{}{base_path}", u.trim_end_matches('/')),
        None => {
            if tooltape::gateway::ensure_installed(profile)? {
                eprintln!(
                    "installed {} into {}",
                    profile.name,
                    profile.install_dir().display()
                );
            }
            let work = std::env::temp_dir().join(format!(
                "tooltape-gateway-{}-{}",
                profile.name,
                std::process::id()
            ));
            std::fs::create_dir_all(&work)
                .map_err(|e| format!("cannot create {}: {e}", work.display()))?;
            let r = tooltape::gateway::start(profile, &upstream.base_url(), &work).await?;
            eprintln!(
                "{} ready at {} in {:.1}s (log {})",
                profile.name,
                r.base_url,
                r.started_in.as_secs_f64(),
                r.log.display()
            );
            let url = format!("{}{base_path}", r.base_url);
            running = Some(r);
            url
        }
    };
    let sampler = running
        .as_ref()
        .map(|r| tooltape::gateway::PeakSampler::start(r.pgid(), Duration::from_millis(200)));
    let t0 = Instant::now();
    let results =
        tooltape::gateway::run_all(Arc::clone(profile), upstream, &url, trials, concurrency).await;
    let wall = t0.elapsed();
    let peak_memory_kib = sampler.and_then(tooltape::gateway::PeakSampler::finish);
    let tail = running.as_ref().map(|r| r.log_tail(20));
    let exited = running.as_mut().and_then(|r| r.exited());
    let started_in = running.as_ref().map(|r| r.started_in);
    if let Some(mut r) = running {
        r.stop();
    }
    if let (Some(status), Some(t)) = (&exited, &tail) {
        eprintln!(
            "{} exited during the run ({status}): the trials after that could not run. Last lines of its log:\n{t}",
            profile.name
        );
    }
    Ok(Ran {
        results,
        tail,
        exited,
        peak_memory_kib,
        started_in,
        wall,
    })
}

/// Runs `tooltape gateway`: 0 when every result is expected, 1 otherwise, 2 when the gateway
/// could not be set up (the reason and its log tail are printed).
pub fn run(root: &Path, a: &GatewayArgs) -> i32 {
    if let Some(GatewayCommand::Compare(c)) = &a.command {
        return compare(root, c);
    }
    let Some(name) = &a.name else {
        eprintln!("gateway: name a profile (gateways/NAME.toml) or `compare`");
        return exit::ERROR;
    };
    let profile = match tooltape::gateway::load_profile(root, name) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("{e}");
            return exit::ERROR;
        }
    };
    let (cases, unloadable) = cases(root);
    let trials = tooltape::gateway::trials(&cases, &profile.routes(), a.filter.as_deref());
    if trials.is_empty() {
        eprintln!(
            "no gateway trial matches{}",
            a.filter
                .as_deref()
                .map(|f| format!(" `{f}`"))
                .unwrap_or_default()
        );
        return exit::FAILED;
    }
    let t0 = Instant::now();
    let rt = runtime();
    let outcome = rt.block_on(async {
        let upstream = Arc::new(
            match a.upstream_listen {
                None => Upstream::start().await,
                Some(addr) => Upstream::start_on(addr).await,
            }
            .map_err(|e| upstream_error(a.upstream_listen, &e))?,
        );
        if a.upstream_listen.is_some() {
            eprintln!("recording upstream listening on {}", upstream.base_url());
        }
        let concurrency = profile.profile.concurrency;
        run_through(&profile, &upstream, a.url.as_deref(), trials, concurrency).await
    });
    let Ran {
        results,
        tail,
        exited,
        peak_memory_kib,
        ..
    } = match outcome {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gateway {}: {e}", profile.name);
            return exit::ERROR;
        }
    };
    let causes = tooltape::gateway::causes(&profile, &results);
    if let Some(id) = &a.report_bug {
        let Some(c) = causes.iter().find(|c| &c.id == id) else {
            eprintln!(
                "gateway {}: no root cause `{id}` in this run; `tooltape gateway {} --findings` lists them",
                profile.name, profile.name
            );
            return exit::ERROR;
        };
        out!(
            "{}",
            tooltape::gateway::report_bug(&profile.name, &profile.profile.description, c)
        );
        return exit::OK;
    }
    if a.findings {
        out!(
            "{}",
            tooltape::gateway::causes_terminal(&causes, results.len())
        );
    } else {
        print_results(&profile, &results, &causes, a.format);
    }
    if exited.is_some() {
        if let Some(path) = &a.md_out {
            eprintln!(
                "{} not rewritten: the gateway exited during the run",
                path.display()
            );
        }
        return exit::FAILED;
    }
    if let Some(path) = &a.md_out {
        let md = document(&profile, &results, &causes);
        if let Err(e) = std::fs::write(path, md) {
            eprintln!("cannot write {}: {e}", path.display());
            return exit::ERROR;
        }
    }
    if a.snapshots {
        let dir = root.join("tests/snapshots/gateway").join(&profile.name);
        if let Err(e) = write_snapshots(&dir, &results) {
            eprintln!("cannot write snapshots under {}: {e}", dir.display());
            return exit::ERROR;
        }
        eprintln!("{} snapshots in {}", results.len(), dir.display());
    }
    let stale = tooltape::gateway::stale_causes(&profile, &results);
    for m in &stale {
        eprintln!("{m}");
    }
    let unexpected = results.iter().filter(|r| !r.cell.expected()).count() + stale.len();
    // Not one trial the client could send got an answer.
    let all_broken = results.iter().any(|r| matches!(r.cell, Cell::Broken(_)))
        && (results.iter()).all(|r| matches!(r.cell, Cell::Broken(_) | Cell::NotApplicable(_)));
    if all_broken && let Some(t) = &tail {
        eprintln!("every trial broke; last lines of the gateway's log:\n{t}");
    }
    eprintln!(
        "{} trials in {:.1}s{}",
        results.len(),
        t0.elapsed().as_secs_f64(),
        peak_memory_kib
            .map(|k| format!(", gateway peak memory {:.0} MiB", k as f64 / 1024.0))
            .unwrap_or_default()
    );
    if all_broken {
        // Not one answer: the gateway could not be used (down, wrong URL or key): a broken
        // run, not a finding.
        eprintln!(
            "every trial broke: the gateway could not be used (is it running at the URL, with the profile's headers?)"
        );
        return exit::ERROR;
    }
    if unloadable > 0 {
        eprintln!(
            "{unloadable} case file(s) could not be loaded (above): the suite did not fully run"
        );
        return exit::FAILED;
    }
    i32::from(unexpected > 0)
}

/// Runs `tooltape gateway compare`: every gateway in turn over its whole suite (the common
/// trials are part of it), then the table; 0 when it was made, 2 on a usage or set-up error.
fn compare(root: &Path, a: &CompareArgs) -> i32 {
    let mut profiles = Vec::new();
    for name in &a.names {
        let profile = match tooltape::gateway::load_profile(root, name) {
            Ok(p) => Arc::new(p),
            Err(e) => {
                eprintln!("{e}");
                return exit::ERROR;
            }
        };
        if profiles
            .iter()
            .any(|p: &Arc<tooltape::gateway::LoadedProfile>| p.name == profile.name)
        {
            eprintln!("gateway compare: `{name}` is named twice");
            return exit::ERROR;
        }
        profiles.push(profile);
    }
    let mut urls: Vec<(String, String)> = Vec::new();
    for u in &a.urls {
        let Some((name, url)) = u.split_once('=') else {
            eprintln!("gateway compare: --url {u}: expected NAME=URL");
            return exit::ERROR;
        };
        if !profiles.iter().any(|p| p.name == name) {
            eprintln!("gateway compare: --url {u}: `{name}` is not one of the compared gateways");
            return exit::ERROR;
        }
        urls.push((name.to_string(), url.to_string()));
    }
    if let Some(path) = &a.md_out {
        // Refuse before a long run, not after it.
        match std::fs::read_to_string(path) {
            Ok(text) if text.contains(COMPARE_BEGIN) && text.contains(COMPARE_END) => {}
            Ok(_) => {
                eprintln!(
                    "{}: no `{COMPARE_BEGIN}` … `{COMPARE_END}` region to rewrite",
                    path.display()
                );
                return exit::ERROR;
            }
            Err(e) => {
                eprintln!("cannot read {}: {e}", path.display());
                return exit::ERROR;
            }
        }
    }
    let refs: Vec<&tooltape::gateway::LoadedProfile> = profiles.iter().map(AsRef::as_ref).collect();
    let common = tooltape::gateway::common_routes(&refs);
    if common.is_empty() {
        eprintln!("gateway compare: the gateways have no route in common");
        return exit::ERROR;
    }
    let (cases, unloadable) = cases(root);
    if unloadable > 0 {
        eprintln!(
            "gateway compare: {unloadable} case file(s) could not be loaded; fix them first (a table needs the whole suite)"
        );
        return exit::ERROR;
    }
    let concurrency = usize::from(a.concurrency);
    let date = tooltape::clock::utc_minute(SystemTime::now());
    let mut runs = Vec::new();
    for profile in &profiles {
        let trials = tooltape::gateway::trials(&cases, &profile.routes(), a.filter.as_deref());
        if trials.is_empty() {
            eprintln!("gateway {}: no trial matches", profile.name);
            return exit::ERROR;
        }
        let url = urls
            .iter()
            .find(|(n, _)| *n == profile.name)
            .map(|(_, u)| u.as_str());
        eprintln!("{}: {} trials", profile.name, trials.len());
        let outcome = runtime().block_on(async {
            let upstream = Arc::new(
                Upstream::start()
                    .await
                    .map_err(|e| format!("cannot start the upstream: {e}"))?,
            );
            run_through(profile, &upstream, url, trials, concurrency).await
        });
        let ran = match outcome {
            Ok(r) if r.exited.is_some() => {
                eprintln!("gateway {}: exited during the run; no table", profile.name);
                return exit::FAILED;
            }
            Ok(r) => r,
            Err(e) => {
                eprintln!("gateway {}: {e}", profile.name);
                return exit::ERROR;
            }
        };
        eprintln!(
            "{}: {} in {:.1}s",
            profile.name,
            tooltape::gateway::summary(&ran.results),
            ran.wall.as_secs_f64()
        );
        runs.push(GatewayRun {
            profile: Arc::clone(profile),
            results: ran.results,
            peak_memory_kib: ran.peak_memory_kib,
            started_in: ran.started_in,
            wall: ran.wall,
        });
    }
    let rows: Vec<_> = runs.iter().map(|r| compare_row(r, &common)).collect();
    out!("{}", compare_terminal(&rows));
    if let Some(path) = &a.md_out {
        let mut command = format!("tooltape gateway compare {}", a.names.join(" "));
        if let Some(f) = &a.filter {
            command.push_str(&format!(" --filter {f}"));
        }
        if a.concurrency != 4 {
            command.push_str(&format!(" --concurrency {}", a.concurrency));
        }
        command.push_str(&format!(" --md-out {}", path.display()));
        let meta = CompareMeta {
            date,
            machine: machine_note(Path::new("/proc")),
            command,
            concurrency,
            common_routes: common,
            filter: a.filter.clone(),
        };
        if let Err(e) = tooltape::gateway::rewrite_region(path, &compare_markdown(&rows, &meta)) {
            eprintln!("{e}");
            return exit::ERROR;
        }
        eprintln!("rewrote the table in {}", path.display());
    }
    0
}

fn write_snapshots(dir: &Path, results: &[TrialResult]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for r in results {
        let name = tooltape::gateway::snapshot_name(r);
        let text = format!(
            "---\nsource: src/cli/gateway.rs\nexpression: \"{}\"\n---\n{}",
            r.name,
            tooltape::gateway::snapshot(r)
        );
        let path = dir.join(format!("{name}.snap"));
        let tmp = dir.join(format!(".{name}.snap.tmp"));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(())
}

/// The generated document: the root causes lead, the matrix follows.
fn document(
    profile: &tooltape::gateway::LoadedProfile,
    results: &[TrialResult],
    causes: &[tooltape::gateway::RootCause],
) -> String {
    let md = tooltape::gateway::markdown(&profile.name, &profile.profile.description, results);
    let leading = tooltape::gateway::causes_markdown(causes, results.len());
    // After the title, description, provenance and summary paragraphs: before the matrix.
    match md.find("\n| trial |") {
        Some(i) => format!("{}\n{leading}## Trial matrix\n{}", &md[..i], &md[i..]),
        None => format!("{md}\n{leading}"),
    }
}

fn print_results(
    profile: &tooltape::gateway::LoadedProfile,
    results: &[TrialResult],
    causes: &[tooltape::gateway::RootCause],
    format: GatewayFormat,
) {
    match format {
        GatewayFormat::Terminal => {
            out!("{}", tooltape::gateway::terminal(results));
        }
        GatewayFormat::Md => out!("{}", document(profile, results, causes)),
        GatewayFormat::Html => outln!("{}", tooltape::gateway::html(&profile.name, results)),
        GatewayFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "gateway": profile.name,
                "summary": tooltape::gateway::summary(results),
                "causes": causes,
                "trials": results,
            }))
            .unwrap_or_default()
        ),
        GatewayFormat::Junit => out!(
            "{}",
            tooltape::gateway::junit(
                "gateway",
                &profile.name,
                &tooltape::clock::utc_iso(SystemTime::now()),
                results
            )
        ),
    }
    // Machine formats are one document on stdout; the summary line is the terminal's or stderr's.
    if matches!(format, GatewayFormat::Terminal) {
        outln!("{}", tooltape::gateway::summary(results));
    } else {
        eprintln!("{}", tooltape::gateway::summary(results));
    }
}
