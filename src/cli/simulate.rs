//! `tooltape simulate`: the provider simulator on loopback until interrupted.

use super::exit::CommandResult;
use tooltape::runtime;

/// Runs `tooltape simulate --port PORT`.
pub fn run(port: u16) -> CommandResult {
    runtime()
        .block_on(serve_forever(port))
        .map_err(|e| format!("cannot start the simulator on 127.0.0.1:{port}: {e}").into())
}

/// Runs a simulator on `127.0.0.1:port` until the process ends, printing its base URL
/// (for `tooltape simulate --port N`, to point gateways at it).
async fn serve_forever(port: u16) -> std::io::Result<()> {
    let sim = tooltape::Simulator::start_on(port, tooltape::SimConfig::default()).await?;
    outln!("{}", sim.base_url());
    std::future::pending::<()>().await;
    drop(sim);
    Ok(())
}
