//! The MCP check (client mode's MCP routes): what a library did with the MCP server its tools
//! came from, from the server's own record. The tools must be listed from it; each result sent
//! back must come from one `tools/call` of the tool the model called, with the model's
//! arguments (by meaning); no tool is called that the model did not call; no network `$ref` of
//! a tool's schema is fetched (the MCP conformance suite's canary: a schema is data, and a
//! client that dereferences it reaches wherever the server points it).

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side, clip};
use crate::mcp::Seen;
use crate::model::Severity;

/// A call whose result the library sent back: the tool and the arguments the model gave it.
pub(crate) struct McpCall<'a> {
    pub tool: &'a str,
    pub arguments: &'a Value,
}

fn finding(message: String) -> Finding {
    Finding::new(
        FindingKind::Mcp,
        Severity::Breaking,
        Side::Upstream,
        message,
    )
}

/// Arguments by meaning: a JSON text read as its value, an empty one as `{}`.
fn value_of(arguments: &Value) -> Value {
    match arguments {
        Value::String(t) if t.trim().is_empty() => Value::Object(Default::default()),
        Value::String(t) => serde_json::from_str(t).unwrap_or_else(|_| arguments.clone()),
        Value::Null => Value::Object(Default::default()),
        other => other.clone(),
    }
}

/// The findings for a trial whose caller has tools (`sent_tools`: the library must have listed
/// them) and whose library sent results for `expected` calls, against what the server saw.
pub(crate) fn mcp_kept(seen: &Seen, sent_tools: bool, expected: &[McpCall<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    if sent_tools && seen.listed == 0 {
        out.push(finding(
            "the tools sent upstream were not listed from the MCP server (no tools/list reached it)"
                .into(),
        ));
    }
    for path in &seen.fetched {
        out.push(finding(format!(
            "the network `$ref` {} of a tool's schema was fetched (a client must never dereference a schema's remote reference)",
            clip(path)
        )));
    }
    let mut used = vec![false; seen.calls.len()];
    for e in expected {
        let want = value_of(e.arguments);
        let same_tool = |j: usize| !used[j] && seen.calls[j].tool == e.tool;
        let exact =
            (0..seen.calls.len()).find(|&j| same_tool(j) && seen.calls[j].arguments == want);
        match exact.or_else(|| (0..seen.calls.len()).find(|&j| same_tool(j))) {
            Some(j) => {
                used[j] = true;
                if seen.calls[j].arguments != want {
                    out.push(finding(format!(
                        "`{}` was called on the MCP server with other arguments than the model's: {} → {}",
                        e.tool,
                        clip(&want.to_string()),
                        clip(&seen.calls[j].arguments.to_string())
                    )));
                }
            }
            None => out.push(finding(format!(
                "the result sent for `{}` did not come from the MCP server (no tools/call of it reached the server)",
                e.tool
            ))),
        }
    }
    for (j, c) in seen.calls.iter().enumerate() {
        if !used[j] {
            out.push(finding(format!(
                "`{}` was called on the MCP server though no result of the model's calls needed it (a call the model did not make, or one made twice)",
                c.tool
            )));
        }
    }
    out
}
