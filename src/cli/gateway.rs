//! The `tooltape gateway NAME` command: load the profile, install and start the gateway (or use
//! `--url`), run the trials through it, stop it, print the matrix and the closing totals.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};

use tooltape::{
    Case, GatewayCell as Cell, GatewayProfile, GatewayRoute, GatewayTrialResult as TrialResult,
    RecordingUpstream as Upstream, discover, ensure_gateway_installed, gateway_html,
    gateway_markdown, gateway_snapshot, gateway_snapshot_name, gateway_summary, gateway_terminal,
    gateway_trials, load_gateway_profile, run_gateway_trials, runtime, start_gateway,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GatewayFormat {
    Terminal,
    Md,
    Html,
    Json,
}

#[derive(Args, Debug)]
pub struct GatewayArgs {
    /// The profile: `gateways/NAME.toml` (or a path to a `.toml` file).
    pub name: String,
    /// Only trials whose `case::route::choice::mode` contains this.
    pub filter: Option<String>,
    /// A gateway that is already running: only the profile's routes and headers are used.
    #[arg(long)]
    pub url: Option<String>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: GatewayFormat,
    /// Also write the Markdown matrix here (`docs/gateways/NAME.md`).
    #[arg(long)]
    pub md_out: Option<PathBuf>,
    /// Write one YAML snapshot per trial (insta's `.snap` format) under
    /// `tests/snapshots/gateway/NAME/`.
    #[arg(long)]
    pub snapshots: bool,
}

/// Runs `tooltape gateway`: 0 when every result is expected, 1 otherwise, 2 when the gateway
/// could not be set up (the reason and its log tail are printed).
pub fn run(root: &Path, a: &GatewayArgs) -> i32 {
    let profile = match load_gateway_profile(root, &a.name) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let discovery = discover(root);
    for (name, e) in &discovery.broken {
        eprintln!("case {name}: {e}");
    }
    let mut cases: Vec<Arc<Case>> = Vec::new();
    for t in &discovery.trials {
        if !cases.iter().any(|c| Arc::ptr_eq(c, &t.case)) {
            cases.push(Arc::clone(&t.case));
        }
    }
    let routes: Vec<GatewayRoute> = profile
        .profile
        .routes
        .iter()
        .map(|r| r.get_ref().clone())
        .collect();
    let trials = gateway_trials(&cases, &routes, a.filter.as_deref());
    if trials.is_empty() {
        eprintln!(
            "no gateway trial matches{}",
            a.filter
                .as_deref()
                .map(|f| format!(" `{f}`"))
                .unwrap_or_default()
        );
        return 1;
    }
    let t0 = Instant::now();
    let rt = runtime();
    let outcome = rt.block_on(async {
        let upstream = Arc::new(
            Upstream::start()
                .await
                .map_err(|e| format!("cannot start the upstream: {e}"))?,
        );
        let mut running = None;
        let url = match &a.url {
            Some(u) => u.trim_end_matches('/').to_string(),
            None => {
                if ensure_gateway_installed(&profile)? {
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
                let r = start_gateway(&profile, &upstream.base_url(), &work).await?;
                eprintln!(
                    "{} ready at {} in {:.1}s (log {})",
                    profile.name,
                    r.base_url,
                    r.started_in.as_secs_f64(),
                    r.log.display()
                );
                let url = r.base_url.clone();
                running = Some(r);
                url
            }
        };
        let concurrency = profile.profile.concurrency;
        let results =
            run_gateway_trials(Arc::clone(&profile), &upstream, &url, trials, concurrency).await;
        let tail = running.as_ref().map(|r| r.log_tail(20));
        if let Some(mut r) = running {
            r.stop();
        }
        Ok::<_, String>((results, tail))
    });
    let (results, tail) = match outcome {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gateway {}: {e}", profile.name);
            return 2;
        }
    };
    print_results(&profile, &results, a.format);
    if let Some(path) = &a.md_out {
        let md = gateway_markdown(&profile.name, &profile.profile.description, &results);
        if let Err(e) = std::fs::write(path, md) {
            eprintln!("cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if a.snapshots {
        let dir = root.join("tests/snapshots/gateway").join(&profile.name);
        if let Err(e) = write_snapshots(&dir, &results) {
            eprintln!("cannot write snapshots under {}: {e}", dir.display());
            return 2;
        }
        eprintln!("{} snapshots in {}", results.len(), dir.display());
    }
    let unexpected = results.iter().filter(|r| !r.cell.expected()).count();
    if unexpected > 0
        && results.iter().all(|r| matches!(r.cell, Cell::Broken(_)))
        && let Some(t) = tail
    {
        eprintln!("every trial broke; last lines of the gateway's log:\n{t}");
    }
    eprintln!(
        "{} trials in {:.1}s",
        results.len(),
        t0.elapsed().as_secs_f64()
    );
    i32::from(unexpected > 0)
}

fn write_snapshots(dir: &Path, results: &[TrialResult]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for r in results {
        let name = gateway_snapshot_name(r);
        let text = format!(
            "---\nsource: src/cli/gateway.rs\nexpression: \"{}\"\n---\n{}",
            r.name,
            gateway_snapshot(r)
        );
        let path = dir.join(format!("{name}.snap"));
        let tmp = dir.join(format!(".{name}.snap.tmp"));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(())
}

fn print_results(profile: &GatewayProfile, results: &[TrialResult], format: GatewayFormat) {
    match format {
        GatewayFormat::Terminal => {
            out!("{}", gateway_terminal(results));
        }
        GatewayFormat::Md => out!(
            "{}",
            gateway_markdown(&profile.name, &profile.profile.description, results)
        ),
        GatewayFormat::Html => outln!("{}", gateway_html(&profile.name, results)),
        GatewayFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(results).unwrap_or_default()
        ),
    }
    outln!("{}", gateway_summary(results));
}
