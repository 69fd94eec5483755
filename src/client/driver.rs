//! One driver process: spawned in a process group of its own with piped stdin and stdout (its
//! stderr to a log), one JSON line each way, a deadline on every answer, a bound on every line,
//! and its group stopped when the run is done with it or it is stuck.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::protocol::{DriverResult, ResultLine};

/// The longest line a driver may write (a result with long arguments and many chunks fits).
const MAX_LINE: u64 = 16 * 1024 * 1024;
/// Lines a driver wrote that were not protocol lines (a library printing to stdout): the
/// first few are kept for the error a broken trial shows.
const MAX_NOISE: usize = 8;

/// How to start a driver: the filled-in command, its environment and working folder.
#[derive(Clone, Debug)]
pub struct Spec {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub log: PathBuf,
}

pub(crate) struct Driver {
    child: Child,
    /// Its process group (the leader's pid at spawn).
    pgid: Option<u32>,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    log: PathBuf,
    noise: Vec<String>,
}

impl Driver {
    pub(crate) fn spawn(spec: &Spec) -> Result<Driver, String> {
        let Some((program, args)) = spec.argv.split_first() else {
            return Err("the driver command is empty".into());
        };
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&spec.log)
            .map_err(|e| format!("cannot write {}: {e}", spec.log.display()))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .process_group(0);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        let mut child = crate::system::groups::spawn(|| cmd.spawn(), Child::id)
            .map_err(|e| format!("cannot start the driver `{program}`: {e}"))?;
        let pgid = child.id();
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or("the driver's stdout is not piped")?;
        Ok(Driver {
            child,
            pgid,
            stdin,
            stdout: BufReader::new(stdout),
            log: spec.log.clone(),
            noise: Vec::new(),
        })
    }

    /// Writes one protocol line.
    pub(crate) async fn send(&mut self, doc: &impl Serialize) -> Result<(), String> {
        let mut line = serde_json::to_vec(doc).map_err(|e| e.to_string())?;
        line.push(b'\n');
        let stdin = self.stdin.as_mut().ok_or("the driver's stdin is closed")?;
        let written = match stdin.write_all(&line).await {
            Ok(()) => stdin.flush().await,
            Err(e) => Err(e),
        };
        written.map_err(|e| format!("the driver stopped reading: {e}{}", self.why()))
    }

    /// Reads lines until a `{"result": …}` line, within `deadline`.
    pub(crate) async fn result(&mut self, deadline: Duration) -> Result<DriverResult, String> {
        match tokio::time::timeout(deadline, self.read_result()).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "the driver gave no result within {}s{}",
                deadline.as_secs(),
                self.why()
            )),
        }
    }

    async fn read_result(&mut self) -> Result<DriverResult, String> {
        loop {
            let mut line = String::new();
            let n = (&mut self.stdout)
                .take(MAX_LINE)
                .read_line(&mut line)
                .await
                .map_err(|e| format!("cannot read the driver's output: {e}"))?;
            if n == 0 {
                return Err(format!("the driver exited{}", self.why()));
            }
            if !line.ends_with('\n') && n as u64 >= MAX_LINE {
                return Err(format!(
                    "the driver wrote a line over {} MiB",
                    MAX_LINE >> 20
                ));
            }
            let text = line.trim();
            if text.starts_with("{\"result\"") || text.starts_with("{ \"result\"") {
                return serde_json::from_str::<ResultLine>(text)
                    .map(|r| r.result)
                    .map_err(|e| format!("the driver's result is not a protocol result: {e}"));
            }
            if !text.is_empty() && self.noise.len() < MAX_NOISE {
                self.noise.push(text.chars().take(200).collect());
            }
        }
    }

    /// Why the driver failed: its other stdout lines and its log's last lines.
    fn why(&self) -> String {
        let mut s = String::new();
        if !self.noise.is_empty() {
            s.push_str(&format!("; it also printed: {}", self.noise.join(" | ")));
        }
        let tail = crate::system::tail(&self.log, 12);
        if !tail.trim().is_empty() {
            s.push_str(&format!("; last lines of {}:\n{tail}", self.log.display()));
        }
        s
    }

    /// Closes stdin (a driver ends at end of input) and stops the group after a grace period.
    pub(crate) async fn finish(mut self) {
        drop(self.stdin.take());
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            self.kill();
        }
    }

    /// Stops the driver's process group (a library may have started children).
    pub(crate) fn kill(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for Driver {
    /// A driver dropped while it runs (a run cut short) has its group stopped; then the group
    /// is no longer this process's to signal.
    fn drop(&mut self) {
        if self.child.id().is_some() {
            self.kill();
        }
        if let Some(pgid) = self.pgid {
            crate::system::groups::stopped(pgid);
        }
    }
}
