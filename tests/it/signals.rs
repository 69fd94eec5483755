//! SIGTERM or SIGINT to a running `tooltape gateway` or `tooltape client`: tooltape stops the
//! process group it started (the gateway, the driver), as a run's end does, and exits 128 + the
//! signal's number. The stand-ins write their pids and sleep; only those pids and tooltape's
//! own are signalled or looked at.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::scratch::{Scratch, bin, repo};

/// A shell command (the system's group leader) that starts a sleeping child, writes both pids
/// to `pids` and waits.
fn sleeper(pids: &Path) -> String {
    format!("sleep 600 & echo $$ $! > {}; wait", pids.display())
}

/// `tooltape ARGS` in `dir` (its work folders there).
fn tooltape(dir: &Path, args: &[&str]) -> Child {
    Command::new(bin())
        .args(args)
        .current_dir(repo())
        .env("TMPDIR", dir)
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tooltape binary runs")
}

/// The pids the stand-in wrote, once it has (tooltape stopped if it never does).
fn pids(file: &Path, tooltape: &mut Child) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let pids: Vec<u32> = text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() == 2 && text.ends_with('\n') {
            return pids;
        }
        if Instant::now() > deadline || tooltape.try_wait().unwrap().is_some() {
            let _ = tooltape.kill();
            let mut stderr = String::new();
            if let Some(mut e) = tooltape.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
            }
            panic!("the stand-in never wrote its pids; tooltape: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` runs (neither gone nor a zombie waiting for its parent).
fn runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) if Path::new("/proc/self/stat").exists() => false,
        Err(_) => Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
    }
}

/// The stand-in's pids: whichever still runs when the test ends (it failed) is killed, by pid.
struct StandIn(Vec<u32>);

impl Drop for StandIn {
    fn drop(&mut self) {
        for p in self.0.iter().filter(|&&p| runs(p)) {
            let _ = Command::new("kill")
                .args(["-KILL", &p.to_string()])
                .status();
        }
    }
}

/// Sends `signal` to tooltape, then: it exits with `code` within a few seconds, and neither
/// stand-in pid runs after it.
fn signalled_stops_the_group(mut child: Child, pids_file: &Path, signal: &str, code: i32) {
    let pids = pids(pids_file, &mut child);
    let _cleanup = StandIn(pids.clone());
    assert!(pids.iter().all(|&p| runs(p)), "the stand-in is not running");
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("tooltape did not exit after {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| runs(p)) {
        assert!(
            Instant::now() < deadline,
            "still running after tooltape exited: {:?}; tooltape said: {stderr}",
            pids.iter().filter(|&&p| runs(p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A gateway that never gets ready: tooltape is waiting for it when SIGTERM comes.
#[test]
fn sigterm_stops_the_gateway_tooltape_started() {
    let dir = Scratch::new("signals-gateway");
    let pids = dir.join("pids");
    let profile = format!(
        "description = \"a stand-in gateway that sleeps\"\n\
         [start]\ncommand = [\"sh\", \"-c\", {:?}]\nready = \"/health\"\nready_timeout_secs = 120\n\
         [[routes]]\ninbound = \"chat\"\nupstream = \"openai-chat\"\nmodel = \"gpt-4.1-mini\"\n",
        sleeper(&pids)
    );
    let path = dir.join("sleeps.toml");
    std::fs::write(&path, profile).unwrap();
    let child = tooltape(&dir, &["gateway", path.to_str().unwrap(), "weather"]);
    signalled_stops_the_group(child, &pids, "-TERM", 143);
}

/// A driver that never answers: tooltape waits for its result when SIGINT comes.
#[test]
fn sigint_stops_the_driver_tooltape_started() {
    let dir = Scratch::new("signals-client");
    let pids = dir.join("pids");
    let profile = format!(
        "description = \"a stand-in driver that sleeps\"\n\
         [driver]\ncommand = [\"sh\", \"-c\", {:?}]\ntimeout_secs = 120\n\
         [[routes]]\napi = \"openai-chat\"\nmodel = \"m\"\n",
        sleeper(&pids)
    );
    let path = dir.join("sleeps.toml");
    std::fs::write(&path, profile).unwrap();
    let child = tooltape(
        &dir,
        &[
            "client",
            path.to_str().unwrap(),
            "weather",
            "--concurrency",
            "1",
        ],
    );
    signalled_stops_the_group(child, &pids, "-INT", 130);
}
