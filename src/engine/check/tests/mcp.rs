//! The MCP check, from the server's record: each finding (tools not listed, a result that did
//! not come from the server, other arguments than the model's, an extra call, a network `$ref`
//! fetched) alone, and silence on the faithful record.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{FindingKind, McpCall, Side, mcp_kept};
use crate::mcp::{Seen, SeenCall};
use crate::model::Severity;

fn seen(calls: &[(&str, serde_json::Value)]) -> Seen {
    Seen {
        listed: 1,
        calls: (calls.iter())
            .map(|(tool, arguments)| SeenCall {
                tool: (*tool).into(),
                arguments: arguments.clone(),
                answered: true,
            })
            .collect(),
        fetched: Vec::new(),
    }
}

#[track_caller]
fn finds(found: &[crate::engine::check::Finding], gist: &str) {
    one(
        found,
        FindingKind::Mcp,
        Side::Upstream,
        Severity::Breaking,
        gist,
    );
}

#[test]
fn the_faithful_record_is_silent() {
    let args = json!({"city": "Oslo", "days": null});
    let model = json!("{\"city\":\"Oslo\",\"days\":null}");
    let expected = [McpCall {
        tool: "get_forecast",
        arguments: &model,
    }];
    silent(&mcp_kept(&seen(&[("get_forecast", args)]), true, &expected));
    // No call needed, none made; no tools asked, none listed.
    silent(&mcp_kept(&seen(&[]), true, &[]));
    silent(&mcp_kept(&Seen::default(), false, &[]));
}

#[test]
fn each_departure_from_the_server_is_one_finding() {
    let model = json!({"city": "Oslo", "days": null});
    let expected = [McpCall {
        tool: "get_forecast",
        arguments: &model,
    }];
    finds(
        &mcp_kept(&Seen::default(), true, &[]),
        "not listed from the MCP server",
    );
    finds(
        &mcp_kept(&seen(&[]), true, &expected),
        "did not come from the MCP server",
    );
    let dropped = seen(&[("get_forecast", json!({"city": "Oslo"}))]);
    finds(
        &mcp_kept(&dropped, true, &expected),
        "with other arguments than the model's",
    );
    let extra = seen(&[("get_weather", json!({}))]);
    finds(&mcp_kept(&extra, true, &[]), "though no result");
    let mut fetched = seen(&[]);
    fetched.fetched.push("schemas/units.json".into());
    finds(&mcp_kept(&fetched, true, &[]), "was fetched");
}
