//! `tooltape bench` (and `make bench`): speed figures against the project's targets.
//!
//! Each subsystem owns its section as `pub fn bench(report: &mut Report)` next to its code;
//! this module times and prints. Run it in release mode only.

use std::time::{Duration, Instant};

/// Collected figures, printed as aligned lines: `name  value unit  (target …: ok|MISSED)`.
#[derive(Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
    pub missed: usize,
}

impl Report {
    pub fn section(&mut self, title: &str) {
        self.lines.push(String::new());
        self.lines.push(format!("## {title}"));
    }

    /// Records a figure; `ok` says whether it meets its target (None: no target).
    pub fn figure(&mut self, name: &str, value: f64, unit: &str, target: Option<(&str, bool)>) {
        let mut line = format!("{name:<58} {value:>12.3} {unit}");
        if let Some((t, ok)) = target {
            line.push_str(&format!(
                "   (target {t}: {})",
                if ok { "ok" } else { "MISSED" }
            ));
            if !ok {
                self.missed += 1;
            }
        }
        self.lines.push(line);
    }

    pub fn note(&mut self, text: &str) {
        self.lines.push(format!("  {text}"));
    }
}

/// Runs `f` repeatedly for at least `budget` (and at least 3 times); returns the fastest run.
pub fn fastest(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut runs = 0;
    while runs < 3 || start.elapsed() < budget {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
        runs += 1;
    }
    best
}

/// Times two variants of one job, alternating within one `budget`; the fastest run of each.
///
/// For a ratio between them (1-byte chunks against the whole body): alternating puts both under
/// the same machine load, where timing one and then the other lets a burst of load on a shared
/// machine land on only one side of the ratio. Each variant runs twice in a row per turn (both
/// timed), so that each is also timed after a run of its own kind, not only in the allocator
/// state the other variant left (see [`allocator_note`]).
pub fn fastest_pair(
    budget: Duration,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Duration, Duration) {
    let start = Instant::now();
    let (mut best_a, mut best_b) = (Duration::MAX, Duration::MAX);
    let mut turns = 0;
    while turns < 3 || start.elapsed() < budget {
        for _ in 0..2 {
            let t = Instant::now();
            a();
            best_a = best_a.min(t.elapsed());
        }
        for _ in 0..2 {
            let t = Instant::now();
            b();
            best_b = best_b.min(t.elapsed());
        }
        turns += 1;
    }
    (best_a, best_b)
}

/// The request every stream-decode section decodes against: no tools, streaming.
pub fn stream_request() -> crate::model::ChatRequest {
    crate::model::ChatRequest {
        model: "bench".into(),
        messages: Vec::new(),
        tools: Vec::new(),
        hosted: Vec::new(),
        tool_choice: None,
        parallel_tool_calls: None,
        stream: true,
        max_tokens: None,
        strict: Default::default(),
        thinking: None,
    }
}

/// Times `decode(body, chunk_len)` (which returns the calls it decoded) on the whole body and in
/// 1-byte chunks, alternately; reports `{label}, …` figures against the stream targets
/// (>= 300 MB/s whole, 1-byte less than 2x slower).
pub fn stream_decode(
    report: &mut Report,
    label: &str,
    body: &[u8],
    decode: &dyn Fn(&[u8], usize) -> usize,
) {
    let calls = decode(body, body.len());
    report.note(&format!("{label}: {} bytes, {calls} calls", body.len()));
    let (whole, bytewise) = fastest_pair(
        Duration::from_millis(1000),
        || {
            std::hint::black_box(decode(body, body.len()));
        },
        || {
            std::hint::black_box(decode(body, 1));
        },
    );
    let (w, b) = (mb_per_s(body.len(), whole), mb_per_s(body.len(), bytewise));
    let ratio = bytewise.as_secs_f64() / whole.as_secs_f64();
    report.figure(
        &format!("{label}, whole body"),
        w,
        "MB/s",
        Some((">= 300", w >= 300.0)),
    );
    report.figure(&format!("{label}, 1-byte chunks"), b, "MB/s", None);
    report.figure(
        &format!("{label}, 1-byte / whole time"),
        ratio,
        "x",
        Some(("< 2", ratio < 2.0)),
    );
}

/// Megabytes per second for `bytes` processed in `d`.
pub fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// Section names, in run order, as `tooltape bench --only NAME` takes them.
pub const SECTIONS: [&str; 8] = [
    "replay",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "textcall",
    "schema",
    "record",
];

/// Every section in order, or only those named in `only` (names from [`SECTIONS`]).
/// Figures need a release build to mean anything.
pub fn run_all(root: &std::path::Path, only: &[String]) -> Report {
    let mut r = Report::default();
    if cfg!(debug_assertions) {
        r.note("WARNING: debug build; run `make bench` (release) for real figures");
    }
    r.note(&allocator_note(
        std::env::var("GLIBC_TUNABLES").ok().as_deref(),
    ));
    for name in SECTIONS {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        match name {
            "replay" => replay_section(root, &mut r),
            "openai-chat" => crate::providers::openai_chat::bench(&mut r),
            "openai-responses" => crate::providers::openai_responses::bench(&mut r),
            "anthropic" => crate::providers::anthropic::bench(&mut r),
            "gemini" => crate::providers::gemini::bench(&mut r),
            "textcall" => crate::textcall::bench(&mut r),
            "schema" => crate::schema::bench(&mut r),
            "record" => crate::record::bench(&mut r),
            _ => {}
        }
    }
    r.lines.push(String::new());
    r.lines.push(if r.missed == 0 {
        "all targets met".into()
    } else {
        format!("{} target(s) MISSED", r.missed)
    });
    r
}

/// Which allocator settings the figures were taken under. With glibc's own thresholds, memory a
/// run frees (the parser's 1 MB outcome is ~4 MB of small allocations and vectors) may go back to
/// the kernel and come back as fresh pages in the next run: ~490 page faults per text-parser run,
/// ~1 ms on this VM, and 0 or 490 depending on what the process ran before. `make bench` sets
/// `GLIBC_TUNABLES` so that freed memory stays in the process, as in a long-running proxy, and the
/// figures are the code's own; `make bench BENCH_MALLOC=default` shows the other case.
fn allocator_note(tunables: Option<&str>) -> String {
    match tunables {
        Some(t) if !t.is_empty() => format!("allocator: glibc with GLIBC_TUNABLES={t}"),
        _ => "allocator: glibc defaults (freed memory may return to the kernel between runs; \
              `make bench` keeps it)"
            .into(),
    }
}

/// Replay cost per interaction over every shipped cassette: one loopback server per cassette,
/// its interactions sent and decoded `rounds` times.
fn replay_section(root: &std::path::Path, r: &mut Report) {
    use std::time::Duration;
    r.section("replay (shipped cassettes through the loopback server)");
    let trials = crate::case::discover(root).trials;
    let mut cassettes = Vec::new();
    for t in &trials {
        if let Ok(Some((c, _))) = crate::cassette::load(&root.join(t.cassette_path())) {
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
        let client = crate::run::client(Duration::from_secs(30));
        let mut total = Duration::ZERO;
        for (t, c) in &cassettes {
            let server = crate::replay::ReplayServer::start(c).await;
            let endpoint = server.endpoint();
            let start = Instant::now();
            for _ in 0..rounds {
                for it in &c.interactions {
                    let neutral = crate::model::ChatRequest {
                        stream: t.mode == crate::case::Mode::Stream,
                        ..t.first_request()
                    };
                    let _ = crate::run::send(&client, &endpoint, t.provider, &neutral, &it.request)
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
