//! `tooltape parse --provider openai-chat --stream FILE` as a whole process (start, read, decode,
//! print) on a 22 MB Chat Completions stream of 8,000 tool calls, against >= 300 MB/s.
//!
//! The process is the release binary built beside this bench (`target/release/tooltape`; cargo
//! builds a package's binaries before its benches), with its own allocator (mimalloc), without
//! the glibc settings `make bench` sets for its own process. Its output goes to /dev/null; one
//! run's output is read first to check that every call was decoded.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::report::{Report, mb_per_s};
use tooltape::providers::openai_chat;

/// Calls in the stream, and the chars of each arguments fragment (23.3 MB in all).
const CALLS: usize = 8000;
const FRAGMENT: usize = 17;

/// The `tooltape` binary of the profile this bench was built in: `CARGO_BIN_EXE_tooltape` when
/// cargo sets it, else next to the `deps/` folder holding this executable.
fn binary() -> Option<PathBuf> {
    if let Some(p) = option_env!("CARGO_BIN_EXE_tooltape") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let dir = if dir.ends_with("deps") {
        dir.parent()?
    } else {
        dir
    };
    let bin = dir.join(format!("tooltape{}", std::env::consts::EXE_SUFFIX));
    bin.is_file().then_some(bin)
}

pub fn section(report: &mut Report) {
    report.section("tooltape parse as a whole process (openai-chat stream)");
    let Some(bin) = binary() else {
        report.note("no tooltape binary beside the bench; `cargo build --release` first");
        report.missed += 1;
        return;
    };
    let body = openai_chat::synthetic_stream(CALLS, FRAGMENT);
    let file =
        std::env::temp_dir().join(format!("tooltape-bench-parse-{}.sse", std::process::id()));
    if let Err(e) = std::fs::write(&file, &body) {
        report.note(&format!("cannot write {}: {e}", file.display()));
        report.missed += 1;
        return;
    }
    let command = || {
        let mut c = Command::new(&bin);
        c.args(["parse", "--provider", "openai-chat", "--stream"])
            .arg(&file)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            // As a user runs it: without the bench's glibc settings (see allocator_note).
            .env_remove("GLIBC_TUNABLES");
        c
    };
    // One run with its output read: the figure only counts if every call came out.
    let calls = command()
        .stdout(Stdio::piped())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .and_then(|v| v["tool_calls"].as_array().map(Vec::len));
    report.note(&format!(
        "{} bytes, {CALLS} calls, arguments in {FRAGMENT}-char fragments; {} decoded by {}",
        body.len(),
        calls.map_or_else(|| "none".to_string(), |n| n.to_string()),
        bin.display()
    ));
    let mut best = Duration::MAX;
    let started = Instant::now();
    let mut runs = 0;
    while runs < 5 || (started.elapsed() < Duration::from_secs(3) && runs < 40) {
        let t = Instant::now();
        let ok = command()
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let d = t.elapsed();
        if !ok {
            best = Duration::MAX;
            break;
        }
        best = best.min(d);
        runs += 1;
    }
    let _ = std::fs::remove_file(&file);
    let rate = if best == Duration::MAX {
        0.0
    } else {
        mb_per_s(body.len(), best)
    };
    report.figure(
        "parse --provider openai-chat --stream, whole process",
        rate,
        "MB/s",
        Some((">= 300", rate >= 300.0 && calls == Some(CALLS))),
    );
}
