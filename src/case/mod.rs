//! The case format, in the order a case is read: the file types (`file`: serde, with spans),
//! loading and validation (`load`: provider table, tool files, hash), expansion into trials and
//! the trial's identity (`trial`), discovery of `cases/` (`discover`), and the editor schema kept
//! equal to the types (`schema`).

mod discover;
mod file;
mod load;
pub mod schema;
mod trial;

#[cfg(test)]
mod tests;

pub use discover::{Discovery, discover};
pub use file::{Case, ChoiceSpec, KnownFailure, Mode};
pub(crate) use file::{Expectation, Round};
pub use load::{PROVIDERS_FILE, load_case, load_providers};
pub use trial::{Trial, TrialId, pattern_matches};

#[cfg(test)]
use file::Role;
