//! Client-library mode: the case suite run through an SDK or agent framework. tooltape is the
//! upstream (gateway mode's recording upstream, the simulator's core on loopback) and drives
//! the library through a driver, a small program in the library's language that speaks the
//! protocol of `protocol` (docs/clients/README.md). `profile` reads `clients/NAME.toml`;
//! `driver` owns a driver process; `run` runs a trial as named phases (upstream judged by
//! gateway mode's judge, what the caller got by `check`); `reference` is tooltape's own
//! driver and its mutants; `render` writes the matrix and `docs/clients/NAME.md`; `skeleton` is
//! the commented profile `tooltape init client` writes.

mod check;
mod driver;
mod profile;
mod protocol;
mod reference;
mod render;
mod run;
mod skeleton;

#[cfg(test)]
mod tests;

pub use check::assemble;
pub use driver::Spec;
pub use profile::{ClientProfile, ClientRoute, DriverTable, LoadedClient, load_client};
pub use protocol::{
    DriverCall, DriverChunk, DriverError, DriverMessage, DriverResult, DriverTool, DriverTrial,
    Next, finish_of,
};
pub use reference::{Mutant, drive};
pub use render::markdown;
pub use run::run_all;
pub use skeleton::skeleton;
