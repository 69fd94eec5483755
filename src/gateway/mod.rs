//! Gateway mode: the case suite run black-box through an LLM gateway. tooltape plays both
//! ends: the recording upstream (`upstream`, the simulator's core on loopback) and the client
//! (the project's encoders, `suite`). Profiles (`profile`) say how to install, start and route a
//! gateway; `process` owns its lifecycle; `events` reads raw streams (requests are read by
//! `providers::decode_request`);
//! `check` turns differences into findings; `render` prints the matrix; `snapshot` writes one
//! trial as readable YAML.

mod check;
mod events;
mod process;
mod profile;
mod render;
mod snapshot;
mod suite;
mod upstream;

#[cfg(test)]
mod tests;

pub use process::{ensure_installed, start};
pub use profile::{LoadedProfile, Route, load_profile};
pub use render::{html, markdown, summary, terminal};
pub use snapshot::{snapshot, snapshot_name};
pub use suite::{Cell, TrialResult, run_all, trials};
pub use upstream::Upstream;
