//! Gateway mode: tooltape's own time per gateway trial (encode, decode the gateway's request and
//! answer, the checks), the gateway's time excluded — the "gateway" is the recording upstream
//! itself (an identity proxy that costs nothing), over the four same-format routes and every
//! case; and the LiteLLM suite's wall time when LiteLLM is installed (skipped with a note when
//! not: `make gateway GATEWAY=litellm` installs it).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::report::Report;
use tooltape::discover;

/// The same-format routes (shared with the mutant suite), with the recording upstream itself as
/// the (identity) gateway.
const PROFILE: &str = "tests/same-format-gateway.toml";

pub fn section(root: &Path, report: &mut Report) {
    report.section("gateway (identity gateway; tooltape's own time per trial)");
    let path = root.join(PROFILE);
    let profile = match tooltape::gateway::load_gateway(root, path.to_str().unwrap_or_default()) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            report.note(&format!("{e}"));
            return;
        }
    };
    let cases = tooltape::engine::cases_of(&discover(root));
    let routes = profile.routes();
    let trials = tooltape::engine::trials(&cases, &routes, None);
    let rt = tooltape::runtime();
    let t0 = Instant::now();
    let results = rt.block_on(async {
        let upstream = Arc::new(
            tooltape::engine::Upstream::start()
                .await
                .expect("loopback upstream"),
        );
        let url = upstream.base_url();
        tooltape::engine::run_on(
            Arc::clone(&profile),
            trials,
            &upstream,
            &tooltape::engine::RunOptions {
                url: Some(url),
                concurrency: Some(4),
                ..Default::default()
            },
            &|_| {},
        )
        .await
        .unwrap_or_else(|e| panic!("{}", e.message))
        .results
    });
    let wall = t0.elapsed();
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
        "wall time, all trials (concurrency 4)",
        wall.as_secs_f64(),
        "s",
        None,
    );
    litellm(root, report);
}

/// The whole LiteLLM suite through the built binary, when LiteLLM is installed.
fn litellm(root: &Path, report: &mut Report) {
    let installed = match tooltape::gateway::load_gateway(root, "litellm") {
        Ok(p) => p.install_dir().exists(),
        Err(e) => {
            report.note(&format!("LiteLLM suite: {e}"));
            return;
        }
    };
    if !installed {
        report.note("LiteLLM suite: skipped, LiteLLM is not installed (make gateway GATEWAY=litellm installs it)");
        return;
    }
    let t0 = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tooltape"))
        .args(["gateway", "litellm"])
        .current_dir(root)
        .output();
    match out {
        Ok(o) if o.status.success() => {
            report.figure(
                "LiteLLM suite wall time",
                t0.elapsed().as_secs_f64(),
                "s",
                None,
            );
        }
        Ok(o) => {
            // The first unexpected trial says what went wrong (LiteLLM has a rare race).
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let why = all
                .lines()
                .find(|l| l.contains(": FAIL: ") || l.contains(": BROKEN: "))
                .or_else(|| all.lines().last())
                .unwrap_or("");
            report.note(&format!("LiteLLM suite: exited {}: {why}", o.status));
        }
        Err(e) => report.note(&format!("LiteLLM suite: cannot run tooltape: {e}")),
    }
}
