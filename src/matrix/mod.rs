//! `tooltape matrix`: the whole field in one document — a set of gateway and client suites run
//! on the engine's one road (`run`), split deterministically over CI machines (`shard`), the
//! parts joined again (`merge`), two runs compared root cause by root cause (`diff`), and the
//! field rendered as one page (`page`). The document (`document`) is the one JSON shape all of
//! them read and write.

mod diff;
mod document;
mod merge;
mod page;
mod run;
mod shard;

#[cfg(test)]
mod tests;

pub use diff::{CauseLine, Diff, RouteChange, SystemDiff, diff};
pub use document::{Document, Planned, SystemEntry, TrialCell, read};
pub use merge::merge;
pub use page::{html, markdown};
pub use run::{Request, Suite, SystemName, run, shipped};
pub use shard::{Piece, Shard, ShardInfo, plan};
