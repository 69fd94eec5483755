//! Client-library mode: the case suite run through an SDK or agent framework, as the engine's
//! second way through. tooltape is the upstream (the engine's recording upstream) and drives the
//! library through a driver, a small program in the library's language that speaks the protocol
//! of `protocol` (docs/clients/README.md). `profile` reads `clients/NAME.toml`; `library` is a
//! library as the engine's system under test; `driver` owns a driver process; `way` is how a
//! trial reaches the library (both ends judged by the engine: what the library handed its caller
//! is `engine::Handed`); `reference` is tooltape's own driver and its mutants (its document,
//! `docs/clients/NAME.md`, is `report::suite`'s); `skeleton` is the commented profile
//! `tooltape init client` writes.

mod driver;
mod library;
mod profile;
mod protocol;
mod reference;
mod skeleton;
mod way;

#[cfg(test)]
mod tests;

pub use driver::Spec;
pub use library::Library;
pub use profile::{ClientProfile, ClientRoute, DriverTable, LoadedClient, load_client};
pub use protocol::{DriverMessage, DriverResult, DriverRoute, DriverTool, DriverTrial, Next};
pub use reference::{Mutant, drive};
pub use skeleton::{Language, skeleton};
pub use way::Driven;
