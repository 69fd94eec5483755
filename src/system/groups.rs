//! The process groups this tooltape started and has not stopped yet (a gateway, the drivers of
//! a library): registered when spawned, forgotten once stopped, and all stopped at once when a
//! signal ends tooltape before the run could stop them itself.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The groups started and not yet stopped; `stopping` once [`stop_started`] began: nothing is
/// started after that.
struct Groups {
    live: BTreeSet<u32>,
    stopping: bool,
}

static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    live: BTreeSet::new(),
    stopping: false,
});

fn groups() -> std::sync::MutexGuard<'static, Groups> {
    GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Spawns a process group's leader (`spawn`, a command with `process_group(0)`) and records
/// its group (`pgid` of what was spawned) under one lock, so that a signal's stop cannot fall
/// between the two and miss it. Once a stop began, nothing more is spawned.
pub(crate) fn spawn<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    pgid: impl FnOnce(&T) -> Option<u32>,
) -> std::io::Result<T> {
    let mut g = groups();
    if g.stopping {
        return Err(std::io::Error::other("tooltape is stopping"));
    }
    let child = spawn()?;
    if let Some(p) = pgid(&child) {
        g.live.insert(p);
    }
    Ok(child)
}

/// `pgid` was stopped (or its leader reaped): never signal that id again.
pub(crate) fn stopped(pgid: u32) {
    groups().live.remove(&pgid);
}

/// Sends `sig` (`-TERM`, `-KILL`, `-0`) to the process group `pgid`: whether it was delivered.
fn signal(pgid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([sig, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the group's leader (pid `pgid`, a child of this process) is still running: not gone
/// and not a zombie waiting to be reaped. Without `/proc`, whether the group takes signals.
fn leader_runs(pgid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pgid}/stat")) {
        // The state follows the command name's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) if std::path::Path::new("/proc/self/stat").exists() => false,
        Err(_) => signal(pgid, "-0"),
    }
}

/// Stops every process group this process started and has not stopped, as a run's end does:
/// TERM, then KILL of each group once its leader is gone or `grace` has passed. Nothing is
/// spawned from now on. Only the groups this process spawned are signalled.
pub fn stop_started(grace: Duration) {
    let live: Vec<u32> = {
        let mut g = groups();
        g.stopping = true;
        std::mem::take(&mut g.live).into_iter().collect()
    };
    for &pgid in &live {
        signal(pgid, "-TERM");
    }
    let deadline = Instant::now() + grace;
    let mut waiting = live.clone();
    while !waiting.is_empty() && Instant::now() < deadline {
        waiting.retain(|&p| leader_runs(p));
        std::thread::sleep(Duration::from_millis(50));
    }
    // The leader is gone (or would not go): no process of the group outlives it.
    for &pgid in &live {
        signal(pgid, "-KILL");
    }
}

#[cfg(test)]
mod tests;
