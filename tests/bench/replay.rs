//! Replay cost per interaction over every shipped cassette: one loopback server per cassette,
//! its interactions sent and decoded `rounds` times.

use std::time::{Duration, Instant};

use crate::report::Report;
use tooltape::{Mode, ReplayServer};

pub fn section(root: &std::path::Path, r: &mut Report) {
    r.section("replay (shipped cassettes through the loopback server)");
    let trials = tooltape::discover(root).trials;
    let mut cassettes = Vec::new();
    for t in &trials {
        if let Ok(Some((c, _))) = tooltape::cassette::load(&root.join(t.cassette_path())) {
            cassettes.push((t.clone(), c));
        }
    }
    let interactions: usize = cassettes.iter().map(|(_, c)| c.interactions.len()).sum();
    if interactions == 0 {
        r.note("no cassettes found");
        return;
    }
    let rounds = 20;
    // The client on a current-thread runtime: no cross-thread wake-ups on the client side (the
    // wiremock server runs on its own thread either way).
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        r.note("cannot start a tokio runtime");
        return;
    };
    let elapsed = rt.block_on(async {
        let client = tooltape::run::client(Duration::from_secs(30));
        let mut total = Duration::ZERO;
        for (t, c) in &cassettes {
            let server = ReplayServer::start(c).await;
            let endpoint = server.endpoint();
            let start = Instant::now();
            for _ in 0..rounds {
                for it in &c.interactions {
                    let neutral = t.first_request().with_stream(t.mode == Mode::Stream);
                    let _ =
                        tooltape::run::send(&client, &endpoint, t.provider, &neutral, &it.request)
                            .await;
                }
                server.take_received();
            }
            total += start.elapsed();
        }
        total
    });
    let per = elapsed.as_secs_f64() * 1e3 / (interactions * rounds) as f64;
    r.figure(
        &format!(
            "replay: ms per interaction ({} cassettes, {interactions} interactions x {rounds})",
            cassettes.len()
        ),
        per,
        "ms",
        Some(("<= 0.2 ms", per <= 0.2)),
    );
}
