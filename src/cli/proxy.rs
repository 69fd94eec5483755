//! `tooltape proxy --config FILE`: loads the config, starts the proxy on loopback, prints its
//! URL and routes, and serves until the process is interrupted.

use std::path::PathBuf;

use super::exit::{CliError, CommandResult};
use clap::Args;
use tooltape::{Proxy, ProxyConfig};

#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// The proxy config (strict TOML: `listen`, the limits below, `[[route]]` entries).
    #[arg(long)]
    pub config: PathBuf,
    /// Overrides the config's `max_body_bytes` (default 8388608): larger bodies get 413.
    #[arg(long)]
    pub max_body_bytes: Option<usize>,
    /// Overrides `max_json_depth` (default 64, at most 128): deeper JSON gets 400.
    #[arg(long)]
    pub max_json_depth: Option<usize>,
    /// Overrides `max_connections` (default 4096): one more is answered 503 and closed.
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Overrides `header_timeout_ms` (default 10000): a head not received within it, counted
    /// from when the connection waits for one, closes the connection.
    #[arg(long)]
    pub header_timeout_ms: Option<u64>,
    /// Overrides `body_timeout_ms` (default 30000): an unfinished body gets 408.
    #[arg(long)]
    pub body_timeout_ms: Option<u64>,
    /// Overrides `idle_timeout_ms` (default 30000): a connection with no byte read or written
    /// and no request in flight is closed.
    #[arg(long)]
    pub idle_timeout_ms: Option<u64>,
    /// Worker threads, each serving its connections start to end on one port (default: one per
    /// CPU; 1 off Unix). `max_connections` is split between them.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub workers: Option<u16>,
}

/// The config file's limits, with the flags given on the command line instead.
fn apply_flags(a: &ProxyArgs, c: &mut ProxyConfig) -> Result<(), String> {
    c.max_body_bytes = a.max_body_bytes.unwrap_or(c.max_body_bytes);
    c.max_json_depth = a.max_json_depth.unwrap_or(c.max_json_depth);
    c.max_connections = a.max_connections.unwrap_or(c.max_connections);
    c.header_timeout_ms = a.header_timeout_ms.unwrap_or(c.header_timeout_ms);
    c.body_timeout_ms = a.body_timeout_ms.unwrap_or(c.body_timeout_ms);
    c.idle_timeout_ms = a.idle_timeout_ms.unwrap_or(c.idle_timeout_ms);
    c.check_limits()
        .map_err(|e| format!("--{}", e.replace('_', "-").replacen(" = ", " ", 1)))
}

/// Runs `tooltape proxy` until the process ends; exit 2 on a bad config, 1 when the proxy
/// cannot start.
pub fn run(a: &ProxyArgs) -> CommandResult {
    let mut config = ProxyConfig::load(&a.config).map_err(|e| e.to_string())?;
    apply_flags(a, &mut config)?;
    let routes: Vec<String> = config
        .routes
        .iter()
        .map(|r| format!("{} -> {} {}", r.model, r.provider, r.base_url))
        .collect();
    // Workers as nginx's: each a thread with a one-thread runtime that serves a connection
    // start to end (the client's connection, the upstream connection, a streamed answer's
    // relay) without waking another thread, which cost ~0.1 ms a hop (docs/performance.md).
    let workers = match a.workers {
        Some(n) => usize::from(n),
        None if cfg!(unix) => std::thread::available_parallelism().map_or(1, |n| n.get()),
        None => 1,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listen = config.listen;
        match Proxy::start_workers(config, workers).await {
            Ok(proxy) => {
                outln!("tooltape proxy listening on {}", proxy.base_url());
                for r in &routes {
                    outln!("  {r}");
                }
                std::future::pending::<()>().await;
                drop(proxy);
                Ok(())
            }
            Err(e) => Err(CliError::FailedWith(format!(
                "cannot start the proxy on {listen}: {e}"
            ))),
        }
    })
}
