//! The gateway's lifecycle: install when missing, start on loopback in its own process group,
//! wait for readiness, stop exactly that process group; the log tail on any failure to start.

use std::fs::File;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::profile::{LoadedGateway, Start};
use crate::engine::{Process, Started};
use crate::system::{fill, tail};

/// A gateway this process started; dropping it stops its process group.
pub struct Running {
    child: Child,
    pub base_url: String,
    pub log: PathBuf,
    pub started_in: Duration,
}

/// A free port on 127.0.0.1 (bound then released).
pub(super) fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// What starting a process on loopback takes from its profile: a gateway's, or a model server's
/// (`server::profile`), which adds placeholders of its own (`{{model}}`).
pub(crate) struct Launch<'a> {
    pub name: &'a str,
    /// The profile file: its folder is `{{gateways}}`.
    pub path: &'a Path,
    pub install_dir: PathBuf,
    pub start: &'a Start,
    /// More `{{key}}` values for the command, the config and the environment.
    pub extra: Vec<(&'static str, String)>,
    /// The log's file name in the run's work folder.
    pub log: &'static str,
}

/// Writes the config, spawns the command in a new process group with the profile's
/// environment, and waits for `GET ready` to answer 2xx. On failure the group is stopped and
/// the error carries the log tail.
pub async fn start(
    profile: &LoadedGateway,
    upstream: &str,
    work: &Path,
) -> Result<Running, String> {
    let Some(start) = &profile.profile.start else {
        return Err(format!(
            "{}: no [start] table: pass --url URL of a running gateway",
            profile.path.display()
        ));
    };
    let launch = Launch {
        name: &profile.name,
        path: &profile.path,
        install_dir: profile.install_dir(),
        start,
        extra: Vec::new(),
        log: "gateway.log",
    };
    self::launch(&launch, upstream, work).await
}

/// [`start`] for any profile that starts a process (see [`Launch`]).
pub(crate) async fn launch(l: &Launch<'_>, upstream: &str, work: &Path) -> Result<Running, String> {
    let start = l.start;
    let port = free_port()?.to_string();
    let dir = l.install_dir.to_string_lossy().into_owned();
    let work_s = work.to_string_lossy().into_owned();
    // Absolute: the gateway runs in `work`.
    let gateways = l
        .path
        .parent()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map_or_else(|| ".".into(), |p| p.to_string_lossy().into_owned());
    let shipped = crate::system::shipped_dir().to_string_lossy().into_owned();
    let config = work.join(&start.config_name);
    let config_s = config.to_string_lossy().into_owned();
    // The running `tooltape` binary, for profiles that start tooltape itself (`tooltape proxy`).
    let me = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "tooltape".into());
    let mut values = vec![
        ("tooltape", me.as_str()),
        ("dir", dir.as_str()),
        ("port", port.as_str()),
        ("config", config_s.as_str()),
        ("upstream", upstream),
        ("key", "sk-tooltape-upstream"),
        ("work", work_s.as_str()),
        ("gateways", gateways.as_str()),
        ("shipped", shipped.as_str()),
    ];
    values.extend(l.extra.iter().map(|(k, v)| (*k, v.as_str())));
    if let Some(t) = &start.config {
        if let Some(parent) = config.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&config, fill(t, &values))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    }
    let argv: Vec<String> = start.command.iter().map(|a| fill(a, &values)).collect();
    let Some((program, args)) = argv.split_first() else {
        return Err(format!("{}: [start] command is empty", l.path.display()));
    };
    let log = work.join(l.log);
    let out = File::create(&log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    for (k, v) in &start.env {
        cmd.env(k, fill(v, &values));
    }
    let t0 = Instant::now();
    let child = crate::system::groups::spawn(|| cmd.spawn(), |c| Some(c.id()))
        .map_err(|e| format!("cannot start `{program}`: {e} (is {} installed?)", l.name))?;
    let mut running = Running {
        child,
        base_url: format!("http://127.0.0.1:{port}"),
        log,
        started_in: Duration::ZERO,
    };
    let client = crate::run::client(Duration::from_secs(2));
    let deadline = t0 + Duration::from_secs(start.ready_timeout_secs);
    if let Some(prefix) = &start.url_line {
        running.base_url = reported_url(&mut running, prefix, deadline, l.name).await?;
    }
    // A gateway that reports its URL once it serves needs no readiness path.
    let Some(ready) = &start.ready else {
        running.started_in = t0.elapsed();
        return Ok(running);
    };
    let url = format!("{}{ready}", running.base_url);
    loop {
        if let Ok(Some(status)) = running.child.try_wait() {
            return Err(format!(
                "{} exited during startup ({status}). Last lines of {}:\n{}",
                l.name,
                running.log.display(),
                tail(&running.log, 40)
            ));
        }
        if let Ok(r) = client.get(&url).send().await
            && r.status().is_success()
        {
            break;
        }
        if Instant::now() > deadline {
            let why = format!(
                "{} not ready at {url} after {}s. Last lines of {}:\n{}",
                l.name,
                start.ready_timeout_secs,
                running.log.display(),
                tail(&running.log, 40)
            );
            return Err(why);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    running.started_in = t0.elapsed();
    Ok(running)
}

/// The base URL a gateway reports on a line of its output starting with `prefix`, waited for
/// until `deadline` (or until the gateway exits).
async fn reported_url(
    running: &mut Running,
    prefix: &str,
    deadline: Instant,
    name: &str,
) -> Result<String, String> {
    loop {
        let text = std::fs::read_to_string(&running.log).unwrap_or_default();
        if let Some(url) = text.lines().find_map(|l| l.strip_prefix(prefix)) {
            return Ok(url.trim().trim_end_matches('/').to_string());
        }
        if let Ok(Some(status)) = running.child.try_wait() {
            return Err(format!(
                "{name} exited during startup ({status}) before reporting its URL (a line starting `{prefix}`). Last lines of {}:\n{}",
                running.log.display(),
                tail(&running.log, 40)
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{name} reported no URL (a line starting `{prefix}`) in time. Last lines of {}:\n{}",
                running.log.display(),
                tail(&running.log, 40)
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Process for Running {
    /// The gateway's process group (the leader was spawned with `process_group(0)`).
    fn pgid(&self) -> u32 {
        self.child.id()
    }

    /// How the gateway's process ended, when it has (a gateway that dies mid-run breaks every
    /// trial after that; the runner says so instead of leaving only connection errors).
    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// The gateway's log tail (shown on failures).
    fn log_tail(&self, lines: usize) -> String {
        tail(&self.log, lines)
    }

    fn started_in(&self) -> Duration {
        self.started_in
    }

    /// Stops the process group this process started: TERM, then KILL after 5 s.
    fn stop(&mut self) {
        self.stop_group();
        crate::system::groups::stopped(self.child.id());
    }
}

impl Running {
    /// The system started: its way (made from the base URL) with this process, and the note
    /// `NAME ready at URL in Ns{detail} (log …)`.
    pub(crate) fn started<W>(
        self,
        name: &str,
        detail: &str,
        way: impl FnOnce(&str) -> W,
    ) -> Started<W> {
        let note = format!(
            "{name} ready at {} in {:.1}s{detail} (log {})",
            self.base_url,
            self.started_in.as_secs_f64(),
            self.log.display()
        );
        Started {
            way: way(&self.base_url),
            process: Some(Box::new(self)),
            note: Some(note),
        }
    }

    /// TERM to the group, KILL once the leader is gone or after 5 s.
    fn stop_group(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                // The leader is gone; make sure no child of the group outlives it.
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &group])
                    .stderr(Stdio::null())
                    .status();
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}
