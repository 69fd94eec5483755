//! The gateway checks: what the gateway sent upstream against what the client sent (by
//! meaning), and what it answered the client against what upstream answered. Each difference
//! is one `Finding` with a severity.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::events::StreamShape;
use crate::model::{
    ChatRequest, Finish, HostedTool, Message, Outcome, Provider, Severity, Tool, ToolChoice,
};

/// What the upstream checks compare, taken from a request decoded by the project's request
/// decoders (`providers::decode_request`): tools, the choice's meaning, the parallel switch,
/// hosted search, the calls of the conversation and the results that answer them.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct RequestView {
    pub tools: Vec<Tool>,
    /// `None`: omitted (the provider's default, auto).
    pub choice: Option<ToolChoice>,
    /// `Some(false)`: parallel calls switched off.
    pub parallel: Option<bool>,
    pub hosted_search: bool,
    /// `(call id, tool name)` of every tool call in the conversation.
    pub calls: Vec<(String, String)>,
    /// `(call id, tool name)` of every tool result.
    pub results: Vec<(String, String)>,
    /// The text of each tool result, in the order of `results` (empty when the wire's reader
    /// does not carry it, as for the text protocol's prose).
    pub result_texts: Vec<String>,
}

impl RequestView {
    pub(super) fn of(r: &ChatRequest) -> RequestView {
        let mut view = RequestView {
            tools: r.tools.clone(),
            choice: r.tool_choice.clone(),
            parallel: r.parallel_tool_calls,
            hosted_search: r
                .hosted
                .iter()
                .any(|h| matches!(h, HostedTool::WebSearch { .. })),
            ..RequestView::default()
        };
        for m in &r.messages {
            match m {
                Message::Assistant { tool_calls, .. } => view
                    .calls
                    .extend(tool_calls.iter().map(|c| (c.id.clone(), c.name.clone()))),
                Message::Tool {
                    call_id,
                    name,
                    content,
                    ..
                } => {
                    view.results.push((call_id.clone(), name.clone()));
                    view.result_texts.push(content.clone());
                }
                _ => {}
            }
        }
        view
    }
}

impl RequestView {
    /// The view with each tool's schema in one spelling of its meaning (see [`by_meaning`]).
    pub(super) fn by_meaning(mut self) -> RequestView {
        for t in &mut self.tools {
            let defs = t
                .parameters
                .get("$defs")
                .or_else(|| t.parameters.get("definitions"))
                .cloned()
                .unwrap_or(Value::Null);
            t.parameters = by_meaning(&t.parameters, &defs, 0);
        }
        self
    }
}

/// A schema with the spellings that change no constraint made one: local `$ref`s inlined (and
/// `$defs` dropped), a one-element `anyOf`/`oneOf` merged into its parent, a nullable type
/// (`["T", "null"]`, OpenAPI's `nullable`) read as `T`, and the annotations `$schema`, `$id`,
/// `$comment` dropped. Recursion stops at depth 32 (a self-referencing `$ref`).
fn by_meaning(v: &Value, defs: &Value, depth: usize) -> Value {
    let Value::Object(o) = v else {
        return match v {
            Value::Array(a) => Value::Array(a.iter().map(|x| by_meaning(x, defs, depth)).collect()),
            other => other.clone(),
        };
    };
    if depth > 32 {
        return v.clone();
    }
    if let Some(target) = o
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| {
            r.strip_prefix("#/$defs/")
                .or_else(|| r.strip_prefix("#/definitions/"))
        })
        .and_then(|name| defs.get(name))
    {
        let mut merged = target.as_object().cloned().unwrap_or_default();
        merged.extend(
            o.iter()
                .filter(|(k, _)| *k != "$ref")
                .map(|(k, x)| (k.clone(), x.clone())),
        );
        return by_meaning(&Value::Object(merged), defs, depth + 1);
    }
    let mut out = serde_json::Map::new();
    let mut merged_one = false;
    for (k, x) in o {
        match k.as_str() {
            "$defs" | "definitions" | "$schema" | "$id" | "$comment" | "nullable" => {}
            "anyOf" | "oneOf" if x.as_array().is_some_and(|a| a.len() == 1) => {
                if let Some(Value::Object(only)) = x.as_array().and_then(|a| a.first()) {
                    merged_one = true;
                    for (k2, x2) in only {
                        out.entry(k2.clone()).or_insert_with(|| x2.clone());
                    }
                }
            }
            "type" => {
                let types: Vec<&Value> = x
                    .as_array()
                    .map(|a| a.iter().filter(|t| t.as_str() != Some("null")).collect())
                    .unwrap_or_else(|| vec![x]);
                out.insert(
                    k.clone(),
                    match types.as_slice() {
                        [one] => (*one).clone(),
                        many => Value::Array(many.iter().map(|t| (*t).clone()).collect()),
                    },
                );
            }
            _ => {
                out.insert(k.clone(), by_meaning(x, defs, depth + 1));
            }
        }
    }
    // What a merged one-element anyOf brought in is read by meaning too.
    if merged_one {
        return by_meaning(&Value::Object(out), defs, depth + 1);
    }
    Value::Object(out)
}

/// The calls and results of a text-protocol request body (a Chat Completions body without
/// tools), read from its prose: each `<tool_call>{"name":…}</tool_call>` of an assistant message
/// and each `<tool_result name="…" call_id="…">` opening of a user message. Calls carry no id
/// on this wire, so results are linked by name: their ids are left empty, as for Gemini.
pub(super) fn text_protocol_view(body: &Value) -> RequestView {
    let mut view = RequestView::default();
    let messages = body.get("messages").and_then(Value::as_array);
    for m in messages.into_iter().flatten() {
        let Some(content) = m.get("content").and_then(Value::as_str) else {
            continue;
        };
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => view.calls.extend(
                tagged(content, "<tool_call>", "</tool_call>")
                    .filter_map(|json| serde_json::from_str::<Value>(json).ok())
                    .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                    .map(|name| (String::new(), name)),
            ),
            Some("user") => view.results.extend(
                content
                    .split("<tool_result ")
                    .skip(1)
                    .filter_map(|tag| xml_attr_value(tag, "name"))
                    .map(|name| (String::new(), name)),
            ),
            _ => {}
        }
    }
    view
}

/// The text between each `open` and the next `close` in `s`.
fn tagged<'a>(s: &'a str, open: &'a str, close: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    s.split(open)
        .skip(1)
        .filter_map(move |rest| rest.split_once(close).map(|(inner, _)| inner))
}

/// The value of attribute `key` of the opening tag `s` starts with (its attributes, up to `>`),
/// unescaped as the text protocol's encoder escapes values (`&amp;`, `&quot;`, `&lt;`): a value
/// ends at the next `"`, so a `>` inside one is read as text.
fn xml_attr_value(s: &str, key: &str) -> Option<String> {
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        let (k, after) = rest.split_once("=\"")?;
        if k.is_empty() || k.contains(['>', ' ', '"']) {
            return None;
        }
        let (raw, after) = after.split_once('"')?;
        if k == key {
            return Some(
                raw.replace("&lt;", "<")
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&"),
            );
        }
        rest = after;
    }
}

/// Which end of the gateway a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// What the gateway sent the provider.
    Upstream,
    /// What the gateway answered its client.
    Downstream,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Upstream => "upstream",
            Side::Downstream => "downstream",
        })
    }
}

/// Which check made a finding: findings are selected by kind, never by their text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// The request's translation: tools, schemas, tool_choice, strict, the parallel switch.
    Request,
    /// A tool result the gateway unlinked from its call, or dropped.
    ToolResult,
    /// The text protocol's injected instructions.
    Injected,
    /// The request went to another API than the route's.
    Route,
    /// Upstream refused the gateway's request.
    Refused,
    /// The answer the client got, against what upstream answered.
    Answer,
    /// The streamed answer's event shape.
    Stream,
    /// A request invalid in the client's own API, and the error it got.
    ClientFault,
    /// A follow-up round: nothing sent, or its answer.
    Round,
}

impl FindingKind {
    /// The kind's name in root-cause ids and titles.
    pub fn slug(self) -> &'static str {
        match self {
            FindingKind::Request => "request",
            FindingKind::ToolResult => "tool-result",
            FindingKind::Injected => "injected",
            FindingKind::Route => "route",
            FindingKind::Refused => "refused",
            FindingKind::Answer => "answer",
            FindingKind::Stream => "stream",
            FindingKind::ClientFault => "client-fault",
            FindingKind::Round => "round",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub side: Side,
    pub message: String,
    #[serde(skip)]
    pub kind: FindingKind,
}

impl Finding {
    pub(crate) fn new(
        kind: FindingKind,
        severity: Severity,
        side: Side,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            side,
            message: message.into(),
            kind,
        }
    }
}

/// A finding of the request checks; the other checks retag theirs ([`of_kind`]).
fn f(severity: Severity, side: Side, message: impl Into<String>) -> Finding {
    Finding::new(FindingKind::Request, severity, side, message)
}

/// `findings`, each of `kind`.
fn of_kind(kind: FindingKind, mut findings: Vec<Finding>) -> Vec<Finding> {
    for f in &mut findings {
        f.kind = kind;
    }
    findings
}

/// The keyword paths of a schema (object keys joined by `/`), for "keyword lost" messages.
fn keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                // An empty object (`"properties": {}`, `"items": {}`) constrains nothing: leaving
                // it out (as Gemini requires for a tool without parameters) loses no keyword.
                if x.as_object().is_some_and(serde_json::Map::is_empty) {
                    continue;
                }
                let p = format!("{prefix}/{k}");
                out.insert(p.clone());
                keys(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                keys(x, &format!("{prefix}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Whether `sent` keeps the meaning of `asked` (omitted = auto where the target's default is auto).
/// An allowed list naming exactly the tools sent means what plain `auto` or `required` means over
/// them (a target without allowed lists sends only the allowed tools).
fn choice_kept(asked: Option<&ToolChoice>, sent: Option<&ToolChoice>, sent_tools: &[&str]) -> bool {
    let only_sent = |tools: &[String]| {
        tools.iter().map(String::as_str).collect::<BTreeSet<_>>()
            == sent_tools.iter().copied().collect::<BTreeSet<_>>()
    };
    let allowed = matches!(asked, Some(ToolChoice::Allowed { .. }));
    let asked = match asked {
        Some(ToolChoice::Allowed { mode, tools }) if tools.len() > 1 && only_sent(tools) => {
            Some(match mode {
                crate::model::AllowedMode::Auto => ToolChoice::Auto,
                crate::model::AllowedMode::Required => ToolChoice::Required,
            })
        }
        Some(ToolChoice::Allowed { mode, tools })
            if tools.len() == 1 && only_sent(tools) && *mode == crate::model::AllowedMode::Auto =>
        {
            Some(ToolChoice::Auto)
        }
        other => other.cloned(),
    };
    let asked = asked.as_ref();
    let norm = |c: Option<&ToolChoice>| match c {
        None => ToolChoice::Auto,
        Some(ToolChoice::Allowed { mode, tools })
            if tools.len() == 1 && *mode == crate::model::AllowedMode::Required =>
        {
            ToolChoice::Forced(tools[0].clone())
        }
        // `required` over the one allowed tool, the only one sent, forces it.
        Some(ToolChoice::Required) if allowed && sent_tools.len() == 1 => {
            ToolChoice::Forced(sent_tools[0].to_string())
        }
        Some(c) => c.clone(),
    };
    let (a, s) = (norm(asked), norm(sent));
    match (&a, &s) {
        (
            ToolChoice::Allowed { mode, tools },
            ToolChoice::Allowed {
                mode: m2,
                tools: t2,
            },
        ) => {
            mode == m2
                && tools.iter().collect::<BTreeSet<_>>() == t2.iter().collect::<BTreeSet<_>>()
        }
        _ => a == s,
    }
}

/// Upstream check of a text-protocol request: the injected system message (the first message)
/// is the one the project's encoder sends for the client's request, byte for byte, and the
/// conversation after it carries as many messages.
pub(super) fn injected(sent: &Value, ours: Option<&Value>) -> Vec<Finding> {
    of_kind(FindingKind::Injected, injected_findings(sent, ours))
}

fn injected_findings(sent: &Value, ours: Option<&Value>) -> Vec<Finding> {
    let side = Side::Upstream;
    let Some(ours) = ours else {
        return Vec::new();
    };
    let first = |v: &Value| v.pointer("/messages/0/content").cloned();
    let count = |v: &Value| v.get("messages").and_then(Value::as_array).map(Vec::len);
    let mut out = Vec::new();
    if first(sent) != first(ours) {
        out.push(f(
            Severity::Breaking,
            side,
            "injected instructions differ from the ones src/inject/ builds",
        ));
    }
    if count(sent) != count(ours) {
        out.push(f(
            Severity::Breaking,
            side,
            format!(
                "{} messages sent, the text protocol sends {}",
                count(sent).unwrap_or(0),
                count(ours).unwrap_or(0)
            ),
        ));
    }
    out
}

/// Upstream checks. `client` is the client's request read back; `sent` what the gateway sent;
/// `ours` what the project's own encoder sends for the target (its sanitizer's changes allowed).
pub(super) fn upstream(
    client: &RequestView,
    sent: &RequestView,
    ours: Option<&RequestView>,
    target: Provider,
    wire_rejection: Option<String>,
    requires_grounding: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let side = Side::Upstream;
    let none = client.choice == Some(ToolChoice::None);
    // `none` may be implemented by not sending the tools at all.
    let none_by_omission = none && sent.tools.is_empty();
    let sent_names: Vec<&str> = sent.tools.iter().map(|t| t.name.as_str()).collect();
    // A tool the project's own encoder leaves out too is how the target expresses the request
    // (Anthropic has no allowed list: only the allowed tools are sent), not a tool dropped.
    let dropped: Vec<&str> = client
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| !sent_names.contains(n))
        .filter(|n| ours.is_none_or(|o| o.tools.iter().any(|t| t.name == *n)))
        .collect();
    if !dropped.is_empty() && !none_by_omission {
        out.push(f(
            Severity::Breaking,
            side,
            format!("tools dropped: {}", dropped.join(", ")),
        ));
    }
    for t in &client.tools {
        let Some(s) = sent.tools.iter().find(|x| x.name == t.name) else {
            continue;
        };
        let ours_t = ours.and_then(|o| o.tools.iter().find(|x| x.name == t.name));
        if s.description != t.description && ours_t.is_none_or(|o| o.description != s.description) {
            out.push(f(
                Severity::Behaviour,
                side,
                format!("description of {} changed", t.name),
            ));
        }
        if s.parameters != t.parameters && ours_t.is_none_or(|o| o.parameters != s.parameters) {
            let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
            keys(&t.parameters, "", &mut a);
            keys(&s.parameters, "", &mut b);
            if let Some(o) = ours_t {
                let mut c = BTreeSet::new();
                keys(&o.parameters, "", &mut c);
                // Only what even the target's sanitizer keeps counts as lost.
                a = a.intersection(&c).cloned().collect();
            }
            let lost: Vec<&String> = a.difference(&b).take(3).collect();
            if lost.is_empty() {
                out.push(f(
                    Severity::Cosmetic,
                    side,
                    format!("schema of {} reshaped (same keywords)", t.name),
                ));
            } else {
                out.push(f(
                    Severity::Behaviour,
                    side,
                    format!(
                        "schema of {} lost {}",
                        t.name,
                        lost.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        // What the project's encoder sends for the same tool is the reference: it drops `strict`
        // where the target cannot take it (Anthropic's strict subset and request-wide budgets).
        let wanted_strict = match ours_t {
            Some(o) => o.strict == Some(true),
            None => t.strict == Some(true) && target_supports_strict(target),
        };
        if wanted_strict && s.strict != Some(true) {
            out.push(f(
                Severity::Behaviour,
                side,
                format!("strict dropped for {}", t.name),
            ));
        }
    }
    if !none_by_omission
        && !client.tools.is_empty()
        && !choice_kept(client.choice.as_ref(), sent.choice.as_ref(), &sent_names)
    {
        out.push(f(
            Severity::Breaking,
            side,
            format!(
                "tool_choice {} sent as {}",
                slug(client.choice.as_ref()),
                slug(sent.choice.as_ref())
            ),
        ));
    }
    // A target without a parallel switch (Gemini) cannot be sent one: the project's own
    // encoder, the reference, sends none either.
    if client.parallel == Some(false)
        && sent.parallel != Some(false)
        && !client.tools.is_empty()
        && ours.is_none_or(|o| o.parallel == Some(false))
    {
        out.push(f(
            Severity::Behaviour,
            side,
            "parallel_tool_calls false dropped",
        ));
    }
    out.extend(results(client, sent));
    if requires_grounding && !sent.hosted_search {
        out.push(f(
            Severity::Breaking,
            side,
            "REQUIRED hosted search forwarded without the search tool (must fail closed)",
        ));
    }
    if let Some(why) = wire_rejection {
        out.push(f(
            Severity::Breaking,
            side,
            format!("{} would reject it: {why}", target.slug()),
        ));
    }
    out
}

/// The results of `view` that answer none of its calls: linked by id; formats without call ids
/// on the wire (Gemini, the text protocol) link by name.
fn unlinked(view: &RequestView) -> impl Iterator<Item = &(String, String)> {
    view.results.iter().filter(|(id, name)| {
        !view
            .calls
            .iter()
            .any(|(cid, cname)| (!id.is_empty() && cid == id) || (id.is_empty() && cname == name))
    })
}

/// Upstream check of the conversation's tool results: each one the gateway sent answers a call
/// it sent, and none of the client's is missing. A result the client itself sent answering no
/// call (its request is invalid in its own API) is the client's fault: as many unlinked results
/// as the client sent are not findings, only the ones the gateway unlinked.
pub(super) fn results(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    of_kind(FindingKind::ToolResult, results_findings(client, sent))
}

fn results_findings(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    let mut out = Vec::new();
    let excused = unlinked(client).count();
    for (id, name) in unlinked(sent).skip(excused) {
        out.push(f(
            Severity::Breaking,
            Side::Upstream,
            if name.is_empty() {
                format!("tool result {id} answers no call")
            } else if id.is_empty() {
                format!("tool result for {name} answers no call")
            } else {
                format!("tool result {id} ({name}) answers no call")
            },
        ));
    }
    if sent.results.len() < client.results.len() {
        out.push(f(
            Severity::Breaking,
            Side::Upstream,
            "tool results dropped",
        ));
    }
    out.extend(result_texts_kept(client, sent));
    out
}

/// The text of each tool result reaches upstream unchanged: the sent result answering the same
/// call (by id; by name where ids are empty) carries the client's text, or a JSON object whose
/// value is that text (a format that wraps results in an object, as Gemini's `response`).
fn result_texts_kept(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut used = vec![false; sent.results.len()];
    for ((id, name), text) in client.results.iter().zip(&client.result_texts) {
        let found = sent
            .results
            .iter()
            .enumerate()
            .position(|(j, (sid, sname))| {
                !used[j]
                    && if id.is_empty() || sid.is_empty() {
                        sname == name
                    } else {
                        sid == id
                    }
            });
        let Some(j) = found else {
            continue;
        };
        used[j] = true;
        let Some(got) = sent.result_texts.get(j) else {
            continue;
        };
        if !same_result_text(text, got) {
            out.push(f(
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "tool result text for {name} changed: {:?} → {:?}",
                    clip(text),
                    clip(got)
                ),
            ));
        }
    }
    out
}

fn same_result_text(client: &str, sent: &str) -> bool {
    if client.trim() == sent.trim() {
        return true;
    }
    let parsed = |s: &str| serde_json::from_str::<Value>(s).ok();
    match (parsed(client), parsed(sent)) {
        (Some(a), Some(b)) if a == b => true,
        (_, Some(Value::Object(o))) if o.len() == 1 => o.values().any(|v| {
            v.as_str().is_some_and(|t| t.trim() == client.trim())
                || parsed(client).is_some_and(|a| &a == v)
        }),
        _ => false,
    }
}

/// Downstream check of the answer to a request the client's own API rejects (the case expects
/// its error for the inbound format): an error in the client's format with a 4xx status, whether
/// the gateway answered it itself or mapped upstream's. `status` is the HTTP status, `got` the
/// answer decoded in the inbound format.
pub(super) fn invalid_request(status: u16, got: Result<&Outcome, String>) -> Vec<Finding> {
    of_kind(
        FindingKind::ClientFault,
        invalid_request_findings(status, got),
    )
}

fn invalid_request_findings(status: u16, got: Result<&Outcome, String>) -> Vec<Finding> {
    let side = Side::Downstream;
    let error = got.as_ref().ok().and_then(|o| o.error.as_ref());
    let finding = match (status, error) {
        (200..=299, None) => f(
            Severity::Breaking,
            side,
            format!("an invalid request answered as a success ({status})"),
        ),
        (200..=299, Some(e)) => f(
            Severity::Behaviour,
            side,
            format!(
                "an invalid request answered {status} with an error inside ({}); its API answers 4xx",
                clip(&e.message)
            ),
        ),
        (400..=499, Some(_)) => return Vec::new(),
        (400..=499, None) => f(
            Severity::Breaking,
            side,
            format!(
                "an invalid request answered {status} without an error in the client's format{}",
                got.err()
                    .map(|e| format!(": {}", clip(&e)))
                    .unwrap_or_default()
            ),
        ),
        _ => f(
            Severity::Breaking,
            side,
            format!("an invalid request answered {status} (its API answers 4xx)"),
        ),
    };
    vec![finding]
}

/// The finish value a format uses for an answer that calls tools, where it has a distinct one
/// (Responses has none; Gemini uses `STOP` for every normal end).
fn tool_call_finish(p: Provider) -> Option<&'static str> {
    match p {
        Provider::OpenaiChat | Provider::TextProtocol => Some("tool_calls"),
        Provider::Anthropic => Some("tool_use"),
        Provider::OpenaiResponses | Provider::Gemini => None,
    }
}

fn target_supports_strict(p: Provider) -> bool {
    matches!(
        p,
        Provider::OpenaiChat | Provider::OpenaiResponses | Provider::Anthropic
    )
}

fn slug(c: Option<&ToolChoice>) -> String {
    c.map_or_else(|| "omitted".to_string(), ToolChoice::slug)
}

/// Downstream checks: `got` is the gateway's answer decoded in the inbound format, `expected`
/// upstream's answer decoded in the upstream format; `status`es are the HTTP statuses.
pub(super) fn downstream(
    inbound: Provider,
    got_status: u16,
    got: Result<&Outcome, String>,
    up_status: u16,
    expected: Option<&Outcome>,
) -> Vec<Finding> {
    of_kind(
        FindingKind::Answer,
        downstream_findings(inbound, got_status, got, up_status, expected),
    )
}

fn downstream_findings(
    inbound: Provider,
    got_status: u16,
    got: Result<&Outcome, String>,
    up_status: u16,
    expected: Option<&Outcome>,
) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    if up_status >= 400 {
        // A success status is wrong whatever its body: one that decodes as an answer, and one
        // that does not decode at all.
        if (200..300).contains(&got_status) && !got.as_ref().is_ok_and(|o| o.error.is_some()) {
            out.push(f(
                Severity::Breaking,
                side,
                format!("upstream {up_status} answered as {got_status} without an error"),
            ));
        }
        return out;
    }
    let got = match got {
        Ok(o) => o,
        Err(e) => {
            out.push(f(
                Severity::Breaking,
                side,
                format!("answer does not decode: {e}"),
            ));
            return out;
        }
    };
    // A 200 whose stream failed mid-way or was cut: the client must see that (its format's
    // error event, or a stream without its terminal event), never a clean finish.
    if let Some(why) = expected.and_then(broken) {
        if got.error.is_none() && !truncated(got) {
            out.push(f(
                Severity::Breaking,
                side,
                format!(
                    "upstream stream {why} answered as a clean finish ({:?})",
                    got.finish
                ),
            ));
        }
        return out;
    }
    if let Some(e) = &got.error {
        out.push(f(
            Severity::Breaking,
            side,
            format!(
                "gateway answered {} ({}) to an upstream success",
                e.status,
                clip(&e.message)
            ),
        ));
        return out;
    }
    let Some(exp) = expected else {
        return out;
    };
    calls_kept(exp, got, &mut out);
    finish_kept(inbound, exp, got, &mut out);
    let norm = |t: &Option<String>| {
        t.as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    if norm(&exp.text) != norm(&got.text) {
        out.push(f(
            Severity::Behaviour,
            side,
            format!(
                "text changed: {:?} → {:?}",
                norm(&exp.text).map(|t| clip(&t)),
                norm(&got.text).map(|t| clip(&t))
            ),
        ));
    }
    // Usage is what upstream counted: passed through, not dropped or recounted.
    let output = |o: &Outcome| o.usage.as_ref().and_then(|u| u.output_tokens);
    match (output(exp), output(got)) {
        (Some(_), None) => out.push(f(Severity::Behaviour, side, "usage not passed through")),
        (Some(e), Some(g)) if e != g => out.push(f(
            Severity::Behaviour,
            side,
            format!("usage changed: {e} output tokens answered as {g}"),
        )),
        _ => {}
    }
    out
}

/// The calls the client got are upstream's: the same names in order, the same arguments, each
/// with an id of its own.
fn calls_kept(exp: &Outcome, got: &Outcome, out: &mut Vec<Finding>) {
    let side = Side::Downstream;
    let en: Vec<&str> = exp.tool_calls.iter().map(|c| c.name.as_str()).collect();
    let gn: Vec<&str> = got.tool_calls.iter().map(|c| c.name.as_str()).collect();
    if en != gn {
        out.push(f(
            Severity::Breaking,
            side,
            format!("calls [{}] answered as [{}]", en.join(", "), gn.join(", ")),
        ));
    } else {
        for (e, g) in exp.tool_calls.iter().zip(&got.tool_calls) {
            if e.arguments != g.arguments {
                out.push(f(
                    Severity::Breaking,
                    side,
                    format!(
                        "arguments of {} changed: {} → {}",
                        e.name,
                        clip(&e.arguments.to_string()),
                        clip(&g.arguments.to_string())
                    ),
                ));
            }
        }
    }
    let mut ids = BTreeSet::new();
    for c in &got.tool_calls {
        if c.id.is_empty() {
            out.push(f(
                Severity::Breaking,
                side,
                format!("call {} has no id", c.name),
            ));
        } else if !ids.insert(&c.id) {
            out.push(f(
                Severity::Breaking,
                side,
                format!("call id {} repeated", c.id),
            ));
        }
    }
}

/// The finish the client got is upstream's, in the format's own value.
fn finish_kept(inbound: Provider, exp: &Outcome, got: &Outcome, out: &mut Vec<Finding>) {
    let side = Side::Downstream;
    // The neutral finish may be inferred from the calls: the raw value must be the format's own.
    let raw_wrong = tool_call_finish(inbound).is_some_and(|v| got.raw_finish.as_deref() != Some(v));
    if exp.finish == Finish::Length {
        // The output-token limit wins over the calls: a call may have been cut (its partial
        // arguments are never a valid call), and only the length finish tells the client.
        if got.finish != Finish::Length {
            out.push(f(
                Severity::Breaking,
                side,
                format!(
                    "finish {} for upstream's output-token limit (expected the format's length value)",
                    got.raw_finish.as_deref().unwrap_or("none")
                ),
            ));
        }
    } else if !got.tool_calls.is_empty() && (got.finish != Finish::ToolCalls || raw_wrong) {
        out.push(f(
            Severity::Breaking,
            side,
            format!(
                "finish {} with tool calls (expected the format's tool-call value)",
                got.raw_finish.as_deref().unwrap_or("none")
            ),
        ));
    } else if got.tool_calls.is_empty() && exp.finish != got.finish {
        out.push(f(
            Severity::Behaviour,
            side,
            format!("finish {:?} answered as {:?}", exp.finish, got.finish),
        ));
    }
}

/// Why an answer that came with a success status is not whole: an error inside the stream, or
/// a stream that ended before its terminal event.
pub(crate) fn broken(o: &Outcome) -> Option<&'static str> {
    if o.error.is_some() {
        Some("error")
    } else if truncated(o) {
        Some("cut")
    } else {
        None
    }
}

fn truncated(o: &Outcome) -> bool {
    o.diagnostics
        .iter()
        .any(|d| d.kind == crate::model::DiagnosticKind::StreamTruncated)
}

/// Stream checks on the raw events of the gateway's answer (`got`) against upstream's (`up`).
/// `upstream_broken`: upstream's stream failed or was cut, so the gateway's must end with an
/// error event or without its terminal event, and carry no finish signal.
pub(super) fn stream(
    got: &StreamShape,
    up: Option<&StreamShape>,
    inbound: Provider,
    upstream_broken: bool,
) -> Vec<Finding> {
    of_kind(
        FindingKind::Stream,
        stream_findings(got, up, inbound, upstream_broken),
    )
}

fn stream_findings(
    got: &StreamShape,
    up: Option<&StreamShape>,
    inbound: Provider,
    upstream_broken: bool,
) -> Vec<Finding> {
    let side = Side::Downstream;
    let mut out = Vec::new();
    for p in got
        .problems
        .iter()
        .filter(|p| !(upstream_broken && p.starts_with("error event")))
        .take(1)
    {
        out.push(f(Severity::Breaking, side, format!("stream: {p}")));
    }
    // Calls sharing a slot, told apart by id, are faithful when upstream streamed them so (a
    // same-format pass-through); a gateway that puts calls upstream kept apart at one slot
    // makes clients that merge by index merge them.
    let upstream_shared = up.is_some_and(|u| u.calls.iter().any(|c| c.shared));
    for c in &got.calls {
        if c.shared && !upstream_shared {
            out.push(f(
                Severity::Breaking,
                side,
                format!(
                    "call {} at slot {} reused by another call ({})",
                    c.name.as_deref().unwrap_or("?"),
                    c.slot,
                    c.id.as_deref().unwrap_or("?")
                ),
            ));
        }
        if let Some(other) = &c.reused_by {
            out.push(f(
                Severity::Breaking,
                side,
                format!(
                    "call {} at slot {} reused by another call ({other})",
                    c.name.as_deref().unwrap_or("?"),
                    c.slot
                ),
            ));
        }
        if !c.opened_with_identity {
            out.push(f(
                Severity::Breaking,
                side,
                format!("first delta at slot {} has no id and name", c.slot),
            ));
        }
    }
    // Gemini carries each call whole: there are no argument fragments to compare.
    if let Some(up) = up.filter(|_| inbound != Provider::Gemini) {
        for (u, g) in up.calls.iter().zip(&got.calls) {
            if u.fragments > 1 && g.fragments <= 1 {
                out.push(f(
                    Severity::Behaviour,
                    side,
                    format!(
                        "arguments of {} held back: upstream sent {} fragments, the gateway {}",
                        g.name.as_deref().unwrap_or("?"),
                        u.fragments,
                        g.fragments
                    ),
                ));
            } else if u.fragments_before_finish > 0
                && g.fragments > 0
                && g.fragments_before_finish == 0
            {
                out.push(f(
                    Severity::Behaviour,
                    side,
                    format!(
                        "arguments of {} arrive only with the finish",
                        g.name.as_deref().unwrap_or("?")
                    ),
                ));
            }
        }
        if up.calls.len() > got.calls.len() {
            out.push(f(
                Severity::Breaking,
                side,
                format!(
                    "stream carries {} of upstream's {} calls",
                    got.calls.len(),
                    up.calls.len()
                ),
            ));
        }
    }
    if upstream_broken {
        if got.finishes > 0 {
            out.push(f(
                Severity::Breaking,
                side,
                "finish signal after upstream's stream failed or was cut",
            ));
        }
        return out;
    }
    if got.finishes != 1 {
        out.push(f(
            Severity::Behaviour,
            side,
            format!("{} finish signals (exactly one expected)", got.finishes),
        ));
    }
    if !got.terminal {
        let t = match inbound {
            Provider::OpenaiChat | Provider::TextProtocol => "[DONE]",
            Provider::Anthropic => "message_stop",
            Provider::OpenaiResponses => "response.completed",
            Provider::Gemini => "end",
        };
        out.push(f(Severity::Behaviour, side, format!("no terminal {t}")));
    }
    out
}

fn clip(s: &str) -> String {
    let c: String = s.chars().take(80).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}
