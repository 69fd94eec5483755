//! `tooltape proxy --config FILE`: loads the config, starts the proxy on loopback, prints its
//! URL and routes, and serves until the process is interrupted.

use std::path::PathBuf;

use super::exit;
use clap::Args;
use tooltape::{Proxy, ProxyConfig, runtime};

#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// The proxy config (strict TOML: `listen`, `max_body_bytes`, `[[route]]` entries).
    #[arg(long)]
    pub config: PathBuf,
}

pub fn run(a: &ProxyArgs) -> i32 {
    let config = match ProxyConfig::load(&a.config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return exit::ERROR;
        }
    };
    let routes: Vec<String> = config
        .routes
        .iter()
        .map(|r| format!("{} -> {} {}", r.model, r.provider, r.base_url))
        .collect();
    runtime().block_on(async move {
        let listen = config.listen;
        match Proxy::start(config).await {
            Ok(proxy) => {
                outln!("tooltape proxy listening on {}", proxy.base_url());
                for r in &routes {
                    outln!("  {r}");
                }
                std::future::pending::<()>().await;
                drop(proxy);
                0
            }
            Err(e) => {
                eprintln!("cannot start the proxy on {listen}: {e}");
                1
            }
        }
    })
}
