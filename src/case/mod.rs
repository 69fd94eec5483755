//! The case format, in the order a case is read: the file types (`file`: serde, with spans),
//! loading and validation (`load`: provider table, tool files, hash), expansion into trials and
//! the trial's identity (`trial`), where the cases come from (`corpus`: `cases/`, the embedded
//! corpus, a team's own folder), discovery (`discover`), and the editor schema kept equal to the
//! types (`schema`).

mod corpus;
mod discover;
mod file;
mod load;
mod option;
pub mod schema;
mod subject;
mod trial;

#[cfg(test)]
mod tests;

pub use corpus::{BUILT_IN, EMBEDDED, Exported, PROVIDERS_FILE, export};
pub use discover::{Discovery, discover, discover_with};
pub use file::{Case, ChoiceSpec, KnownFailure, Mode, ResultContent};
pub(crate) use file::{ContinueWith, Expectation, Round};
pub use load::{load_case, load_providers, providers_of};
pub use option::CaseOption;
pub use trial::{Trial, TrialId, pattern_matches};

#[cfg(test)]
use file::Role;
