//! The latency one hop adds, `tooltape proxy` beside nginx in one run: the simulator, nginx
//! (`proxy_pass`, keepalive upstream, buffering off) and `tooltape proxy` each as their own
//! process on loopback, and one client sending the same Chat Completions request to all three in
//! turn, one request at a time, buffered and streamed. Figures: the p50 and p99 of each proxy's
//! added time, paired per round (through the proxy minus straight to the simulator in the same
//! round), and the target: tooltape's p50 within 0.1 ms of nginx's.
//!
//! nginx comes from the system (`nginx` on `PATH` or in `/usr/sbin`; Debian's `nginx-light`).
//! Without it the section reports a missed target saying how to install it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tooltape::{ChatRequest, Provider, encode};

use crate::report::Report;

/// Rounds per mode; each round sends one request straight, one through nginx, one through
/// tooltape, in an order that rotates with the round.
const ROUNDS: usize = 600;
/// Rounds sent first and not counted (connections opened, caches warm).
const WARM: usize = 50;
/// tooltape's p50 may exceed nginx's by this much.
const WITHIN_MS: f64 = 0.1;

/// A child process (the simulator, nginx or the proxy), killed by its pid when dropped.
struct Owned(Child);

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn nginx() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("nginx"));
    on_path
        .chain([PathBuf::from("/usr/sbin/nginx")])
        .find(|p| p.is_file())
}

fn request(stream: bool) -> ChatRequest {
    crate::proxy::weather_request("gpt-4o").with_stream(stream)
}

/// Waits until `url` answers (any status) or 20 s pass.
async fn wait_answering(client: &reqwest::Client, url: &str) -> Result<(), String> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        if client.get(url).send().await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("{url} did not answer within 20 s"))
}

fn spawn(cmd: &mut Command, what: &str) -> Result<Owned, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Owned)
        .map_err(|e| format!("cannot start {what}: {e}"))
}

/// The three processes; the base URLs of the simulator, nginx and the proxy.
struct Setup {
    _children: Vec<Owned>,
    bases: [String; 3],
}

fn start(dir: &Path, nginx: &Path) -> Result<Setup, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let bin = env!("CARGO_BIN_EXE_tooltape");
    let (sim_port, nginx_port, proxy_port) = (free_port()?, free_port()?, free_port()?);
    let sim = format!("http://127.0.0.1:{sim_port}");
    let mut children = vec![spawn(
        Command::new(bin).args(["simulate", "--port", &sim_port.to_string()]),
        "tooltape simulate",
    )?];
    let d = dir.display();
    let conf = dir.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
             error_log {d}/error.log;\nevents {{ worker_connections 1024; }}\nhttp {{\n\
             access_log off;\nclient_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\n\
             upstream sim {{ server 127.0.0.1:{sim_port}; keepalive 16; }}\n\
             server {{ listen 127.0.0.1:{nginx_port};\n location / {{ proxy_pass http://sim;\n\
             proxy_http_version 1.1; proxy_set_header Connection \"\"; proxy_buffering off; }} }}\n}}\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    children.push(spawn(
        Command::new(nginx).arg("-p").arg(dir).arg("-c").arg(&conf),
        "nginx",
    )?);
    let proxy_conf = dir.join("proxy.toml");
    std::fs::write(
        &proxy_conf,
        format!(
            "listen = \"127.0.0.1:{proxy_port}\"\n[[route]]\nmodel = \"gpt-4o\"\nprovider = \"openai-chat\"\nbase_url = \"{sim}\"\nkey = \"sk-bench\"\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    children.push(spawn(
        Command::new(bin)
            .arg("proxy")
            .arg("--config")
            .arg(&proxy_conf),
        "tooltape proxy",
    )?);
    Ok(Setup {
        _children: children,
        bases: [
            sim,
            format!("http://127.0.0.1:{nginx_port}"),
            format!("http://127.0.0.1:{proxy_port}"),
        ],
    })
}

/// One request to `base`, read to its last byte; the time it took.
async fn once(client: &reqwest::Client, url: &str, body: &[u8]) -> Result<Duration, String> {
    let t0 = Instant::now();
    let resp = client
        .post(url)
        .header("authorization", "Bearer sk-bench")
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if resp.status().as_u16() != 200 {
        return Err(format!("{url}: status {}", resp.status()));
    }
    let mut s = resp.bytes_stream();
    let mut bytes = 0;
    while let Some(c) = s.next().await {
        bytes += c.map_err(|e| e.to_string())?.len();
    }
    if bytes == 0 {
        return Err(format!("{url}: empty answer"));
    }
    Ok(t0.elapsed())
}

/// The added times (through minus straight, per round) of nginx and of tooltape.
struct Added {
    nginx: Vec<f64>,
    tooltape: Vec<f64>,
}

async fn measure(bases: &[String; 3], stream: bool) -> Result<Added, String> {
    let enc = encode(Provider::OpenaiChat, &request(stream))
        .map_err(|e| e.to_string())?
        .request;
    let body = serde_json::to_vec(&enc.body).map_err(|e| e.to_string())?;
    let client = tooltape::run::client(Duration::from_secs(30));
    let urls: Vec<String> = bases
        .iter()
        .map(|b| format!("{b}{}", enc.path_and_query()))
        .collect();
    for b in bases {
        wait_answering(&client, &format!("{b}/health")).await?;
    }
    let mut added = Added {
        nginx: Vec::new(),
        tooltape: Vec::new(),
    };
    for round in 0..WARM + ROUNDS {
        let mut t = [Duration::ZERO; 3];
        for k in 0..3 {
            let i = (round + k) % 3;
            t[i] = once(&client, &urls[i], &body).await?;
        }
        if round >= WARM {
            added.nginx.push(ms(t[1]) - ms(t[0]));
            added.tooltape.push(ms(t[2]) - ms(t[0]));
        }
    }
    Ok(added)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len().max(1) - 1) as f64 * q).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

pub fn section(report: &mut Report) {
    report.section(&format!(
        "hop: latency one proxy adds, tooltape beside nginx ({ROUNDS} paired rounds, one request at a time)"
    ));
    let Some(nginx) = nginx() else {
        report.note(
            "nginx not found (Debian: apt-get install nginx-light); the hop target is not measured",
        );
        report.missed += 1;
        return;
    };
    let dir = std::env::temp_dir().join(format!("tooltape-bench-hop-{}", std::process::id()));
    let result = run(&dir, &nginx);
    let _ = std::fs::remove_dir_all(&dir);
    let figures = match result {
        Ok(f) => f,
        Err(e) => {
            report.note(&format!("cannot run the hop bench: {e}"));
            report.missed += 1;
            return;
        }
    };
    for (mode, mut added) in figures {
        let n50 = quantile(&mut added.nginx, 0.5);
        let n99 = quantile(&mut added.nginx, 0.99);
        let t50 = quantile(&mut added.tooltape, 0.5);
        let t99 = quantile(&mut added.tooltape, 0.99);
        report.figure(
            &format!("hop {mode}: nginx adds, p50 (ms)"),
            n50,
            "ms",
            None,
        );
        report.figure(
            &format!("hop {mode}: nginx adds, p99 (ms)"),
            n99,
            "ms",
            None,
        );
        report.figure(
            &format!("hop {mode}: tooltape adds, p50 (ms)"),
            t50,
            "ms",
            Some((
                &format!("<= nginx + {WITHIN_MS} ms"),
                t50 <= n50 + WITHIN_MS,
            )),
        );
        report.figure(
            &format!("hop {mode}: tooltape adds, p99 (ms)"),
            t99,
            "ms",
            None,
        );
    }
}

fn run(dir: &Path, nginx: &Path) -> Result<Vec<(&'static str, Added)>, String> {
    let setup = start(dir, nginx)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        Ok(vec![
            ("buffered", measure(&setup.bases, false).await?),
            ("streamed", measure(&setup.bases, true).await?),
        ])
    })
}
