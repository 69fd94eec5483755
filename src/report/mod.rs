//! `tooltape report`: the conformance matrix of a replay run. Rows are case × tool_choice ×
//! mode, columns providers; each cell says how the trial stands and where its cassette came
//! from, and stream ↔ buffered pairs are checked for parity. Building the matrix is pure
//! (`matrix.rs`); the renderers live in `text.rs` and `html.rs`. A gateway or client suite's
//! documents and tables are `suite`.

pub mod html;
mod matrix;
pub mod suite;
pub mod text;

pub use matrix::{Parity, ReplayEntry, ReplayMatrix, Status, build, matrix, parity, summary};
