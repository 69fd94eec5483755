//! The checks of a trial: what the system sent upstream against what the caller sent (by
//! meaning), and what it answered the caller against what upstream answered. Each difference
//! is one `Finding` with a severity. `finding` holds the finding types; `view` reads a request
//! as the upstream checks compare it; `upstream`, `downstream` and `stream` are the checks of
//! each end and of the streamed answer's events; `reasoning` the reasoning state carried back
//! across rounds; `ids` the call ids each end's API accepts; `tools` those of tools a target
//! may not express (hosted search, names over its limit); `toolset` the tools in force each round;
//! `handed` what a library handed its caller; `custom` OpenAI custom tools kept or refused; `nontext` tool results given as parts; `context` the earlier context of a round continued by `previous_response_id`; `eager` Anthropic's
//! fine-grained tool streaming switch kept upstream; `tool_search` deferred tools, tool search and
//! namespaces kept both ways; `phase` the Responses message phase carried back; `compaction`
//! the compaction items carried back; `error_flag` a result's error flag kept; `mcp` what a library
//! did with the MCP server its tools came from.

mod compaction;
mod context;
mod custom;
mod downstream;
mod eager;
mod error_flag;
mod finding;
mod handed;
mod ids;
mod mcp;
mod nontext;
mod phase;
mod produced;
mod programmatic;
mod reasoning;
mod stream;
mod tool_search;
mod tools;
mod toolset;
mod upstream;
mod view;

pub(crate) use compaction::compaction_kept;
pub(crate) use context::{
    Continued, continued_by_id, held_upstream, repeated_upstream, response_context,
};
pub(crate) use custom::{custom_kept, custom_tools};
pub(crate) use downstream::{Inbound, broken, downstream, invalid_request, same_json};
pub(crate) use eager::eager_kept;
pub(crate) use error_flag::error_flags;
pub(crate) use finding::{Finding, FindingKind, Side};
pub use handed::assemble;
pub(crate) use handed::{handed, usage_framed};
pub(crate) use ids::{downstream_ids, linked, upstream_ids};
pub(crate) use mcp::{McpCall, mcp_kept};
pub(crate) use nontext::{non_text_results, non_text_results_as_text};
pub(crate) use phase::phase_kept;
pub(crate) use produced::call_problem;
pub(crate) use produced::{Asked, produced};
pub(crate) use programmatic::{callers_handed, program_kept, programmable_kept};
pub(crate) use reasoning::{foreign_reasoning, reasoning};
pub(crate) use stream::{stream, usage_framing};
pub(crate) use tool_search::{deferral_kept, search_kept};
pub(crate) use tools::{caller_tool_unsupported, hosted_kept, names_restored, names_within_limits};
pub(crate) use toolset::{text_protocol_tools, tool_set};
pub(crate) use upstream::{injected, results, strict_omitted, upstream};
pub(crate) use view::{RequestView, text_protocol_view};

#[cfg(test)]
pub(crate) mod tests;
