//! The trial engine: one road for every system under test. A trial (`trial`: case × route ×
//! choice × mode) runs as named phases (`phases`) over a [`Way`] — how it reaches the system and
//! how the answer comes back: `gateway::Http` over HTTP, `client::Driven` through a library's
//! driver — with the recording upstream (`upstream`) on the far side. `judge`, `check` and
//! `events` turn what went each way into findings (`finding`); a trial's `result` is its cell.
//! `run` runs every trial (workers, prompt groups, panics as broken trials), compares stream
//! and buffered trials, and applies known failures (`known`) last; `cause` and `reproduce` group
//! failures into root causes with reproducers; `lifecycle` is the one road from a [`System`] to
//! a run (install, start, sample memory, run, stop, clean up); `document` is the one output and
//! exit rule with the summary line; `profile` holds what profiles share.
//! Installs, shipped profiles, process groups, memory and releases are `crate::system`.

mod cause;
mod check;
mod document;
mod events;
mod finding;
mod handed;
pub(crate) mod judge;
mod known;
mod lifecycle;
mod phases;
pub(crate) mod profile;
mod reproduce;
mod result;
mod run;
pub(crate) mod system;
mod trial;
mod upstream;
mod way;

#[cfg(test)]
mod tests;

pub use cause::{CauseKey, CauseKind, CauseSide, normalize};
pub use check::assemble;
pub use document::{RunStatus, document, status, status_of, summary, summary_of};
pub use handed::{Handed, HandedCall, HandedChunk, HandedError, finish_of};
pub use judge::{CallerReply, CallerRequest, ReadExchange, Reading};
pub use known::{known_failure, stale_causes};
pub use lifecycle::{Run, RunOptions, SetUpError, run, run_on};
pub use profile::{Audit, Loaded, ProfileKnownFailure};
pub use reproduce::{Reproducer, RootCause, causes};
pub use result::{Cell, RequestTiming, TrialResult};
pub use system::{Process, ProfileTable, Started, System, install_release};
pub use trial::{Route, RoutedTrial, RoutedTrialId, SystemKind, cases_of, trials};
pub use upstream::{Exchange, Upstream};
pub use way::{Kept, NotExpressible, PromptWatch, RoundAnswer, RoundStep, TrialCtx, Way};

pub(crate) use check::{McpCall, broken, call_problem, mcp_kept};
pub(crate) use finding::{Finding, FindingKind, Side};
pub(crate) use profile::read_profile;
pub(crate) use system::profile_table;
