//! MCP servers' tools against every target: `tooltape mcp` connects as an MCP client
//! ([`list_tools`], stdio or Streamable HTTP, bounded), judges each tool per target with the
//! project's own encoders ([`judge`]: as written, lossless, lossy, refused) and renders the
//! report ([`Report`]; terminal, Markdown, JSON, JUnit), and writes the tools as case files
//! ([`case_files`]). The other side too: [`McpServer`], the MCP server client mode's MCP routes
//! take a case's tools and results from, and [`Session`], the reference driver's MCP client.

mod cases;
mod connect;
mod render;
mod serve;
mod session;
mod verdict;

#[cfg(test)]
mod tests;

pub use cases::{CaseFile, case_files, valid_against};
pub use connect::{
    ConnectError, Limits, ListedTool, Listing, Server, ServerInfo, list_tools, read_tools_page,
};
pub use render::{Report, ToolReport, json, junit, markdown, printable, terminal};
pub use serve::{
    Answer, McpServer, Opened, REMOTE_REF, Seen, SeenCall, call_result, served_schema,
};
pub use session::{Session, result_message};
pub use verdict::{OPENAI_DESCRIPTION_MAX, Target, ToolVerdict, judge, judge_all};
