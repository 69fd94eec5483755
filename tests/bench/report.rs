//! The report the sections fill (aligned figure lines against targets) and the timing loops.

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

/// Megabytes per second for `bytes` processed in `d`.
pub fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// Which allocator settings the figures were taken under. With glibc's own thresholds, memory a
/// run frees (the parser's 1 MB outcome is ~4 MB of small allocations and vectors) may go back to
/// the kernel and come back as fresh pages in the next run: ~490 page faults per text-parser run,
/// ~1 ms on this VM, and 0 or 490 depending on what the process ran before. `make bench` sets
/// `GLIBC_TUNABLES` so that freed memory stays in the process, as in a long-running proxy, and the
/// figures are the code's own; `make bench BENCH_MALLOC=default` shows the other case.
pub fn allocator_note(tunables: Option<&str>) -> String {
    match tunables {
        Some(t) if !t.is_empty() => format!(
            "allocator: glibc with GLIBC_TUNABLES={t} in the bench process; the tooltape \
             binary it starts (proxy, parse) has its own, mimalloc"
        ),
        _ => "allocator: glibc defaults in the bench process (freed memory may return to the \
              kernel between runs; `make bench` keeps it); the tooltape binary has mimalloc"
            .into(),
    }
}
