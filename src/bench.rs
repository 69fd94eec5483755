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
            line.push_str(&format!("   (target {t}: {})", if ok { "ok" } else { "MISSED" }));
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

/// Megabytes per second for `bytes` processed in `d`.
pub fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}
