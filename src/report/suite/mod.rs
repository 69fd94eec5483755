//! A gateway or client suite's results as text, built from the engine's data: the trial table
//! (terminal, HTML, JUnit XML; `table`), the root causes (`causes`: the `--findings` list, a
//! document's leading section, `--report-bug`'s issue), the gateway and client documents
//! (`gateway`, `client`, `server`), a trial's YAML snapshot (`snapshot`) and one suite across releases
//! (`releases`).

mod causes;
mod client;
mod gateway;
mod releases;
mod server;
mod snapshot;
mod table;

pub use causes::{markdown as causes_markdown, report_bug, terminal as causes_terminal};
pub use client::client_markdown;
pub use gateway::gateway_markdown;
pub use server::{ServerRun, server_markdown};
pub use snapshot::snapshot;
pub use table::{html, junit, terminal};

#[cfg(test)]
mod tests;
