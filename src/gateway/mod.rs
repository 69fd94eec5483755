//! Gateway mode: the case suite run black-box through an LLM gateway. tooltape plays both
//! ends: the recording upstream (`upstream`, the simulator's core on loopback) and the client.
//! `suite` expands cases into trials and holds their results; `run` runs a trial as named phases
//! around `run::exchange`; `judge` and `check` turn differences into findings; `events` reads
//! raw streams (requests are read by `providers::decode_request`). Profiles (`profile`) say how
//! to install, start and route a gateway; `process` owns its lifecycle; `render` prints the
//! matrix; `snapshot` writes one trial as readable YAML; `compare` puts several gateways' runs
//! side by side (timing paired per request, memory from `memory`). `cause` groups a run's
//! failures into root causes; `reproduce` writes each as a reproducer and an issue; `skeleton`
//! is the commented profile `tooltape init gateway` writes.

mod cause;
mod check;
mod compare;
mod events;
pub(crate) mod judge;
mod memory;
mod process;
mod profile;
mod render;
mod reproduce;
mod run;
mod skeleton;
mod snapshot;
mod suite;
mod upstream;

#[cfg(test)]
mod tests;

pub use cause::{CauseKey, normalize};
pub use compare::{
    BEGIN as COMPARE_BEGIN, CompareMeta, CompareRow, END as COMPARE_END, GatewayRun, common_routes,
    markdown as compare_markdown, percentile, replace_region, rewrite_region, row as compare_row,
    terminal as compare_terminal, version,
};
pub use memory::{PeakSampler, machine_note};
pub(crate) use process::tail;
pub use process::{ensure_installed, install_into, start};

pub(crate) use check::{Finding, FindingKind, Side, broken};
pub(crate) use profile::read_profile;
pub use profile::{
    Audit, Install, KnownEntry, LoadedProfile, Route, fill, install_cache, load_profile,
};
pub use render::{html, junit, markdown, summary, terminal};
pub use reproduce::{
    RootCause, causes, markdown as causes_markdown, report_bug, terminal as causes_terminal,
};
pub use run::run_all;
pub(crate) use run::{Slot, in_order};
pub use skeleton::{DEFAULT_UPSTREAM, base_urls, skeleton};
pub use snapshot::{snapshot, snapshot_name};
pub(crate) use suite::apply_known_failure;
pub use suite::{Cell, GatewayTrial, RequestTiming, TrialResult, cases_of, stale_causes, trials};
pub use upstream::Upstream;
