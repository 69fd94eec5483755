//! The upstream checks: what the gateway sent the provider against what the client sent, by
//! meaning (tools, schemas, tool_choice, strict, the parallel switch, hosted search; a type list
//! and its `anyOf` spelling are one schema), the tool results of the conversation, and the text
//! protocol's injected instructions.

use std::collections::BTreeSet;

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side, clip, finding, of_kind};
use super::view::RequestView;
use crate::model::{Provider, Severity, Tool, ToolChoice};
use crate::schema::{keyword_paths, proto_names};

/// Whether `sent` keeps the meaning of `asked` (omitted = auto where the target's default is auto).
/// An allowed list naming exactly the tools sent means what plain `auto` or `required` means over
/// them (a target without allowed lists sends only the allowed tools).
fn choice_kept(asked: Option<&ToolChoice>, sent: Option<&ToolChoice>, sent_tools: &[&str]) -> bool {
    let only_sent = |tools: &[String]| {
        tools.iter().map(String::as_str).collect::<BTreeSet<_>>()
            == sent_tools.iter().copied().collect::<BTreeSet<_>>()
    };
    let allowed = matches!(asked, Some(ToolChoice::Allowed { .. }));
    // An allowed list of every tool sent is plain `auto` / `required` (one tool: `auto` only;
    // `required` over one tool is that tool forced, below), whichever side spells it so.
    let plain = |c: Option<&ToolChoice>| match c {
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
    let (asked, sent) = (plain(asked), plain(sent));
    let (asked, sent) = (asked.as_ref(), sent.as_ref());
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
pub(crate) fn injected(sent: &Value, ours: Option<&Value>) -> Vec<Finding> {
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
        out.push(finding(
            Severity::Breaking,
            side,
            "injected instructions differ from the ones src/inject/ builds",
        ));
    }
    if count(sent) != count(ours) {
        out.push(finding(
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
pub(crate) fn upstream(
    client: &RequestView,
    sent: &RequestView,
    ours: Option<&RequestView>,
    (target, wire_rejection): (Provider, Option<String>),
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
    let dropped: Vec<&str> = (client.tools.iter())
        .filter(|t| declared_as(t, &sent.tools).is_none())
        .map(|t| t.name.as_str())
        .filter(|n| ours.is_none_or(|o| o.tools.iter().any(|t| t.name == *n)))
        .collect();
    if !dropped.is_empty() && !none_by_omission {
        out.push(finding(
            Severity::Breaking,
            side,
            format!("tools dropped: {}", dropped.join(", ")),
        ));
    }
    for t in &client.tools {
        let Some(s) = declared_as(t, &sent.tools) else {
            continue;
        };
        let ours_t = ours.and_then(|o| o.tools.iter().find(|x| x.name == t.name));
        out.extend(
            SentTool {
                t,
                s,
                ours_t,
                target,
            }
            .findings(),
        );
    }
    if !none_by_omission
        && !client.tools.is_empty()
        && !choice_kept(client.choice.as_ref(), sent.choice.as_ref(), &sent_names)
    {
        out.push(finding(
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
        out.push(finding(
            Severity::Behaviour,
            side,
            "parallel_tool_calls false dropped",
        ));
    }
    out.extend(results(client, sent));
    if requires_grounding && !sent.hosted_search {
        out.push(finding(
            Severity::Breaking,
            side,
            "REQUIRED hosted search forwarded without the search tool (must fail closed)",
        ));
    }
    if let Some(why) = wire_rejection {
        out.push(finding(
            Severity::Breaking,
            side,
            format!("{} would reject it: {why}", target.slug()),
        ));
    }
    out
}

/// One tool the gateway sent on to `target`: `t` as the client declared it, `s` as it was sent,
/// `ours_t` as the project's own encoder sends it (where it sends it).
#[derive(Clone, Copy)]
struct SentTool<'a> {
    t: &'a crate::model::Tool,
    s: &'a crate::model::Tool,
    ours_t: Option<&'a crate::model::Tool>,
    target: Provider,
}

impl SentTool<'_> {
    /// Its description, schema (by meaning) and `strict` kept, unless the project's own encoder
    /// (`ours_t`) sends the same change.
    fn findings(self) -> Vec<Finding> {
        let SentTool {
            t,
            s,
            ours_t,
            target,
        } = self;
        let mut out = Vec::new();
        let side = Side::Upstream;
        if s.description != t.description && ours_t.is_none_or(|o| o.description != s.description) {
            out.push(finding(
                Severity::Behaviour,
                side,
                format!("description of {} changed", t.name),
            ));
        }
        if s.parameters != t.parameters && ours_t.is_none_or(|o| o.parameters != s.parameters) {
            out.push(self.schema_finding());
        }
        // What the project's encoder sends for the same tool is the reference: it drops `strict`
        // where the target cannot take it (Anthropic's strict subset and request-wide budgets).
        let wanted_strict = match ours_t {
            Some(o) => o.strict == Some(true),
            None => t.strict == Some(true) && target_supports_strict(target),
        };
        if wanted_strict && s.strict != Some(true) {
            out.push(finding(
                Severity::Behaviour,
                side,
                format!("strict dropped for {}", t.name),
            ));
        }
        out
    }

    /// A changed schema: cosmetic when it keeps every keyword (compared by meaning), else what it lost.
    fn schema_finding(self) -> Finding {
        let SentTool {
            t,
            s,
            ours_t,
            target,
        } = self;
        // A union of types is compared by meaning: a type list and its `anyOf` spelling
        // have the same keywords.
        let mut a = keyword_paths(&t.parameters);
        let mut b = keyword_paths(&s.parameters);
        if let Some(o) = ours_t {
            // Only what even the target's sanitizer keeps counts as lost.
            a = a
                .intersection(&keyword_paths(&o.parameters))
                .cloned()
                .collect();
        }
        if target == Provider::Gemini {
            // Gemini reads a field by its proto name too (`min_items` is `minItems`).
            a = proto_names(&a);
            b = proto_names(&b);
        }
        let lost: Vec<&String> = a.difference(&b).take(3).collect();
        if lost.is_empty() {
            finding(
                Severity::Cosmetic,
                Side::Upstream,
                format!("schema of {} reshaped (same keywords)", t.name),
            )
        } else {
            finding(
                Severity::Behaviour,
                Side::Upstream,
                format!(
                    "schema of {} lost {}",
                    t.name,
                    lost.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        }
    }
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
pub(crate) fn results(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    of_kind(FindingKind::ToolResult, results_findings(client, sent))
}

fn results_findings(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    let mut out = Vec::new();
    let excused = unlinked(client).count();
    for (id, name) in unlinked(sent).skip(excused) {
        out.push(finding(
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
        out.push(finding(
            Severity::Breaking,
            Side::Upstream,
            "tool results dropped",
        ));
    }
    out.extend(result_texts_kept(client, sent));
    out
}

/// The text of each tool result reaches upstream unchanged: the sent result answering the same
/// call (by id; else the next of the same tool, as Gemini links them) carries the client's text, or a JSON object whose
/// value is that text (a format that wraps results in an object, as Gemini's `response`).
fn result_texts_kept(client: &RequestView, sent: &RequestView) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut used = vec![false; sent.results.len()];
    for ((id, name), text) in client.results.iter().zip(&client.result_texts) {
        let unused = |j: &usize| !used[*j];
        let by_id = (0..sent.results.len())
            .filter(unused)
            .find(|&j| !id.is_empty() && sent.results[j].0 == *id);
        // A format that links results by name (Gemini: its decoder makes ids of its own): the
        // next unused result of the same tool.
        let found = by_id.or_else(|| {
            (0..sent.results.len())
                .filter(unused)
                .find(|&j| sent.results[j].1 == *name)
        });
        let Some(j) = found else {
            continue;
        };
        used[j] = true;
        let Some(got) = sent.result_texts.get(j) else {
            continue;
        };
        if !same_result_text(text, got) {
            out.push(finding(
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
                || text_blocks(v).is_some_and(|t| t.trim() == client.trim())
        }),
        _ => false,
    }
}

/// The text of a JSON array of text blocks (`{"type": "text", "text": …}` in any API's spelling),
/// one a line, beside `{"$ref": …}` placeholders of parts sent as parts (Gemini's multimodal
/// function responses name their parts so): a result in a JSON response (Gemini's) kept as its
/// text blocks. `None` for anything else.
fn text_blocks(v: &Value) -> Option<String> {
    let mut texts = Vec::new();
    for b in v.as_array()? {
        let o = b.as_object()?;
        if o.len() == 1 && o.contains_key("$ref") {
            continue;
        }
        let kind = o.get("type").and_then(Value::as_str);
        if kind.is_some_and(|k| k != "text") {
            return None;
        }
        texts.push(o.get("text")?.as_str()?);
    }
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// Responses tools sent without a `strict` key, for a caller who did not ask for strict: the
/// Responses API then makes them strict (OpenAI's function-calling guide: functions are strict by
/// default there, unlike Chat Completions), so optional fields become required and a schema
/// outside the strict dialect changes meaning, which the caller never chose.
pub(crate) fn strict_omitted(
    asked_strict: bool,
    sent: &RequestView,
    target: Provider,
) -> Vec<Finding> {
    if asked_strict || target != Provider::OpenaiResponses {
        return Vec::new();
    }
    sent.tools
        .iter()
        .filter(|t| t.strict.is_none())
        .map(|t| {
            finding(
                Severity::Behaviour,
                Side::Upstream,
                format!(
                    "{} sent to the Responses API without `strict` (the API makes it strict; the caller did not ask for strict)",
                    t.name
                ),
            )
        })
        .collect()
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

/// The tool of `sent` that declares the client's tool `t`: the one of its name or, for a tool in
/// a namespace (Responses), the one named `NAMESPACE__NAME` on a target without namespaces: a
/// gateway that qualifies the name and maps the calls back keeps the meaning (LiteLLM's Responses
/// bridge does, `namespace_tool_name_map`); whether the calls come back with their namespace is
/// judged downstream.
fn declared_as<'a>(t: &Tool, sent: &'a [Tool]) -> Option<&'a Tool> {
    let qualified = t.namespace.as_ref().map(|ns| format!("{ns}__{}", t.name));
    (sent.iter()).find(|x| x.name == t.name || Some(&x.name) == qualified.as_ref())
}
