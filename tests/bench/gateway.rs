//! Gateway mode: tooltape's own time per gateway trial (encode, decode the gateway's request and
//! answer, the checks), the gateway's time excluded — the "gateway" is the recording upstream
//! itself (an identity proxy that costs nothing), over the four same-format routes and every
//! case; and the LiteLLM suite's wall time when LiteLLM is installed (skipped with a note when
//! not: `make gateway GATEWAY=litellm` installs it).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::report::Report;
use tooltape::{RecordingUpstream, discover, gateway_cases, gateway_trials, load_gateway_profile};

/// The same-format routes (shared with the mutant suite), with the recording upstream itself as
/// the (identity) gateway.
const PROFILE: &str = "tests/same-format-gateway.toml";

pub fn section(root: &Path, report: &mut Report) {
    report.section("gateway (identity gateway; tooltape's own time per trial)");
    let path = root.join(PROFILE);
    let profile = match load_gateway_profile(root, path.to_str().unwrap_or_default()) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            report.note(&format!("{e}"));
            return;
        }
    };
    let cases = gateway_cases(&discover(root));
    let routes = profile.routes();
    let trials = gateway_trials(&cases, &routes, None);
    let rt = tooltape::runtime();
    let t0 = Instant::now();
    let results = rt.block_on(async {
        let upstream = Arc::new(RecordingUpstream::start().await.expect("loopback upstream"));
        let url = upstream.base_url();
        tooltape::run_gateway_trials(Arc::clone(&profile), &upstream, &url, trials, 4).await
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
        Some(("< 5 ms", own < 0.005)),
    );
    report.figure(
        "wall time, all trials (concurrency 4)",
        wall.as_secs_f64(),
        "s",
        None,
    );
    litellm(report);
}

/// The whole LiteLLM suite through the built binary, when LiteLLM is installed.
fn litellm(report: &mut Report) {
    let cache = std::env::var_os("TOOLTAPE_GATEWAY_CACHE")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(|c| std::path::PathBuf::from(c).join("tooltape/gateways"))
        })
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| std::path::PathBuf::from(h).join(".cache/tooltape/gateways"))
        });
    let installed = cache
        .as_ref()
        .and_then(|c| std::fs::read_dir(c).ok())
        .is_some_and(|rd| {
            rd.filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("litellm-"))
        });
    if !installed {
        report.note("LiteLLM suite: skipped, LiteLLM is not installed (make gateway GATEWAY=litellm installs it)");
        return;
    }
    let t0 = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tooltape"))
        .args(["gateway", "litellm", "--format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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
        Ok(o) => report.note(&format!(
            "LiteLLM suite: exited {}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        Err(e) => report.note(&format!("LiteLLM suite: cannot run tooltape: {e}")),
    }
}
