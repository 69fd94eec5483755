//! Client-library mode: tooltape's own time per client trial (building the trial, judging what
//! the library sent and what the caller got; the driver's and the upstream's time excluded),
//! measured with the reference driver (`tooltape client drive`) over every case and the five
//! wire formats; and each installed library's suite wall time (skipped with a note when it is
//! not installed: `make client CLIENT=NAME` installs it).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::report::Report;
use tooltape::discover;

/// The libraries whose suites are timed, when installed.
const LIBRARIES: [&str; 8] = [
    "openai",
    "anthropic",
    "google-genai",
    "litellm",
    "langchain",
    "pydantic-ai",
    "any-llm",
    "vercel-ai",
];

pub fn section(root: &Path, report: &mut Report) {
    report.section("client (reference driver; tooltape's own time per trial)");
    let profile = match tooltape::client::load_client(root, "tooltape") {
        Ok(p) => p,
        Err(e) => {
            report.note(&format!("{e}"));
            return;
        }
    };
    let cases = tooltape::engine::cases_of(&discover(root));
    let trials = tooltape::engine::trials(&cases, &profile.routes(), None);
    let work = std::env::temp_dir().join(format!("tooltape-bench-client-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&work);
    let spec = tooltape::client::Spec {
        argv: [env!("CARGO_BIN_EXE_tooltape"), "client", "drive"]
            .map(String::from)
            .to_vec(),
        env: Vec::new(),
        cwd: work.clone(),
        log: work.join("driver.log"),
    };
    let t0 = Instant::now();
    let results = tooltape::runtime().block_on(async {
        let upstream = Arc::new(
            tooltape::engine::Upstream::start()
                .await
                .expect("loopback upstream"),
        );
        tooltape::engine::run_on(
            Arc::new(tooltape::client::Library::new(profile, root).with_driver(spec)),
            trials,
            &upstream,
            &tooltape::engine::RunOptions::default(),
            &|_| {},
        )
        .await
        .map(|r| r.results)
        .unwrap_or_default()
    });
    let wall = t0.elapsed();
    let _ = std::fs::remove_dir_all(&work);
    let n = results.len().max(1);
    let own: f64 = results
        .iter()
        .map(|r| r.own_time.as_secs_f64())
        .sum::<f64>()
        / n as f64;
    report.figure("trials", results.len() as f64, "", None);
    report.figure(
        "own time per trial",
        own * 1e3,
        "ms",
        Some(("< 1 ms", own < 0.001)),
    );
    report.figure(
        "wall time, all trials (4 drivers)",
        wall.as_secs_f64(),
        "s",
        None,
    );
    for name in LIBRARIES {
        suite(root, name, report);
    }
}

/// One library's whole suite through the built binary, when the library is installed.
fn suite(root: &Path, name: &str, report: &mut Report) {
    let installed = match tooltape::client::load_client(root, name) {
        Ok(p) => p.install_dir().exists(),
        Err(e) => {
            report.note(&format!("{name} suite: {e}"));
            return;
        }
    };
    if !installed {
        report.note(&format!(
            "{name} suite: skipped, not installed (make client CLIENT={name} installs it)"
        ));
        return;
    }
    let t0 = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tooltape"))
        .args(["client", name])
        .current_dir(root)
        .output();
    match out {
        Ok(o) if o.status.success() => report.figure(
            &format!("{name} suite wall time"),
            t0.elapsed().as_secs_f64(),
            "s",
            None,
        ),
        Ok(o) => {
            let all = String::from_utf8_lossy(&o.stdout).into_owned();
            let why = all
                .lines()
                .find(|l| l.contains(": FAIL: ") || l.contains(": BROKEN: "))
                .unwrap_or("");
            report.note(&format!("{name} suite: exited {}: {why}", o.status));
        }
        Err(e) => report.note(&format!("{name} suite: cannot run tooltape: {e}")),
    }
}
