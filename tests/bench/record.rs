//! Recording: 100 trials recorded from the simulator answering after 100 ms each, concurrency 8
//! (target: under 3 s, i.e. the latency overlaps and recording adds little of its own).
//!
//! The trials go through `record::record_trial` at most 8 at once, as `tooltape record` runs
//! them (without its progress bars), against the simulator on loopback.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::report::Report;
use tooltape::{
    Endpoint, Provider, SimConfig, Simulator, Trial, record::RecordOptions, redact::Secrets,
};

/// The key the simulator is sent (it checks that one is present, nothing more).
const SIMULATOR_KEY: &str = "tooltape-simulator-key";

pub fn section(report: &mut Report) {
    report.section("recording (simulator, 100 ms latency per answer)");
    let root = std::env::temp_dir().join(format!("tooltape-bench-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    if let Err(e) = bench_project(&root) {
        report.note(&format!(
            "cannot set up the bench project in {}: {e}",
            root.display()
        ));
        return;
    }
    let trials = tooltape::discover(&root).trials;
    let n = trials.len();
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|rt| {
            rt.block_on(async {
                let config = SimConfig {
                    latency: Duration::from_millis(100),
                    ..Default::default()
                };
                let sim = Simulator::start(config).await.map_err(|e| e.to_string())?;
                let started = Instant::now();
                let failed = record_all(&root, trials, &sim.base_url(), 8).await;
                Ok::<_, String>((started.elapsed(), failed, sim.requests_served()))
            })
        });
    let _ = std::fs::remove_dir_all(&root);
    match result {
        Ok((elapsed, failed, served)) => {
            let s = elapsed.as_secs_f64();
            let ok = s < 3.0 && failed.is_empty() && served >= n;
            report.note(&format!("{served} requests answered by the simulator"));
            report.figure(
                &format!("record: {n} trials at concurrency 8 (s)"),
                s,
                "s",
                Some(("< 3 s, all recorded", ok)),
            );
            for (t, why) in &failed {
                report.note(&format!("failed: {t}: {why}"));
            }
        }
        Err(e) => report.note(&format!("cannot start the simulator: {e}")),
    }
}

/// Records every trial against the simulator at `base_url`, at most `concurrency` at once;
/// returns the failures (trial, reason).
async fn record_all(
    root: &Path,
    trials: Vec<Trial>,
    base_url: &str,
    concurrency: usize,
) -> Vec<(String, String)> {
    let opts = RecordOptions {
        secrets: Secrets::new([SIMULATOR_KEY.to_string()]),
        ..RecordOptions::default()
    };
    let endpoint = Endpoint {
        base_url: base_url.to_string(),
        key: Some(SIMULATOR_KEY.into()),
        extra_headers: Vec::new(),
    };
    let source = format!("simulator {}", env!("CARGO_PKG_VERSION"));
    let client = tooltape::run::client(opts.timeout);
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let futs = trials.iter().map(|t| {
        let (client, sem, opts, endpoint, source) = (&client, &sem, &opts, &endpoint, &source);
        async move {
            let _permit = sem.acquire().await;
            let r = tooltape::record::record_trial((client, endpoint), root, t, source, opts).await;
            (t.name(), r)
        }
    });
    futures_util::future::join_all(futs)
        .await
        .into_iter()
        .filter_map(|(name, r)| r.err().map(|e| (name, e)))
        .collect()
}

/// Five cases × 2 providers × 5 tool choices × 2 modes = 100 trials, each sending one request.
fn bench_project(root: &Path) -> std::io::Result<()> {
    let cases = root.join("cases");
    std::fs::create_dir_all(cases.join("tools"))?;
    let mut providers = String::new();
    for p in Provider::ALL {
        providers.push_str(&format!(
            "[{p}]\nmodel = \"bench-model\"\nbase_url = \"http://127.0.0.1:9\"\n\n"
        ));
    }
    std::fs::write(cases.join(tooltape::case::PROVIDERS_FILE), providers)?;
    let tool = r#"{"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}"#;
    std::fs::write(cases.join("tools/get_weather.json"), tool)?;
    for name in ["bench_a", "bench_b", "bench_c", "bench_d", "bench_e"] {
        let case = format!(
            "description = \"{name}\"\ntools = [\"get_weather\"]\nproviders = [\"anthropic\", \"gemini\"]\nchoices = [\"omitted\", \"auto\", \"none\", \"required\", \"forced-get_weather\"]\n\n[[messages]]\nrole = \"user\"\ncontent = \"Weather in Paris? ({name})\"\n"
        );
        std::fs::write(cases.join(format!("{name}.toml")), case)?;
    }
    Ok(())
}
