//! The provider simulator: a pure core (`answer`) that answers requests like the real APIs, and a
//! loopback HTTP server (`Simulator`) around it. Cassettes it produces are marked synthetic.
//!
//! Layout: `exchange` (the request and answer values, the simulator's headers), `answer` (the
//! pure core's entry points), `route` (paths → API), `decide` (the deterministic model), `named`
//! (scenarios a request picks by name), `args` (arguments from a schema), one module per wire
//! format, `store` (the Responses conversations `previous_response_id` continues), `errors` (error envelopes; the 400 wording for invalid tools is `providers`'),
//! `faults` (injected faults), `wire` (ids, fragments, framing), `server` (the only module doing
//! IO: the simulator on a `loopback::Server`).
//!
//! Below it: the neutral model, the scenario, the schema checker, `Provider`, the hosted-tools
//! capability table, the FNV hash and the loopback server. Nothing here imports recording, replay
//! or the run layer.

mod answer;
mod anthropic;
mod args;
mod decide;
mod eager;
mod errors;
mod exchange;
mod faults;
mod foreign;
mod gemini;
mod named;
mod openai_chat;
mod openai_responses;
mod programmatic;
mod route;
mod server;
mod store;
mod text_protocol;
mod tool_changes;
mod tool_search;
mod wire;

#[cfg(test)]
mod tests;

pub(crate) use exchange::{SCENARIO_HEADER, SIMULATOR_HEADER};
pub use faults::{Fault, FaultKind};
pub use named::named_scenarios;

#[cfg(test)]
pub(crate) use answer::answer;
pub(crate) use answer::answer_kept;
#[cfg(test)]
use answer::answer_request;
/// Arguments the simulated model writes for a schema (also `tooltape mcp --cases`' calls).
pub(crate) use args::generate as generate_arguments;
#[cfg(test)]
use exchange::VERSION;
pub(crate) use exchange::{SimBody, SimRequest, SimResponse};
#[cfg(test)]
use faults::When;
pub use server::{SimConfig, Simulator};
pub(crate) use server::{sim_reply, sim_request};
pub(crate) use store::{Store, previous_id};
