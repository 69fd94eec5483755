//! SIGINT and SIGTERM during a run: tooltape stops the process groups it started (the gateway,
//! the library's drivers) as a run's end does, then exits 130 or 143. Without this the default
//! action ends tooltape alone and leaves them running: they sit in process groups of their own,
//! which a terminal's Ctrl-C does not reach.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};

use super::exit::{self, CommandResult};

/// How long a started group has after TERM before it is killed.
const GRACE: Duration = Duration::from_secs(5);

/// A signal came: the process ends with its code once what it started is stopped.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Runs `command` (a run that starts processes) with [`stop_on_signals`]. When a signal came,
/// the signal's thread ends the process: see [`wait_if_stopping`].
pub fn stopping_on_signals(command: impl FnOnce() -> CommandResult) -> CommandResult {
    stop_on_signals();
    command()
}

/// Returns unless a signal came; then waits for the signal's thread to end the process (the
/// command may have returned early, its gateway or drivers stopped under it). Called once the
/// command's result is printed, before the process exits with it.
pub fn wait_if_stopping() {
    if STOPPING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// From now on, SIGINT and SIGTERM stop what this tooltape started and end it with 128 + the
/// signal's number. The signals are watched on a thread of their own, so that a busy runtime
/// cannot delay the stop. Without signal handling (none can be installed) the defaults stay.
fn stop_on_signals() {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return;
    };
    // Installed before this returns: a signal from here on is ours.
    let installed = {
        let _in = rt.enter();
        signal(SignalKind::interrupt()).and_then(|i| Ok((i, signal(SignalKind::terminate())?)))
    };
    let Ok((mut interrupt, mut terminate)) = installed else {
        return;
    };
    std::thread::spawn(move || {
        let code = rt.block_on(async {
            tokio::select! {
                _ = interrupt.recv() => exit::INTERRUPTED,
                _ = terminate.recv() => exit::TERMINATED,
            }
        });
        STOPPING.store(true, Ordering::SeqCst);
        eprintln!(
            "tooltape: {}: stopping the processes it started",
            if code == exit::INTERRUPTED {
                "interrupted"
            } else {
                "terminated"
            }
        );
        tooltape::system::stop_started(GRACE);
        std::process::exit(code);
    });
}
