//! The `tooltape client NAME` command: load the client profile, install the pinned library,
//! run every applicable trial through its driver against the recording upstream, print the
//! matrix and the closing totals; and `tooltape client drive`, the reference driver (tooltape's
//! own codecs as the library, or one of its mutants) on stdin and stdout.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Subcommand};

use super::exit;
use super::gateway::GatewayFormat;
use tooltape::client::{LoadedClient, Mutant, Spec};
use tooltape::gateway::{Cell, TrialResult, Upstream};
use tooltape::runtime;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ClientArgs {
    #[command(subcommand)]
    pub command: Option<ClientCommand>,
    /// The profile: `clients/NAME.toml` (or a path to a `.toml` file).
    #[arg(required = true)]
    pub name: Option<String>,
    /// Only trials whose `case::route::choice::mode` contains this.
    pub filter: Option<String>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: GatewayFormat,
    /// Also write the Markdown document here (`docs/clients/NAME.md`).
    #[arg(long)]
    pub md_out: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// The reference driver: reads trials on stdin, answers results on stdout (the driver
    /// protocol, docs/clients/README.md), with tooltape's own codecs as the library.
    Drive {
        /// A deliberate bug: faithful, drop-tools, never-yield, required-to-auto,
        /// merge-parallel, lose-ids.
        #[arg(long, default_value = "faithful")]
        mutant: String,
    },
}

/// The driver's command line and environment, placeholders filled.
fn spec(root: &Path, profile: &LoadedClient, work: &Path) -> Spec {
    let me = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tooltape".into());
    let dir = profile.install_dir().to_string_lossy().into_owned();
    let root = std::path::absolute(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned();
    let values = [
        ("tooltape", me.as_str()),
        ("dir", dir.as_str()),
        ("root", root.as_str()),
    ];
    let fill = |s: &String| tooltape::gateway::fill(s, &values);
    Spec {
        argv: profile.profile.driver.command.iter().map(fill).collect(),
        env: profile
            .profile
            .driver
            .env
            .iter()
            .map(|(k, v)| (k.clone(), fill(v)))
            .collect(),
        cwd: work.to_path_buf(),
        log: work.join("driver.log"),
    }
}

/// Runs `tooltape client`: 0 when every result is expected, 1 otherwise, 2 when the library
/// could not be installed or the profile read.
pub fn run(root: &Path, a: &ClientArgs) -> i32 {
    if let Some(ClientCommand::Drive { mutant }) = &a.command {
        return drive(mutant);
    }
    let Some(name) = &a.name else {
        eprintln!("client: name a profile (clients/NAME.toml) or `drive`");
        return exit::ERROR;
    };
    let profile = match tooltape::client::load_client(root, name) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("{e}");
            return exit::ERROR;
        }
    };
    let (cases, unloadable) = super::gateway::cases(root);
    let trials = tooltape::gateway::trials(&cases, &profile.routes(), a.filter.as_deref());
    if trials.is_empty() {
        eprintln!(
            "no client trial matches{}",
            a.filter
                .as_deref()
                .map(|f| format!(" `{f}`"))
                .unwrap_or_default()
        );
        return exit::FAILED;
    }
    if let Some(install) = &profile.profile.install {
        let dir = profile.install_dir();
        match tooltape::gateway::install_into(&profile.name, &dir, install) {
            Ok(true) => eprintln!("installed {} into {}", profile.name, dir.display()),
            Ok(false) => {}
            Err(e) => {
                eprintln!("client {}: {e}", profile.name);
                return exit::ERROR;
            }
        }
    }
    let work = std::env::temp_dir().join(format!(
        "tooltape-client-{}-{}",
        profile.name,
        std::process::id()
    ));
    if let Err(e) = std::fs::create_dir_all(&work) {
        eprintln!("cannot create {}: {e}", work.display());
        return exit::ERROR;
    }
    let spec = spec(root, &profile, &work);
    let t0 = Instant::now();
    let results = runtime().block_on(async {
        let upstream = Arc::new(
            Upstream::start()
                .await
                .map_err(|e| format!("cannot start the upstream: {e}"))?,
        );
        Ok::<_, String>(
            tooltape::client::run_all(Arc::clone(&profile), &upstream, spec, trials).await,
        )
    });
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("client {}: {e}", profile.name);
            return exit::ERROR;
        }
    };
    print(&profile, &results, a.format);
    // Not one trial answered: the driver or the library could not be used (a broken run, not a
    // finding), and the document on disk is kept.
    let ran: Vec<&Cell> = results
        .iter()
        .map(|r| &r.cell)
        .filter(|c| !matches!(c, Cell::NotApplicable(_) | Cell::Unsupported(_)))
        .collect();
    if !ran.is_empty() && ran.iter().all(|c| matches!(c, Cell::Broken(_))) {
        eprintln!(
            "every trial broke: the driver could not be used; its logs are in {}",
            work.display()
        );
        return exit::ERROR;
    }
    let _ = std::fs::remove_dir_all(&work);
    if let Some(path) = &a.md_out
        && let Err(e) = std::fs::write(path, tooltape::client::markdown(&profile, &results))
    {
        eprintln!("cannot write {}: {e}", path.display());
        return exit::ERROR;
    }
    let unexpected = results.iter().filter(|r| !r.cell.expected()).count();
    eprintln!(
        "{} trials in {:.1}s",
        results.len(),
        t0.elapsed().as_secs_f64()
    );
    if unloadable > 0 {
        eprintln!(
            "{unloadable} case file(s) could not be loaded (above): the suite did not fully run"
        );
        return exit::FAILED;
    }
    i32::from(unexpected > 0)
}

fn print(profile: &LoadedClient, results: &[TrialResult], format: GatewayFormat) {
    match format {
        GatewayFormat::Terminal => out!("{}", tooltape::gateway::terminal(results)),
        GatewayFormat::Md => out!("{}", tooltape::client::markdown(profile, results)),
        GatewayFormat::Html => outln!("{}", tooltape::gateway::html(&profile.name, results)),
        GatewayFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(results).unwrap_or_default()
        ),
        GatewayFormat::Junit => out!(
            "{}",
            tooltape::gateway::junit(
                "client",
                &profile.name,
                &tooltape::clock::utc_iso(std::time::SystemTime::now()),
                results
            )
        ),
    }
    if matches!(format, GatewayFormat::Terminal) {
        outln!("{}", tooltape::gateway::summary(results));
    } else {
        eprintln!("{}", tooltape::gateway::summary(results));
    }
}

/// `tooltape client drive`: serves the protocol until end of input.
fn drive(mutant: &str) -> i32 {
    let Some(m) = Mutant::named(mutant) else {
        eprintln!(
            "unknown mutant `{mutant}`; expected one of {}",
            Mutant::ALL.map(|(n, _)| n).join(", ")
        );
        return exit::ERROR;
    };
    let served = runtime().block_on(tooltape::client::drive(
        m,
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    match served {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("drive: {e}");
            exit::ERROR
        }
    }
}
