//! Linux `/proc` readings: a process group's peak resident memory (the sum of `VmHWM` over the
//! group's processes, sampled while a gateway runs so that processes that exit early still
//! count), and the one-line machine note printed with measured figures.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The process ids whose process group is `pgid` (`/proc/PID/stat`, field 5).
pub(crate) fn group_members(proc_root: &Path, pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if stat_pgrp(&stat) == Some(pgid) {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

/// The process group in a `/proc/PID/stat` line: the third field after the command, which is
/// parenthesised and may itself contain spaces and parentheses.
pub(crate) fn stat_pgrp(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// A `kB` field (`VmHWM:`, `VmRSS:`) of a `/proc/PID/status` text, in KiB.
pub(crate) fn status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// The sum of `VmHWM` (each process's peak resident set) over the group's live processes, in
/// KiB; `None` when no process of the group can be read.
pub(crate) fn group_hwm_kib(proc_root: &Path, pgid: u32) -> Option<u64> {
    let mut total = None;
    for pid in group_members(proc_root, pgid) {
        let Ok(status) = std::fs::read_to_string(proc_root.join(pid.to_string()).join("status"))
        else {
            continue;
        };
        if let Some(kib) = status_kib(&status, "VmHWM") {
            total = Some(total.unwrap_or(0) + kib);
        }
    }
    total
}

/// `N CPUs (model), M GiB RAM` from `cpuinfo` and `meminfo` under `proc_root`; `unknown machine`
/// when neither is readable.
pub fn machine_note(proc_root: &Path) -> String {
    let cpuinfo = std::fs::read_to_string(proc_root.join("cpuinfo")).unwrap_or_default();
    let cpus = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map(|(_, m)| m.trim().to_string());
    let mem = std::fs::read_to_string(proc_root.join("meminfo"))
        .ok()
        .and_then(|m| status_kib(&m, "MemTotal"));
    let mut parts = Vec::new();
    if cpus > 0 {
        parts.push(match model {
            Some(m) => format!("{cpus} CPUs ({m})"),
            None => format!("{cpus} CPUs"),
        });
    }
    if let Some(kib) = mem {
        parts.push(format!("{:.0} GiB RAM", kib as f64 / 1024.0 / 1024.0));
    }
    if parts.is_empty() {
        "unknown machine".into()
    } else {
        parts.join(", ")
    }
}

/// Samples a group's summed `VmHWM` on a thread until stopped; the peak is the largest sum seen.
pub struct PeakSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
    pgid: u32,
}

impl PeakSampler {
    pub fn start(pgid: u32, every: Duration) -> PeakSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let (s, p) = (Arc::clone(&stop), Arc::clone(&peak));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(kib) = group_hwm_kib(Path::new("/proc"), pgid) {
                    p.fetch_max(kib, Ordering::Relaxed);
                }
                std::thread::sleep(every);
            }
        });
        PeakSampler {
            stop,
            peak,
            thread: Some(thread),
            pgid,
        }
    }

    /// Takes a last sample, stops the thread, and returns the peak in KiB (`None` if no sample
    /// could read the group: not Linux, or the group is gone).
    pub fn finish(mut self) -> Option<u64> {
        if let Some(kib) = group_hwm_kib(Path::new("/proc"), self.pgid) {
            self.peak.fetch_max(kib, Ordering::Relaxed);
        }
        self.halt();
        Some(self.peak.load(Ordering::Relaxed)).filter(|&k| k > 0)
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests;
