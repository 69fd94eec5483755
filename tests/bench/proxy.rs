//! `tooltape proxy` under load: 200 concurrent streamed requests on loopback through the proxy
//! running as its own process (`tooltape proxy --config`), against the simulator (20 ms before
//! each answer, 2 ms between chunks). Figures: errors (target: none), the proxy process's peak
//! memory (`VmHWM` of `/proc/PID/status`), and added latency per request: the p50 and p99 of the
//! times through the proxy minus the same quantiles of the same 200 requests sent straight to
//! the simulator (the upstream time).
//!
//! The `proxy-hostile` section: the same proxy process holding 1,000 slow connections (500 whose
//! head never ends, 500 whose body never ends), and 100 well-formed streamed requests sent one
//! at a time before and while they are held. Figures: the p50/p99 of both, and the process's
//! peak memory with the slow connections held.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::json;
use tooltape::{
    ChatRequest, Provider, SimConfig, Simulator, StreamDecoder, StrictPolicy, Tool, ToolChoice,
    encode,
};

use crate::report::Report;

const N: usize = 200;

/// The proxy child process; killed (by its pid) when dropped.
struct ProxyProcess(Child);

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The weather request both proxy benches send (`hop` too): one tool, `required`, 256 tokens.
pub(crate) fn weather_request(model: &str) -> ChatRequest {
    ChatRequest::new(model)
        .with_user("What is the weather in Paris?")
        .with_tool(Tool { allowed_callers: Vec::new(), output_schema: None,
            name: "get_weather".into(),
            description: Some("Current weather for a city".into()),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            strict: None,
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
        })
        .with_choice(ToolChoice::Required)
        .with_max_tokens(256)
}

fn request(model: &str) -> ChatRequest {
    weather_request(model)
        .with_stream(true)
        .with_strict(StrictPolicy::Auto)
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Peak resident set of a process in kB (`VmHWM`).
fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Sends the streamed request `N` times at once to `base` (inbound OpenAI Chat); returns each
/// request's time to the end of its stream, and the failures.
async fn burst(base: &str, model: &str) -> (Vec<Duration>, Vec<String>) {
    burst_of(base, model, N).await
}

/// Sends the streamed request `n` times at once; each time to the end of its stream, sorted.
async fn burst_of(base: &str, model: &str, n: usize) -> (Vec<Duration>, Vec<String>) {
    let req = request(model);
    let enc = encode(Provider::OpenaiChat, &req).unwrap().request;
    let body = serde_json::to_vec(&enc.body).unwrap();
    let client = tooltape::run::client(Duration::from_secs(60));
    let url = format!("{base}{}", enc.path_and_query());
    let futs = (0..n).map(|_| {
        let (client, url, body, req) = (&client, &url, body.clone(), &req);
        async move {
            let t0 = Instant::now();
            let resp = client
                .post(url)
                .header("authorization", "Bearer sk-bench")
                .body(body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if resp.status().as_u16() != 200 {
                return Err(format!("status {}", resp.status()));
            }
            let mut d = StreamDecoder::new(Provider::OpenaiChat, req);
            let mut s = resp.bytes_stream();
            while let Some(c) = s.next().await {
                d.push(&c.map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
            }
            let o = d.finish().map_err(|e| e.to_string())?;
            if o.tool_calls.len() != 1 {
                return Err(format!("{} tool calls", o.tool_calls.len()));
            }
            Ok(t0.elapsed())
        }
    });
    let mut times = Vec::new();
    let mut failed = Vec::new();
    for r in futures_util::future::join_all(futs).await {
        match r {
            Ok(t) => times.push(t),
            Err(e) => failed.push(e),
        }
    }
    times.sort();
    (times, failed)
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

async fn wait_ready(base: &str) -> Result<(), String> {
    let client = tooltape::run::client(Duration::from_secs(5));
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        if let Ok(r) = client.get(format!("{base}/health")).send().await
            && r.status().is_success()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("the proxy did not answer /health within 20 s".into())
}

pub fn section(report: &mut Report) {
    report.section("proxy (200 concurrent streamed requests, loopback, proxy as its own process)");
    let dir = std::env::temp_dir().join(format!("tooltape-bench-proxy-{}", std::process::id()));
    let result = run(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        Ok(f) => {
            report.figure(
                "proxy: failed requests",
                f.failed.len() as f64,
                "",
                Some(("0", f.failed.is_empty())),
            );
            for e in f.failed.iter().take(5) {
                report.note(&format!("failed: {e}"));
            }
            report.figure("proxy: upstream alone, p50 (ms)", ms(f.p50_up), "ms", None);
            report.figure("proxy: through the proxy, p50 (ms)", ms(f.p50), "ms", None);
            let add50 = ms(f.p50.saturating_sub(f.p50_up));
            let add99 = ms(f.p99.saturating_sub(f.p99_up));
            report.figure(
                "proxy: added latency p50 (ms)",
                add50,
                "ms",
                Some(("< 25 ms", add50 < 25.0)),
            );
            report.figure(
                "proxy: added latency p99 (ms)",
                add99,
                "ms",
                Some(("< 100 ms", add99 < 100.0)),
            );
            match f.peak_kb {
                Some(kb) => report.figure(
                    "proxy: peak memory of the process, VmHWM (MB)",
                    kb as f64 / 1024.0,
                    "MB",
                    Some(("< 256 MB", kb < 256 * 1024)),
                ),
                None => report.note("peak memory: /proc/PID/status not readable here"),
            }
        }
        Err(e) => report.note(&format!("cannot run the proxy bench: {e}")),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Figures {
    failed: Vec<String>,
    p50_up: Duration,
    p99_up: Duration,
    p50: Duration,
    p99: Duration,
    peak_kb: Option<u64>,
}

/// Sends the streamed request `n` times one after another; the sorted times and the failures.
async fn sequential(base: &str, model: &str, n: usize) -> (Vec<Duration>, Vec<String>) {
    let mut times = Vec::new();
    let mut failed = Vec::new();
    for _ in 0..n {
        let (t, f) = burst_of(base, model, 1).await;
        times.extend(t);
        failed.extend(f);
    }
    times.sort();
    (times, failed)
}

/// Opens `n` connections to `addr` that each start a request and never finish it: even ones stop
/// inside the head, odd ones after declaring a 1,000-byte body and sending 10 bytes of it.
async fn slow_clients(addr: &str, n: usize) -> Result<Vec<tokio::net::TcpStream>, String> {
    use tokio::io::AsyncWriteExt;
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("slow client {i}: {e}"))?;
        let start: &[u8] = if i % 2 == 0 {
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: bench\r\ncontent-type: appl"
        } else {
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: bench\r\ncontent-length: 1000\r\n\r\n{\"model\":"
        };
        s.write_all(start).await.map_err(|e| e.to_string())?;
        held.push(s);
    }
    Ok(held)
}

const SLOW: usize = 1000;
const SEQUENTIAL: usize = 100;

pub fn hostile_section(report: &mut Report) {
    report.section(&format!(
        "proxy-hostile ({SEQUENTIAL} streamed requests one at a time, before and while {SLOW} slow connections are held)"
    ));
    let dir = std::env::temp_dir().join(format!("tooltape-bench-hostile-{}", std::process::id()));
    let result = run_hostile(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let f = match result {
        Ok(f) => f,
        Err(e) => return report.note(&format!("cannot run the hostile-client bench: {e}")),
    };
    report.figure(
        "proxy-hostile: failed requests",
        f.failed.len() as f64,
        "",
        Some(("0", f.failed.is_empty())),
    );
    for e in f.failed.iter().take(5) {
        report.note(&format!("failed: {e}"));
    }
    report.figure("proxy-hostile: quiet, p50 (ms)", ms(f.p50_up), "ms", None);
    report.figure("proxy-hostile: quiet, p99 (ms)", ms(f.p99_up), "ms", None);
    report.figure("proxy-hostile: slow held, p50 (ms)", ms(f.p50), "ms", None);
    let add50 = ms(f.p50.saturating_sub(f.p50_up));
    let add99 = ms(f.p99.saturating_sub(f.p99_up));
    report.figure("proxy-hostile: slow held, p99 (ms)", ms(f.p99), "ms", None);
    report.figure(
        "proxy-hostile: p50 added by the slow connections (ms)",
        add50,
        "ms",
        Some(("< 5 ms", add50 < 5.0)),
    );
    report.figure(
        "proxy-hostile: p99 added by the slow connections (ms)",
        add99,
        "ms",
        Some(("< 25 ms", add99 < 25.0)),
    );
    match f.peak_kb {
        Some(kb) => report.figure(
            "proxy-hostile: peak memory, VmHWM (MB)",
            kb as f64 / 1024.0,
            "MB",
            Some(("< 128 MB", kb < 128 * 1024)),
        ),
        None => report.note("peak memory: /proc/PID/status not readable here"),
    }
}

/// The quiet figures in `p50_up`/`p99_up`, the held ones in `p50`/`p99`.
fn run_hostile(dir: &Path) -> Result<Figures, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let (sim, child, base) = start(dir).await?;
        let _ = sequential(&base, "bench", 10).await;
        let (quiet, mut failed) = sequential(&base, "bench", SEQUENTIAL).await;
        let held = slow_clients(base.trim_start_matches("http://"), SLOW).await?;
        let (slow, slow_failed) = sequential(&base, "bench", SEQUENTIAL).await;
        failed.extend(slow_failed.into_iter().map(|e| format!("while held: {e}")));
        let peak_kb = peak_kb(child.0.id());
        drop(held);
        drop(sim);
        Ok(Figures {
            failed,
            p50_up: quantile(&quiet, 0.5),
            p99_up: quantile(&quiet, 0.99),
            p50: quantile(&slow, 0.5),
            p99: quantile(&slow, 0.99),
            peak_kb,
        })
    })
}

/// The simulator (20 ms before each answer, 2 ms between chunks) and `tooltape proxy` as its own
/// process routing the model `bench` to it, answering `/health`.
async fn start(dir: &Path) -> Result<(Simulator, ProxyProcess, String), String> {
    let sim = Simulator::start(SimConfig {
        latency: Duration::from_millis(20),
        chunk_delay: Duration::from_millis(2),
        ..SimConfig::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let port = free_port().map_err(|e| e.to_string())?;
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:{port}\"\n[[route]]\nmodel = \"bench\"\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nupstream_model = \"gpt-4o\"\nkey = \"sk-bench\"\n",
            sim.base_url()
        ),
    )
    .map_err(|e| e.to_string())?;
    let child = Command::new(env!("CARGO_BIN_EXE_tooltape"))
        .arg("proxy")
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start tooltape proxy: {e}"))?;
    let child = ProxyProcess(child);
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&base).await?;
    Ok((sim, child, base))
}

fn run(dir: &Path) -> Result<Figures, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let (sim, child, base) = start(dir).await?;
        // Warm both paths once, then measure: upstream alone, then through the proxy.
        let _ = burst(&sim.base_url(), "gpt-4o").await;
        let _ = burst(&base, "bench").await;
        let (up, up_failed) = burst(&sim.base_url(), "gpt-4o").await;
        let (through, mut failed) = burst(&base, "bench").await;
        failed.extend(
            up_failed
                .into_iter()
                .map(|e| format!("upstream alone: {e}")),
        );
        Ok(Figures {
            failed,
            p50_up: quantile(&up, 0.5),
            p99_up: quantile(&up, 0.99),
            p50: quantile(&through, 0.5),
            p99: quantile(&through, 0.99),
            peak_kb: peak_kb(child.0.id()),
        })
    })
}
