//! The one process-wide tokio runtime: the binary's commands (but `tooltape proxy`, on one thread
//! of its own), the replay harness and the test binaries block on it (each test thread calls
//! `block_on`).

use std::sync::OnceLock;

/// The shared multi-threaded runtime (two workers), started on first use.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("cannot start the tokio runtime: {e}"))
    })
}
