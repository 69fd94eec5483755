//! Deferred tools, tool search and namespaces, by finding kind (`FindingKind::ToolSearch`):
//! upstream, a deferred tool sent loaded or dropped, the search dropped, a namespace lost;
//! downstream, the upstream's search handed to the client as its own call or dropped, a call's
//! namespace lost. What is kept is silent.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{FindingKind, Side, deferral_kept, search_kept};
use crate::model::{
    ChatRequest, HostedTool, Outcome, Severity, Tool, ToolCall, ToolSearchActivity,
};

fn request(deferred: bool, search: bool, namespace: Option<&str>) -> ChatRequest {
    let mut tool = Tool::function("find_flights", None, json!({"type": "object"}));
    tool.defer_loading = deferred;
    tool.namespace = namespace.map(str::to_string);
    let mut req = ChatRequest::new("m");
    req.tools = vec![
        Tool::function("get_weather", None, json!({"type": "object"})),
        tool,
    ];
    if search {
        req.hosted = vec![HostedTool::ToolSearch {
            variant: "tool_search_tool_regex_20251119".into(),
        }];
    }
    req
}

#[track_caller]
fn upstream_lost(found: &[crate::engine::check::Finding], gist: &str) {
    one(
        found,
        FindingKind::ToolSearch,
        Side::Upstream,
        Severity::Breaking,
        gist,
    );
}

#[track_caller]
fn downstream_lost(found: &[crate::engine::check::Finding], gist: &str) {
    one(
        found,
        FindingKind::ToolSearch,
        Side::Downstream,
        Severity::Breaking,
        gist,
    );
}

#[test]
fn upstream_keeps_the_deferral_the_search_and_the_namespace() {
    let asked = request(true, true, None);
    silent(&deferral_kept(&asked, &asked));
    upstream_lost(
        &deferral_kept(&asked, &request(false, true, None)),
        "sent loaded",
    );
    upstream_lost(
        &deferral_kept(&asked, &request(true, false, None)),
        "tool search",
    );
    let mut dropped = asked.clone();
    dropped.tools.pop();
    upstream_lost(&deferral_kept(&asked, &dropped), "dropped from the request");
    let spaced = request(false, false, Some("crm"));
    silent(&deferral_kept(&spaced, &spaced));
    upstream_lost(
        &deferral_kept(&spaced, &request(false, false, None)),
        "namespace",
    );
}

fn answer(search: bool, calls: &[(&str, Option<&str>)]) -> Outcome {
    Outcome {
        tool_calls: (calls.iter().enumerate())
            .map(|(i, (name, space))| {
                let mut c = ToolCall::unsigned(format!("c{i}"), *name, json!({}));
                c.namespace = space.map(str::to_string);
                c
            })
            .collect(),
        tool_search: search.then(|| ToolSearchActivity {
            searches: 1,
            loaded: vec!["find_flights".into()],
            tool: Some("tool_search_tool_regex".into()),
        }),
        ..Outcome::default()
    }
}

#[test]
fn downstream_keeps_the_search_as_server_activity_and_each_namespace() {
    let up = answer(true, &[("find_flights", Some("find_flights"))]);
    silent(&search_kept(&up, &up, true));
    let handed = answer(
        false,
        &[
            ("tool_search_tool_regex", None),
            ("find_flights", Some("find_flights")),
        ],
    );
    downstream_lost(&search_kept(&up, &handed, true), "its own call");
    downstream_lost(&search_kept(&up, &handed, false), "its own call");
    let dropped = answer(false, &[("find_flights", Some("find_flights"))]);
    downstream_lost(&search_kept(&up, &dropped, true), "dropped from the answer");
    // A library hands calls only: a search it does not make a call of is not judged.
    silent(&search_kept(&up, &dropped, false));
    let bare = answer(true, &[("find_flights", None)]);
    downstream_lost(&search_kept(&up, &bare, true), "without its namespace");
    silent(&search_kept(
        &answer(false, &[("get_weather", None)]),
        &bare,
        true,
    ));
}
