//! The judgements of one trial, one file a phase, each a pure function of what the caller
//! asked (`caller`), what went upstream and what came back, read once per exchange (`read`):
//! upstream (`upstream`, by meaning), downstream (`downstream`, against what upstream
//! answered), and each follow-up round (`round`); `words` clips and numbers their messages.
//! The cell a trial's findings make is `result::Cell::of`.

mod caller;
mod downstream;
mod produced;
mod read;
mod round;
mod upstream;
mod words;

#[cfg(test)]
pub(crate) use caller::client_fault;
pub(crate) use caller::unsent;
pub use caller::{CallerReply, CallerRequest, Reading};
pub(crate) use downstream::{answered, continues, handed};
pub(crate) use produced::{produced, produced_round};
pub use read::ReadExchange;
pub(crate) use round::{Round, foreign_reasoning, round};
pub(crate) use upstream::upstream;

#[cfg(test)]
mod tests;
