//! MCP servers' tools against every target: `tooltape mcp` connects as an MCP client
//! ([`list_tools`], stdio or Streamable HTTP, bounded), judges each tool per target with the
//! project's own encoders ([`judge`]: as written, lossless, lossy, refused) and renders the
//! report ([`Report`]; terminal, Markdown, JSON, JUnit), and writes the tools as case files
//! ([`case_files`]).

mod cases;
mod connect;
mod render;
mod verdict;

#[cfg(test)]
mod tests;

pub use cases::{CaseFile, case_files, valid_against};
pub use connect::{
    ConnectError, Limits, ListedTool, Listing, Server, ServerInfo, list_tools, read_tools_page,
};
pub use render::{Report, ToolReport, json, junit, markdown, printable, terminal};
pub use verdict::{OPENAI_DESCRIPTION_MAX, Target, ToolVerdict, judge, judge_all};
