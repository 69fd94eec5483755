//! Proof that the gateway checks are right: small proxies on loopback, run through the same
//! runner as `tooltape gateway --url`, in front of the recording upstream. The faithful proxy
//! forwards same-format traffic unchanged and must pass every trial; each mutant breaks one thing
//! and must fail exactly the trials it should, with the expected finding. The table of what each
//! mutant fails is `docs/gateways/mutants.md` (rewrite it with `TOOLTAPE_WRITE_DOCS=1`).
//! A bug only translation can commit (reasoning carried to another provider) has its mutant in
//! `gateway_mutants/translating.rs`, over tooltape's own proxy library: the table's last section.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::{Value, json};
use tooltape::{Case, discover, runtime};

use crate::loopback_proxy::{ProxyBody, path_and_query, read, respond, send, serve};
use crate::scratch::{
    CONSTRAINTS, HOSTED, LLAMA_CPP, LONG_NAME, NAMESPACED, PROGRAM_ANTHROPIC, PROGRAM_RESPONSES,
    SEARCH_HOSTED, SEARCH_REGEX, Scratch, VLLM, repo,
};

// The mutant that translates (a conversation continued on another provider), through
// tooltape's own proxy library: its section of the table.
mod translating;

/// The same-format routes: the proxy forwards each request to the same API it came in on.
const PROFILE: &str = include_str!("../same-format-gateway.toml");

/// The chosen cases (copied into a scratch root), plus one whose upstream answers 500.
const CASES: [&str; 18] = [
    "weather",
    "parallel",
    "strict_invoice",
    "tool_error",
    "c04_parallel_shared_index",
    "c19_reasoning_state_kept",
    BY_REFERENCE,
    TOOLS_CHANGE,
    "c21_result_text_parts",
    "c21_result_image",
    "c22_previous_response_id",
    CUSTOM,
    CUT,
    CONSTRAINTS,
    PHASE,
    COMPACTION,
    VLLM,
    LLAMA_CPP,
];
/// Class 31: a compaction item upstream answered, to be sent back verbatim.
const COMPACTION: &str = "c31_compaction_kept";
/// Class 32: the Responses message's `phase`, to be sent back with it.
const PHASE: &str = "c32_phase_resent";
/// Class 19 by reference: the Responses reasoning item sent back as an `item_reference`.
const BY_REFERENCE: &str = "c19_reasoning_by_reference";
/// Class 23: an OpenAI custom tool in the caller's request (Chat and Responses routes only).
const CUSTOM: &str = "c23_custom_tool_beside_function";
/// Class 25: an eager tool's arguments cut by `max_tokens` midway through a parameter.
const CUT: &str = "c25_eager_cut_mid_parameter";
/// Class 26: the second request changes the tools in force.
const TOOLS_CHANGE: &str = "c26_tools_change_between_rounds";
const SERVER_ERROR: &str = r#"description = "Upstream answers 500: the gateway must answer an error, not a 200"
tools = ["get_weather"]
providers = ["openai-chat", "openai-responses", "anthropic", "gemini"]
choices = ["auto"]

[[messages]]
role = "user"
content = "Mutant check: is it raining in Oslo?"

[simulate]
error = { status = 500, message = "upstream exploded" }
"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutant {
    Faithful,
    ToolsDroppedBuffered,
    StreamCallsSwallowed,
    RequiredAsAuto,
    StrictRemoved,
    ForcedAsRequired,
    ParallelMerged,
    ArgumentsHeldBack,
    FinishStop,
    ErrorAs200,
    ResultUnlinked,
    ResultTextChanged,
    UsageDropped,
    TerminalDropped,
    SharedIndexMerged,
    ReasoningAltered,
    KimiIds,
    GeminiSameId,
    HostedDropped,
    NameTruncated,
    UsageOnFinishChunk,
    ToolsFrozen,
    ResultPartsQuoted,
    ContextDropped,
    CustomAsFunction,
    CutCallFinished,
    EagerDropped,
    ContextRepeated,
    ParallelDropped,
    AllowedWidened,
    DeferralDropped,
    SearchAsCall,
    NamespaceDropped,
    PhaseDropped,
    CompactionDropped,
    CallersDropped,
    CallerDropped,
    RunnerCallDropped,
    ContainerDropped,
    ErrorFlagDropped,
}

impl Mutant {
    const ALL: [Mutant; 40] = [
        Mutant::Faithful,
        Mutant::ToolsDroppedBuffered,
        Mutant::StreamCallsSwallowed,
        Mutant::RequiredAsAuto,
        Mutant::StrictRemoved,
        Mutant::ForcedAsRequired,
        Mutant::ParallelMerged,
        Mutant::ArgumentsHeldBack,
        Mutant::FinishStop,
        Mutant::ErrorAs200,
        Mutant::ResultUnlinked,
        Mutant::ResultTextChanged,
        Mutant::UsageDropped,
        Mutant::TerminalDropped,
        Mutant::SharedIndexMerged,
        Mutant::ReasoningAltered,
        Mutant::KimiIds,
        Mutant::GeminiSameId,
        Mutant::HostedDropped,
        Mutant::NameTruncated,
        Mutant::UsageOnFinishChunk,
        Mutant::ToolsFrozen,
        Mutant::ResultPartsQuoted,
        Mutant::ContextDropped,
        Mutant::CustomAsFunction,
        Mutant::CutCallFinished,
        Mutant::EagerDropped,
        Mutant::ContextRepeated,
        Mutant::ParallelDropped,
        Mutant::AllowedWidened,
        Mutant::DeferralDropped,
        Mutant::SearchAsCall,
        Mutant::NamespaceDropped,
        Mutant::PhaseDropped,
        Mutant::CompactionDropped,
        Mutant::CallersDropped,
        Mutant::CallerDropped,
        Mutant::RunnerCallDropped,
        Mutant::ContainerDropped,
        Mutant::ErrorFlagDropped,
    ];

    fn slug(self) -> String {
        format!("{self:?}")
    }

    fn name(self) -> &'static str {
        match self {
            Mutant::Faithful => "faithful (forwards unchanged)",
            Mutant::ToolsDroppedBuffered => "tools dropped in buffered mode",
            Mutant::StreamCallsSwallowed => "streamed tool calls never forwarded",
            Mutant::RequiredAsAuto => "`required` sent as `auto`",
            Mutant::StrictRemoved => "`strict` removed",
            Mutant::ForcedAsRequired => "forced name replaced by `required`",
            Mutant::ParallelMerged => "parallel calls merged at index 0",
            Mutant::ArgumentsHeldBack => "arguments held back to the final event",
            Mutant::FinishStop => "finish `stop` instead of the tool-call value",
            Mutant::ErrorAs200 => "upstream 500 answered as 200, empty content",
            Mutant::ResultUnlinked => "tool result sent with another call's id",
            Mutant::ResultTextChanged => "tool result text replaced",
            Mutant::UsageDropped => "usage removed from the answer",
            Mutant::TerminalDropped => "stream's terminal event dropped",
            Mutant::SharedIndexMerged => "calls streamed at one index merged (ids dropped)",
            Mutant::ReasoningAltered => {
                "reasoning sent back altered (signature, encrypted content)"
            }
            Mutant::KimiIds => "call ids sent in Kimi's style (`functions.NAME:0`) to Anthropic",
            Mutant::GeminiSameId => "Gemini's calls without ids all given one made id",
            Mutant::HostedDropped => "hosted web search dropped, the rest forwarded",
            Mutant::NameTruncated => "names over 64 characters cut to 64, never restored",
            Mutant::UsageOnFinishChunk => "Chat usage moved onto the finish chunk",
            Mutant::ToolsFrozen => "the first request's tools sent in every round",
            Mutant::ResultPartsQuoted => {
                "a tool result's parts array JSON-stringified into one string"
            }
            Mutant::ContextDropped => {
                "previous_response_id dropped: only the new items forwarded, as to an upstream without server-side state"
            }
            Mutant::CustomAsFunction => {
                "custom tool sent as a function with one `input` string parameter"
            }
            Mutant::CutCallFinished => {
                "a call cut by max_tokens handed as finished (the tool-call finish, Responses `completed`)"
            }
            Mutant::EagerDropped => "a tool's `eager_input_streaming` removed",
            Mutant::ParallelDropped => "the parallel switch (off) removed",
            Mutant::AllowedWidened => "an allowed subset sent as plain `auto` / `required`",
            Mutant::DeferralDropped => "a tool's `defer_loading` removed beside the tool search",
            Mutant::SearchAsCall => {
                "the upstream's tool search handed to the client as a function call"
            }
            Mutant::NamespaceDropped => "a Responses call's `namespace` removed from the answer",
            Mutant::PhaseDropped => {
                "an assistant message's `phase` stripped from the items sent back"
            }
            Mutant::CompactionDropped => {
                "compaction items dropped from the conversation sent back (LiteLLM PR #42016's bug)"
            }
            Mutant::ContextRepeated => {
                "previous_response_id forwarded with the earlier items again (upstream holds them)"
            }
            Mutant::CallersDropped => "a tool's `allowed_callers` removed",
            Mutant::CallerDropped => "a call's `caller` removed from the answer",
            Mutant::RunnerCallDropped => {
                "the runner's server call (code-execution block, program item) dropped from the conversation sent back"
            }
            Mutant::ContainerDropped => "Anthropic's `container` not forwarded upstream",
            Mutant::ErrorFlagDropped => {
                "a tool result's error flag removed (Anthropic `is_error`, Gemini `response.error`)"
            }
        }
    }

    /// What a failing trial's findings must contain.
    fn finding(self) -> &'static str {
        match self {
            Mutant::Faithful => "",
            Mutant::ToolsDroppedBuffered => "tools dropped",
            Mutant::StreamCallsSwallowed => "answered as []",
            Mutant::RequiredAsAuto => "tool_choice required sent as auto",
            Mutant::StrictRemoved => "strict dropped",
            Mutant::ForcedAsRequired => "sent as required",
            Mutant::ParallelMerged => "reused by another call",
            Mutant::ArgumentsHeldBack => "held back",
            Mutant::FinishStop => "with tool calls (expected the format's tool-call value)",
            Mutant::ErrorAs200 => "answered as 200 without an error",
            Mutant::ResultUnlinked => "answers no call",
            Mutant::ResultTextChanged => "tool result text for",
            Mutant::UsageDropped => "usage not passed through",
            Mutant::TerminalDropped => "no terminal",
            Mutant::SharedIndexMerged => "of upstream's",
            Mutant::ReasoningAltered => "reasoning not carried back",
            Mutant::KimiIds => "is invalid for its API",
            Mutant::GeminiSameId => "repeated in one answer",
            Mutant::HostedDropped => "hosted web search dropped",
            Mutant::NameTruncated => "not restored",
            Mutant::UsageOnFinishChunk => "usage on a chunk with choices",
            Mutant::ToolsFrozen => "the tools sent upstream are not the tools in force",
            Mutant::ResultPartsQuoted => "JSON-quoted into one string",
            Mutant::ContextDropped => "continued with previous_response_id",
            Mutant::CustomAsFunction => "custom tool `run_sql` sent as an ordinary function",
            Mutant::CutCallFinished => "for upstream's output-token limit",
            Mutant::EagerDropped => "eager_input_streaming dropped for write_note",
            Mutant::ParallelDropped => "parallel_tool_calls false dropped",
            Mutant::AllowedWidened => "tool_choice allowed-",
            Mutant::PhaseDropped => "phase not carried back",
            Mutant::CompactionDropped => "compaction item not carried back",
            Mutant::ContextRepeated => "the earlier items again",
            Mutant::DeferralDropped => "sent loaded",
            Mutant::SearchAsCall => "handed to the client as its own call",
            Mutant::NamespaceDropped => "without its namespace",
            Mutant::CallersDropped => "`allowed_callers` dropped or changed",
            Mutant::CallerDropped => "without its caller",
            Mutant::RunnerCallDropped => "not sent back beside it",
            Mutant::ContainerDropped => "not named on the next round",
            Mutant::ErrorFlagDropped => "without its error flag",
        }
    }

    /// What trial `t`'s findings must contain: the cut call of `CUT` was only ever streamed
    /// (the client gets no call either way), so swallowing it is the stream check's finding.
    fn finding_in(self, t: &Facts) -> &'static str {
        if self == Mutant::StreamCallsSwallowed && t.case == CUT {
            "stream carries 0 of upstream's"
        } else {
            self.finding()
        }
    }

    /// Whether the trial (as the faithful run saw it) is one this mutant must fail.
    fn should_fail(self, t: &Facts) -> bool {
        let not_gemini = t.route != "generate-content→gemini";
        let shared = t.case == "c04_parallel_shared_index";
        // The cut call is streamed, though the client must not get it as a call.
        let streamed_calls = t.calls > 0 || t.case == CUT;
        let parts = t.case.starts_with("c21_");
        let rounds = parts
            || matches!(
                t.case.as_str(),
                "tool_error"
                    | "c19_reasoning_state_kept"
                    | BY_REFERENCE
                    | TOOLS_CHANGE
                    | "c22_previous_response_id"
                    | NAMESPACED
                    | PHASE
                    | COMPACTION
                    | PROGRAM_ANTHROPIC
                    | PROGRAM_RESPONSES
                    | SEARCH_REGEX
                    | SEARCH_HOSTED
                    | VLLM
                    | LLAMA_CPP
            );
        let programmed = t.case == PROGRAM_ANTHROPIC || t.case == PROGRAM_RESPONSES;
        let searched = t.case == SEARCH_REGEX || t.case == SEARCH_HOSTED;
        match self {
            Mutant::Faithful => false,
            Mutant::ToolsDroppedBuffered => !t.stream && t.choice != "none",
            Mutant::StreamCallsSwallowed => t.stream && streamed_calls,
            // Anthropic sends an allowed `required` subset as `any` over the allowed tools.
            Mutant::RequiredAsAuto => {
                t.choice == "required"
                    || (t.choice.starts_with("allowed-required-")
                        && t.route == "messages→anthropic")
            }
            Mutant::StrictRemoved => t.strict,
            Mutant::ForcedAsRequired => t.choice.starts_with("forced-"),
            // Gemini carries each call whole in its own part: there is no index to merge on, and
            // no argument fragments to hold back.
            // Calls upstream already streams at one index have nothing left to merge.
            Mutant::ParallelMerged => t.stream && t.calls > 1 && not_gemini && !shared,
            Mutant::ArgumentsHeldBack => t.stream && streamed_calls && not_gemini,
            // Responses and Gemini have no distinct tool-call finish value to replace.
            // OpenAI's Chat itself ends a named choice's call with `stop`.
            Mutant::FinishStop => {
                t.calls > 0
                    && (t.route == "messages→anthropic"
                        || (t.route == "chat→openai-chat" && !t.choice.starts_with("forced-")))
            }
            Mutant::ErrorAs200 => t.case == "server_error",
            // Follow-up rounds (`tool_error`); Gemini links results by name, not id.
            Mutant::ResultUnlinked => rounds && t.calls > 0 && not_gemini,
            // Every format carries the result's text, Gemini too (in `response`).
            Mutant::ResultTextChanged => rounds && t.calls > 0,
            Mutant::UsageDropped => t.usage,
            // Gemini's stream has no terminal event: it just ends.
            Mutant::TerminalDropped => t.stream && not_gemini && t.case != "server_error",
            Mutant::SharedIndexMerged => t.stream && shared,
            // The round after a reasoning answer (no reasoning on the Chat wire); Gemini 3 signs
            // every call and validates its signature thinking or not, so every Gemini follow-up.
            Mutant::ReasoningAltered => {
                let server = t.case == VLLM || t.case == LLAMA_CPP;
                rounds && t.calls > 0 && (t.case.starts_with("c19_") || !not_gemini || server)
            }
            // Only Anthropic restricts the characters of an id.
            Mutant::KimiIds => rounds && t.calls > 0 && t.route == "messages→anthropic",
            // One id for two calls is a repeat; one call keeps a valid, distinct id.
            Mutant::GeminiSameId => t.calls > 1 && !not_gemini,
            Mutant::HostedDropped => t.case == HOSTED,
            Mutant::NameTruncated => t.case == LONG_NAME,
            Mutant::UsageOnFinishChunk => t.stream && t.usage && t.route == "chat→openai-chat",
            Mutant::ToolsFrozen => t.case == TOOLS_CHANGE && t.calls > 0,
            // Gemini sends text parts joined in `response`: only its images are an array.
            Mutant::ResultPartsQuoted => {
                parts && t.calls > 0 && (not_gemini || t.case == "c21_result_image")
            }
            // Only a Responses caller continues by id (the other formats send the whole
            // conversation).
            Mutant::ContextDropped | Mutant::ContextRepeated => continued_by_id(t) && t.calls > 0,
            Mutant::CustomAsFunction => t.case == CUSTOM,
            Mutant::CutCallFinished => t.case == CUT,
            // Only a Messages caller can ask for it.
            Mutant::EagerDropped => t.case == CUT && t.route == "messages→anthropic",
            Mutant::ParallelDropped => t.case == CONSTRAINTS,
            // Anthropic has no allowed list: only the allowed tools are sent, nothing to widen.
            Mutant::AllowedWidened => {
                t.choice.starts_with("allowed-") && t.route != "messages→anthropic"
            }
            Mutant::DeferralDropped => searched,
            // A search ran before the call the model made of the tool it found.
            Mutant::SearchAsCall => searched && t.calls > 0,
            // Responses' calls of a namespaced or deferred function carry a namespace.
            Mutant::NamespaceDropped => {
                (t.case == NAMESPACED || t.case == SEARCH_HOSTED) && t.calls > 0
            }
            // Only Responses answers a phase, and only a Responses caller sends it back.
            Mutant::PhaseDropped => {
                t.case == PHASE && t.route == "responses→openai-responses" && t.calls > 0
            }
            // Each runner's calls go back on its own API only.
            Mutant::CallersDropped => programmed,
            Mutant::CallerDropped | Mutant::RunnerCallDropped => programmed && t.calls > 0,
            // Only Anthropic runs the code in a container.
            Mutant::ContainerDropped => t.case == PROGRAM_ANTHROPIC && t.calls > 0,
            // The formats with an error flag on a result.
            Mutant::ErrorFlagDropped => {
                t.case == "tool_error"
                    && t.calls > 0
                    && matches!(
                        t.route.as_str(),
                        "messages→anthropic" | "generate-content→gemini"
                    )
            }
            // Only Responses and Anthropic answer compaction items.
            Mutant::CompactionDropped => {
                t.case == COMPACTION
                    && matches!(
                        t.route.as_str(),
                        "responses→openai-responses" | "messages→anthropic"
                    )
                    && t.calls > 0
            }
        }
    }
}

/// A trial whose round the caller continues by `previous_response_id` (class 22).
fn continued_by_id(t: &Facts) -> bool {
    t.case == "c22_previous_response_id" && t.route == "responses→openai-responses"
}

/// What the faithful run tells about a trial.
struct Facts {
    key: String,
    case: String,
    route: String,
    choice: String,
    stream: bool,
    calls: usize,
    strict: bool,
    /// The faithful proxy's answer carried upstream's output-token count.
    usage: bool,
}

fn facts(r: &tooltape::engine::TrialResult) -> Facts {
    Facts {
        key: r.id.key(),
        case: r.id.case.clone(),
        route: r.id.route.clone(),
        choice: r.id.choice.clone(),
        stream: r.id.mode == tooltape::Mode::Stream,
        calls: r
            .downstream_outcome
            .as_ref()
            .map_or(0, |o| o.tool_calls.len()),
        strict: has_strict(&r.client_request),
        usage: r
            .downstream_outcome
            .as_ref()
            .and_then(|o| o.usage.as_ref())
            .is_some_and(|u| u.output_tokens.is_some()),
    }
}

fn has_strict(v: &Value) -> bool {
    match v {
        Value::Object(o) => o
            .iter()
            .any(|(k, x)| (k == "strict" && x == &Value::Bool(true)) || has_strict(x)),
        Value::Array(a) => a.iter().any(has_strict),
        _ => false,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Chat,
    Responses,
    Messages,
    Gemini,
}

fn format_of(path: &str) -> Option<Format> {
    if path.ends_with("/chat/completions") {
        Some(Format::Chat)
    } else if path.ends_with("/responses") {
        Some(Format::Responses)
    } else if path.ends_with("/messages") {
        Some(Format::Messages)
    } else if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
        Some(Format::Gemini)
    } else {
        None
    }
}

// ---------------------------------------------------------------- request mutations

fn mutate_request(m: Mutant, fmt: Format, stream: bool, body: &mut Value) {
    let Some(o) = body.as_object_mut() else {
        return;
    };
    match m {
        Mutant::ToolsDroppedBuffered if !stream => {
            for k in ["tools", "tool_choice", "parallel_tool_calls", "toolConfig"] {
                o.remove(k);
            }
        }
        Mutant::ResultUnlinked => {
            for m in o
                .get_mut("messages")
                .or(None)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if m.get("tool_call_id").is_some() {
                    m["tool_call_id"] = json!("call_unlinked");
                }
                for c in m["content"].as_array_mut().into_iter().flatten() {
                    if c.get("tool_use_id").is_some() {
                        c["tool_use_id"] = json!("toolu_unlinked");
                    }
                }
            }
            for i in o
                .get_mut("input")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if i["type"] == "function_call_output" {
                    i["call_id"] = json!("call_unlinked");
                }
            }
        }
        Mutant::ResultTextChanged => tamper_results(o),
        Mutant::ResultPartsQuoted => quote_result_parts(o),
        Mutant::ContextDropped => {
            o.remove("previous_response_id");
        }
        Mutant::ReasoningAltered => alter_reasoning(o),
        Mutant::KimiIds => kimi_ids(o),
        Mutant::HostedDropped => drop_hosted(o),
        Mutant::CustomAsFunction => custom_as_function(fmt, o),
        Mutant::EagerDropped => remove_tool_key(fmt, o, "eager_input_streaming"),
        Mutant::DeferralDropped => remove_tool_key(fmt, o, "defer_loading"),
        Mutant::CallersDropped => remove_tool_key(fmt, o, "allowed_callers"),
        Mutant::RunnerCallDropped => drop_runner_calls(o),
        Mutant::ContainerDropped => {
            o.remove("container");
        }
        Mutant::NameTruncated => truncate_names(o),
        Mutant::ToolsFrozen => freeze_tools(fmt, o),
        Mutant::RequiredAsAuto => match fmt {
            Format::Chat | Format::Responses => {
                if o.get("tool_choice") == Some(&json!("required")) {
                    o.insert("tool_choice".into(), json!("auto"));
                }
            }
            Format::Messages => {
                if let Some(tc) = o.get_mut("tool_choice")
                    && tc["type"] == "any"
                {
                    tc["type"] = json!("auto");
                }
            }
            Format::Gemini => {
                if let Some(c) = o
                    .get_mut("toolConfig")
                    .and_then(|t| t.get_mut("functionCallingConfig"))
                    && c["mode"] == "ANY"
                    && c.get("allowedFunctionNames").is_none()
                {
                    c["mode"] = json!("AUTO");
                }
            }
        },
        Mutant::StrictRemoved => remove_tool_key(fmt, o, "strict"),
        Mutant::ParallelDropped => drop_parallel(o),
        Mutant::AllowedWidened => widen_allowed(o),
        Mutant::PhaseDropped => drop_phase(o),
        Mutant::CompactionDropped => drop_compaction(o),
        Mutant::ErrorFlagDropped => drop_error_flags(o),
        Mutant::ForcedAsRequired => match fmt {
            Format::Chat | Format::Responses => {
                if o.get("tool_choice")
                    .is_some_and(|c| c["type"] == "function")
                {
                    o.insert("tool_choice".into(), json!("required"));
                }
            }
            Format::Messages => {
                if let Some(tc) = o.get_mut("tool_choice")
                    && tc["type"] == "tool"
                    && let Some(tc) = tc.as_object_mut()
                {
                    tc.remove("name");
                    tc.insert("type".into(), json!("any"));
                }
            }
            Format::Gemini => {
                if let Some(c) = o
                    .get_mut("toolConfig")
                    .and_then(|t| t.get_mut("functionCallingConfig"))
                    .and_then(Value::as_object_mut)
                    && c.get("mode") == Some(&json!("ANY"))
                    && c.get("allowedFunctionNames")
                        .and_then(Value::as_array)
                        .is_some_and(|a| a.len() == 1)
                {
                    c.remove("allowedFunctionNames");
                }
            }
        },
        _ => {}
    }
}

/// Removes the error flag of every tool result: Anthropic's `is_error`, and Gemini's error
/// `response` made a plain result.
fn drop_error_flags(o: &mut serde_json::Map<String, Value>) {
    let turns = (o.iter_mut())
        .filter(|(k, _)| *k == "messages" || *k == "contents")
        .filter_map(|(_, v)| v.as_array_mut());
    for turn in turns.flatten() {
        let Some(turn) = turn.as_object_mut() else {
            continue;
        };
        let blocks = turn.get_mut("content").and_then(Value::as_array_mut);
        for b in blocks
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            b.remove("is_error");
        }
        let parts = turn.get_mut("parts").and_then(Value::as_array_mut);
        for part in parts.into_iter().flatten() {
            let response = (part.get_mut("functionResponse"))
                .and_then(|f| f.get_mut("response"))
                .and_then(Value::as_object_mut);
            if let Some(r) = response
                && let Some(e) = r.remove("error")
            {
                r.insert("result".into(), e);
            }
        }
    }
}

/// Removes hosted web search in each format's place for it, forwarding the rest.
fn drop_hosted(o: &mut serde_json::Map<String, Value>) {
    o.remove("web_search_options");
    if let Some(tools) = o.get_mut("tools").and_then(Value::as_array_mut) {
        tools.retain(|t| {
            !t["type"]
                .as_str()
                .is_some_and(|ty| ty.starts_with("web_search"))
        });
        for t in tools.iter_mut().filter_map(Value::as_object_mut) {
            t.remove("googleSearch");
        }
        tools.retain(|t| t.as_object().is_none_or(|t| !t.is_empty()));
    }
}

/// Declares each OpenAI custom tool as a function of its name taking one `input` string (as
/// some gateways do): the model then answers JSON arguments the client's freeform tool cannot take.
fn custom_as_function(fmt: Format, o: &mut serde_json::Map<String, Value>) {
    let parameters = json!({"type": "object", "properties": {"input": {"type": "string"}},
        "required": ["input"]});
    for t in o
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if t["type"] != "custom" {
            continue;
        }
        let def = if fmt == Format::Chat {
            t["custom"].clone()
        } else {
            t.clone()
        };
        let (name, description) = (def["name"].clone(), def["description"].clone());
        *t = if fmt == Format::Chat {
            json!({"type": "function", "function": {"name": name, "description": description,
                "parameters": parameters}})
        } else {
            json!({"type": "function", "name": name, "description": description,
                "parameters": parameters})
        };
    }
}

/// Cuts every Gemini function name (declared, allowed, called) over 64 characters to its first 64.
/// The tools of each conversation's first request, by format and first message.
static FIRST_TOOLS: std::sync::Mutex<Vec<(String, Option<Value>)>> =
    std::sync::Mutex::new(Vec::new());

/// Sends every request of a conversation with the tools its first request had (a gateway that
/// caches the tools per conversation). A conversation is told by its format and first message;
/// every trial of a case starts with the same tools.
fn freeze_tools(fmt: Format, o: &mut serde_json::Map<String, Value>) {
    let history = ["messages", "input", "contents"]
        .iter()
        .find_map(|k| o.get(*k))
        .map(|h| {
            h.as_array()
                .and_then(|a| a.first())
                .unwrap_or(h)
                .to_string()
        })
        .unwrap_or_default();
    // A conversation is its first message under one tool_choice (Anthropic sends another
    // subset of the tools for each allowed choice).
    let key = format!(
        "{fmt:?} {history} {}",
        o.get("tool_choice").unwrap_or(&Value::Null)
    );
    let mut seen = FIRST_TOOLS.lock().unwrap();
    match seen.iter().find(|(k, _)| *k == key) {
        Some((_, Some(tools))) => {
            o.insert("tools".into(), tools.clone());
        }
        Some((_, None)) => {
            o.remove("tools");
        }
        None => seen.push((key, o.get("tools").cloned())),
    }
}

fn truncate_names(o: &mut serde_json::Map<String, Value>) {
    fn cut(v: &mut Value) {
        if let Some(short) = v
            .as_str()
            .filter(|n| n.len() > 64)
            .map(|n| n[..64].to_string())
        {
            *v = json!(short);
        }
    }
    for t in o
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for d in t["functionDeclarations"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            cut(&mut d["name"]);
        }
    }
    if let Some(names) = o
        .get_mut("toolConfig")
        .and_then(|c| c.pointer_mut("/functionCallingConfig/allowedFunctionNames"))
        .and_then(Value::as_array_mut)
    {
        names.iter_mut().for_each(cut);
    }
}

/// The elements of the array at `key` of `o` (none when absent).
fn array_mut<'a>(
    o: &'a mut serde_json::Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Value> {
    o.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Strips `phase` from every Responses input item (an assistant message sent back without it).
fn drop_phase(o: &mut serde_json::Map<String, Value>) {
    for i in array_mut(o, "input") {
        if let Some(item) = i.as_object_mut() {
            item.remove("phase");
        }
    }
}

/// Drops every compaction item: Responses input items, Anthropic content blocks.
/// `RunnerCallDropped`: the runner's server call (Anthropic's code-execution `server_tool_use`
/// block, Responses' `program` item) removed from the conversation, its calls kept.
fn drop_runner_calls(o: &mut serde_json::Map<String, Value>) {
    let runner = |v: &Value| {
        v["type"] == "program" || (v["type"] == "server_tool_use" && v["name"] == "code_execution")
    };
    if let Some(items) = o.get_mut("input").and_then(Value::as_array_mut) {
        items.retain(|i| !runner(i));
    }
    for m in array_mut(o, "messages") {
        if let Some(blocks) = m["content"].as_array_mut() {
            blocks.retain(|b| !runner(b));
        }
    }
}

fn drop_compaction(o: &mut serde_json::Map<String, Value>) {
    let compaction = |v: &Value| v["type"] == "compaction";
    if let Some(items) = o.get_mut("input").and_then(Value::as_array_mut) {
        items.retain(|i| !compaction(i));
    }
    for m in array_mut(o, "messages") {
        if let Some(blocks) = m["content"].as_array_mut() {
            blocks.retain(|b| !compaction(b));
        }
    }
}

/// JSON-stringifies every tool result's parts array into one string, in each format's place.
fn quote_result_parts(o: &mut serde_json::Map<String, Value>) {
    fn quote(v: &mut Value) {
        if v.is_array() {
            *v = json!(v.to_string());
        }
    }
    for m in array_mut(o, "messages") {
        if m["role"] == "tool" {
            quote(&mut m["content"]);
        }
        for c in m["content"].as_array_mut().into_iter().flatten() {
            if c["type"] == "tool_result" {
                quote(&mut c["content"]);
            }
        }
    }
    for i in array_mut(o, "input") {
        if i["type"] == "function_call_output" {
            quote(&mut i["output"]);
        }
    }
    for c in array_mut(o, "contents") {
        for p in c["parts"].as_array_mut().into_iter().flatten() {
            if let Some(r) = p.get_mut("functionResponse")
                && let Some(parts) = r.as_object_mut().and_then(|r| r.remove("parts"))
            {
                r["response"] = json!({"result": parts.to_string()});
            }
        }
    }
}

/// Replaces the text of every tool result, in each format's place for it.
fn tamper_results(o: &mut serde_json::Map<String, Value>) {
    const TAMPERED: &str = "tampered by the gateway";
    for m in array_mut(o, "messages") {
        if m["role"] == "tool" {
            m["content"] = json!(TAMPERED);
        }
        for c in m["content"].as_array_mut().into_iter().flatten() {
            if c["type"] == "tool_result" {
                c["content"] = json!(TAMPERED);
            }
        }
    }
    for i in array_mut(o, "input") {
        if i["type"] == "function_call_output" {
            i["output"] = json!(TAMPERED);
        }
    }
    for c in array_mut(o, "contents") {
        for p in c["parts"].as_array_mut().into_iter().flatten() {
            if let Some(r) = p.get_mut("functionResponse") {
                r["response"] = json!({"result": TAMPERED});
            }
        }
    }
}

/// Alters the reasoning state sent back, in each format's place for it: Anthropic thinking
/// signatures and redacted data, Responses encrypted content and the id an `item_reference`
/// names, Gemini thought signatures, a model server's reasoning text on a Chat message.
fn alter_reasoning(o: &mut serde_json::Map<String, Value>) {
    fn alter(v: Option<&mut Value>) {
        if let Some(v) = v
            && let Some(s) = v.as_str()
        {
            *v = json!(format!("{s}altered"));
        }
    }
    for m in array_mut(o, "messages") {
        alter(m.get_mut("reasoning"));
        alter(m.get_mut("reasoning_content"));
        for c in m["content"].as_array_mut().into_iter().flatten() {
            alter(c.get_mut("signature"));
            alter(c.get_mut("data"));
        }
    }
    for i in array_mut(o, "input") {
        // A compaction item's sealed summary is no reasoning (CompactionDropped's concern).
        if i["type"] == "compaction" {
            continue;
        }
        alter(i.get_mut("encrypted_content"));
        if i["type"] == "item_reference" {
            alter(i.get_mut("id"));
        }
    }
    for c in array_mut(o, "contents") {
        for p in c["parts"].as_array_mut().into_iter().flatten() {
            alter(p.get_mut("thoughtSignature"));
        }
    }
}

/// Anthropic call ids rewritten in Kimi's style, `functions.ID:0`: the same rewrite for a call
/// and the result answering it, so they stay linked.
fn kimi_ids(o: &mut serde_json::Map<String, Value>) {
    let kimi = |v: &mut Value| {
        if let Some(id) = v.as_str() {
            *v = json!(format!("functions.{id}:0"));
        }
    };
    for m in array_mut(o, "messages") {
        for c in m["content"].as_array_mut().into_iter().flatten() {
            match c["type"].as_str() {
                Some("tool_use") => kimi(&mut c["id"]),
                Some("tool_result") => kimi(&mut c["tool_use_id"]),
                _ => {}
            }
        }
    }
}

/// Every `functionCall` of a Gemini answer given the id `call_0`, as a gateway that makes one
/// id for Gemini's id-less calls does.
fn same_gemini_id(v: &mut Value) {
    for c in v["candidates"].as_array_mut().into_iter().flatten() {
        for p in c["content"]["parts"].as_array_mut().into_iter().flatten() {
            if let Some(f) = p.get_mut("functionCall").and_then(Value::as_object_mut) {
                f.insert("id".into(), json!("call_0"));
            }
        }
    }
}

/// Removes every `usage` / `usageMetadata` object, at any depth.
fn drop_usage(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("usage");
            o.remove("usageMetadata");
            o.values_mut().for_each(drop_usage);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_usage),
        _ => {}
    }
}

// ---------------------------------------------------------------- Responses state

/// What upstream holds under each response id it answered (the conversation's items up to and
/// including that answer's output), kept by `ContextRepeated` to send them again.
static HELD: LazyLock<Mutex<HashMap<String, Vec<Value>>>> = LazyLock::new(Default::default);

/// `ContextRepeated`: a request continued by `previous_response_id` gets the items upstream
/// already holds under that id put before its own. Returns what upstream holds once it has read
/// this request (before its answer): the earlier items and this request's own.
fn repeat_context(v: &mut Value) -> Vec<Value> {
    let own: Vec<Value> = match &v["input"] {
        Value::Array(items) => items.clone(),
        Value::String(text) => vec![json!({"role": "user", "content": text})],
        _ => Vec::new(),
    };
    let earlier = (v["previous_response_id"].as_str())
        .and_then(|id| {
            HELD.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(id)
                .cloned()
        })
        .unwrap_or_default();
    if !earlier.is_empty() {
        v["input"] = Value::Array(earlier.iter().chain(&own).cloned().collect());
    }
    earlier.into_iter().chain(own).collect()
}

/// Keeps `held` and the answer's output under the answer's response id (buffered or streamed).
fn remember_context(mut held: Vec<Value>, body: &[u8]) {
    let answer = match serde_json::from_slice::<Value>(body) {
        Ok(v) => v,
        Err(_) => (parse_events(body).events.into_iter())
            .map(|(_, e)| e)
            .find(|e| e["type"] == "response.completed")
            .map(|e| e["response"].clone())
            .unwrap_or_default(),
    };
    let Some(id) = answer["id"].as_str() else {
        return;
    };
    held.extend(answer["output"].as_array().into_iter().flatten().cloned());
    (HELD.lock().unwrap_or_else(PoisonError::into_inner)).insert(id.to_string(), held);
}

// ---------------------------------------------------------------- stream framing

/// A stream's events (SSE `event:` name and JSON data; Gemini's JSON array elements).
struct Events {
    events: Vec<(Option<String>, Value)>,
    done: bool,
    array: bool,
}

fn parse_events(body: &[u8]) -> Events {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    if text.trim_start().starts_with('[') {
        let v: Vec<Value> = serde_json::from_str(text.trim()).unwrap_or_default();
        return Events {
            events: v.into_iter().map(|e| (None, e)).collect(),
            done: false,
            array: true,
        };
    }
    let mut out = Events {
        events: Vec::new(),
        done: false,
        array: false,
    };
    for block in text.split("\n\n") {
        let mut name = None;
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(n) = line.strip_prefix("event:") {
                name = Some(n.trim().to_string());
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push(d.strip_prefix(' ').unwrap_or(d));
            }
        }
        if data.is_empty() {
            continue;
        }
        let joined = data.join("\n");
        if joined.trim() == "[DONE]" {
            out.done = true;
        } else if let Ok(v) = serde_json::from_str(&joined) {
            out.events.push((name, v));
        }
    }
    out
}

fn write_events(e: &Events) -> Vec<u8> {
    if e.array {
        let v: Vec<&Value> = e.events.iter().map(|(_, v)| v).collect();
        return serde_json::to_vec(&v).unwrap_or_default();
    }
    let mut out = String::new();
    for (name, v) in &e.events {
        if let Some(n) = name {
            out.push_str(&format!("event: {n}\n"));
        }
        out.push_str(&format!("data: {v}\n\n"));
    }
    if e.done {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

fn ty(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

// ---------------------------------------------------------------- response mutations

/// The stream's mutation for `m` in `fmt`, one helper a mutant (none where `m` is not a stream
/// mutant or does not apply to `fmt`).
fn mutate_stream(m: Mutant, fmt: Format, e: &mut Events) {
    match (m, fmt) {
        (Mutant::StreamCallsSwallowed, _) => swallow_stream_calls(fmt, e),
        (Mutant::ParallelMerged, _) => merge_parallel_calls(fmt, e),
        (Mutant::ArgumentsHeldBack, Format::Chat) => hold_back_chat_arguments(e),
        (Mutant::ArgumentsHeldBack, Format::Messages | Format::Responses) => {
            hold_back_arguments_until_done(fmt, e);
        }
        (Mutant::FinishStop, _) => {
            for (_, v) in &mut e.events {
                finish_stop(fmt, v);
            }
        }
        (Mutant::SharedIndexMerged, Format::Chat) => unname_later_calls_at_an_index(e),
        (Mutant::UsageOnFinishChunk, Format::Chat) => move_usage_to_the_finish_chunk(e),
        (Mutant::UsageDropped, _) => {
            for (_, v) in &mut e.events {
                drop_usage(v);
            }
        }
        (Mutant::TerminalDropped, _) => drop_terminal_events(e),
        _ => {}
    }
}

/// `StreamCallsSwallowed`: every tool call's events (or parts) removed.
fn swallow_stream_calls(fmt: Format, e: &mut Events) {
    match fmt {
        Format::Chat => {
            for (_, v) in &mut e.events {
                for c in v["choices"].as_array_mut().into_iter().flatten() {
                    if let Some(d) = c.get_mut("delta").and_then(Value::as_object_mut) {
                        d.remove("tool_calls");
                    }
                }
            }
        }
        Format::Messages => {
            let tools: BTreeSet<u64> = e
                .events
                .iter()
                .filter(|(_, v)| {
                    ty(v) == "content_block_start" && v["content_block"]["type"] == "tool_use"
                })
                .filter_map(|(_, v)| v["index"].as_u64())
                .collect();
            e.events.retain(|(_, v)| {
                !(ty(v).starts_with("content_block")
                    && v["index"].as_u64().is_some_and(|i| tools.contains(&i)))
            });
        }
        Format::Responses => {
            e.events.retain(|(_, v)| {
                !(v["item"]["type"] == "function_call"
                    || ty(v).starts_with("response.function_call_arguments"))
            });
            for (_, v) in &mut e.events {
                if let Some(out) = v
                    .get_mut("response")
                    .and_then(|r| r.get_mut("output"))
                    .and_then(Value::as_array_mut)
                {
                    out.retain(|i| i["type"] != "function_call");
                }
            }
        }
        Format::Gemini => {
            for (_, v) in &mut e.events {
                for c in v["candidates"].as_array_mut().into_iter().flatten() {
                    if let Some(parts) = c
                        .get_mut("content")
                        .and_then(|c| c.get_mut("parts"))
                        .and_then(Value::as_array_mut)
                    {
                        parts.retain(|p| p.get("functionCall").is_none());
                    }
                }
            }
        }
    }
}

/// Every streamed Chat tool-call delta of `e` (`choices[].delta.tool_calls[]`), in order.
fn chat_call_deltas(e: &mut Events) -> impl Iterator<Item = &mut Value> {
    e.events.iter_mut().flat_map(|(_, v)| {
        (v["choices"].as_array_mut().into_iter().flatten()).flat_map(|c| {
            c["delta"]["tool_calls"]
                .as_array_mut()
                .into_iter()
                .flatten()
        })
    })
}

/// `ParallelMerged`: every call's events moved to the first call's index (Gemini unchanged).
fn merge_parallel_calls(fmt: Format, e: &mut Events) {
    match fmt {
        Format::Chat => {
            for tc in chat_call_deltas(e) {
                tc["index"] = json!(0);
            }
        }
        Format::Messages => {
            let tools: Vec<u64> = e
                .events
                .iter()
                .filter(|(_, v)| {
                    ty(v) == "content_block_start" && v["content_block"]["type"] == "tool_use"
                })
                .filter_map(|(_, v)| v["index"].as_u64())
                .collect();
            if let Some(first) = tools.first() {
                for (_, v) in &mut e.events {
                    if ty(v).starts_with("content_block")
                        && v["index"].as_u64().is_some_and(|i| tools.contains(&i))
                    {
                        v["index"] = json!(first);
                    }
                }
            }
        }
        Format::Responses => {
            let calls: Vec<u64> = e
                .events
                .iter()
                .filter(|(_, v)| {
                    ty(v) == "response.output_item.added" && v["item"]["type"] == "function_call"
                })
                .filter_map(|(_, v)| v["output_index"].as_u64())
                .collect();
            if let Some(first) = calls.first() {
                for (_, v) in &mut e.events {
                    if v["output_index"]
                        .as_u64()
                        .is_some_and(|i| calls.contains(&i))
                    {
                        v["output_index"] = json!(first);
                    }
                }
            }
        }
        Format::Gemini => {}
    }
}

/// `ArgumentsHeldBack` on Chat: every call's arguments emptied and sent whole in the chunk that
/// carries the finish.
fn hold_back_chat_arguments(e: &mut Events) {
    let mut args: Vec<(u64, String)> = Vec::new();
    for tc in chat_call_deltas(e) {
        let i = tc["index"].as_u64().unwrap_or(0);
        let a = tc["function"]["arguments"]
            .as_str()
            .unwrap_or("")
            .to_string();
        match args.iter_mut().find(|(k, _)| *k == i) {
            Some((_, s)) => s.push_str(&a),
            None => args.push((i, a)),
        }
        if tc["function"].get("arguments").is_some() {
            tc["function"]["arguments"] = json!("");
        }
    }
    // All of it in the event that carries the finish.
    for (_, v) in &mut e.events {
        for c in v["choices"].as_array_mut().into_iter().flatten() {
            if c["finish_reason"].is_string() {
                c["delta"]["tool_calls"] = args
                    .iter()
                    .map(|(i, a)| json!({"index": i, "function": {"arguments": a}}))
                    .collect();
            }
        }
    }
}

/// `ArgumentsHeldBack` on Messages and Responses: a call's argument deltas held back and sent as
/// one delta just before the event that closes the call.
fn hold_back_arguments_until_done(fmt: Format, e: &mut Events) {
    let is_delta = |v: &Value| {
        (fmt == Format::Messages
            && ty(v) == "content_block_delta"
            && v["delta"]["type"] == "input_json_delta")
            || ty(v) == "response.function_call_arguments.delta"
    };
    let slot = |v: &Value| {
        if fmt == Format::Messages {
            v["index"].as_u64()
        } else {
            v["output_index"].as_u64()
        }
    };
    let mut out: Vec<(Option<String>, Value)> = Vec::new();
    let mut held: Vec<(u64, String, Value)> = Vec::new();
    for (name, v) in e.events.drain(..) {
        if is_delta(&v) {
            let s = slot(&v).unwrap_or(0);
            let frag = if fmt == Format::Messages {
                v["delta"]["partial_json"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            } else {
                v["delta"].as_str().unwrap_or("").to_string()
            };
            match held.iter_mut().find(|(k, _, _)| *k == s) {
                Some((_, a, _)) => a.push_str(&frag),
                None => held.push((s, frag, v.clone())),
            }
            continue;
        }
        let closes = (fmt == Format::Messages && ty(&v) == "content_block_stop")
            || ty(&v) == "response.function_call_arguments.done";
        if closes
            && let Some(s) = slot(&v)
            && let Some(pos) = held.iter().position(|(k, _, _)| *k == s)
        {
            let (_, all, mut first) = held.remove(pos);
            if fmt == Format::Messages {
                first["delta"]["partial_json"] = json!(all);
            } else {
                first["delta"] = json!(all);
            }
            let n = name.clone().map(|_| ty(&first).to_string());
            out.push((n, first));
        }
        out.push((name, v));
    }
    e.events = out;
}

/// `SharedIndexMerged` on Chat: every call after the first at an index loses its id (and
/// name), so that a client merges it into the first.
fn unname_later_calls_at_an_index(e: &mut Events) {
    let mut seen: BTreeSet<u64> = BTreeSet::new();
    for tc in chat_call_deltas(e) {
        let i = tc["index"].as_u64().unwrap_or(0);
        if tc.get("id").is_some_and(Value::is_string)
            && !seen.insert(i)
            && let Some(o) = tc.as_object_mut()
        {
            o.remove("id");
            if let Some(f) = o.get_mut("function").and_then(Value::as_object_mut) {
                f.remove("name");
            }
        }
    }
}

/// `UsageOnFinishChunk` on Chat: the usage-only chunk removed and its usage put on the last chunk
/// with a finish.
fn move_usage_to_the_finish_chunk(e: &mut Events) {
    let own = e.events.iter().position(|(_, v)| {
        v["choices"].as_array().is_some_and(Vec::is_empty) && v["usage"].is_object()
    });
    if let Some(own) = own {
        let (_, chunk) = e.events.remove(own);
        let finish = e
            .events
            .iter_mut()
            .rev()
            .find(|(_, v)| v["choices"][0]["finish_reason"].is_string());
        if let Some((_, v)) = finish {
            v["usage"] = chunk["usage"].clone();
        }
    }
}

/// `TerminalDropped`: no `[DONE]`, no terminal event.
fn drop_terminal_events(e: &mut Events) {
    e.done = false;
    e.events.retain(|(_, v)| {
        !matches!(
            ty(v),
            "message_stop" | "response.completed" | "response.incomplete"
        )
    });
}

fn finish_stop(fmt: Format, v: &mut Value) {
    match fmt {
        Format::Chat => {
            for c in v["choices"].as_array_mut().into_iter().flatten() {
                if c["finish_reason"] == "tool_calls" {
                    c["finish_reason"] = json!("stop");
                }
            }
        }
        Format::Messages => {
            for p in ["/stop_reason", "/delta/stop_reason"] {
                if let Some(r) = v.pointer_mut(p)
                    && r == "tool_use"
                {
                    *r = json!("end_turn");
                }
            }
        }
        Format::Responses | Format::Gemini => {}
    }
}

/// `key` removed from every tool of a request body (from a Chat tool's `function`).
/// The parallel switch removed: Chat's and Responses' `parallel_tool_calls`, Anthropic's
/// `tool_choice.disable_parallel_tool_use` (Gemini has none).
fn drop_parallel(o: &mut serde_json::Map<String, Value>) {
    o.remove("parallel_tool_calls");
    if let Some(tc) = o.get_mut("tool_choice").and_then(Value::as_object_mut) {
        tc.remove("disable_parallel_tool_use");
    }
}

/// An allowed subset widened to every tool: OpenAI's `allowed_tools` sent as its bare mode
/// (Chat nests it under `allowed_tools`).
fn widen_allowed(o: &mut serde_json::Map<String, Value>) {
    if let Some(tc) = o.get("tool_choice")
        && tc["type"] == "allowed_tools"
    {
        let mode = tc
            .pointer("/allowed_tools/mode")
            .unwrap_or(&tc["mode"])
            .clone();
        o.insert("tool_choice".into(), mode);
    }
}

fn remove_tool_key(fmt: Format, o: &mut serde_json::Map<String, Value>, key: &str) {
    for t in o
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let target = match fmt {
            Format::Chat => t.get_mut("function"),
            _ => Some(t),
        };
        if let Some(x) = target.and_then(Value::as_object_mut) {
            x.remove(key);
        }
    }
}

/// An answer `max_tokens` cut inside a call, handed as a finished one: Chat `length` as
/// `tool_calls`, Anthropic `max_tokens` as `tool_use`, Responses `incomplete` as `completed`
/// (`name`: the stream event's name, renamed with its type).
fn cut_call_finished(name: &mut Option<String>, v: &mut Value) {
    for c in v["choices"].as_array_mut().into_iter().flatten() {
        if c["finish_reason"] == "length" {
            c["finish_reason"] = json!("tool_calls");
        }
    }
    for p in ["/stop_reason", "/delta/stop_reason"] {
        if let Some(r) = v.pointer_mut(p)
            && r == "max_tokens"
        {
            *r = json!("tool_use");
        }
    }
    let complete = |r: &mut Value| {
        if r["status"] == "incomplete" && r.get("output").is_some() {
            r["status"] = json!("completed");
            r["incomplete_details"] = Value::Null;
        }
    };
    complete(v);
    if let Some(r) = v.get_mut("response") {
        complete(r);
    }
    if v["type"] == "response.incomplete" {
        v["type"] = json!("response.completed");
        *name = name.as_ref().map(|_| "response.completed".to_string());
    }
}

/// A well-formed success with empty content, in the format.
fn empty_success(fmt: Format, stream: bool, array: bool) -> Vec<u8> {
    let one = |e: &Events| write_events(e);
    let ev = |events: Vec<(Option<&str>, Value)>, done: bool| Events {
        events: events
            .into_iter()
            .map(|(n, v)| (n.map(str::to_string), v))
            .collect(),
        done,
        array,
    };
    match (fmt, stream) {
        (Format::Chat, false) => json!({"id": "chatcmpl-m", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]})
        .to_string()
        .into_bytes(),
        (Format::Chat, true) => one(&ev(
            vec![(None, json!({"id": "chatcmpl-m", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}))],
            true,
        )),
        (Format::Messages, false) => json!({"id": "msg_m", "type": "message", "role": "assistant", "model": "m",
            "content": [], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 0, "output_tokens": 0}})
        .to_string()
        .into_bytes(),
        (Format::Messages, true) => one(&ev(
            vec![
                (Some("message_start"), json!({"type": "message_start", "message": {"id": "msg_m", "type": "message",
                    "role": "assistant", "model": "m", "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 0, "output_tokens": 0}}})),
                (Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                    "stop_sequence": null}, "usage": {"output_tokens": 0}})),
                (Some("message_stop"), json!({"type": "message_stop"})),
            ],
            false,
        )),
        (Format::Responses, false) => empty_response().to_string().into_bytes(),
        (Format::Responses, true) => one(&ev(
            vec![
                (Some("response.created"), json!({"type": "response.created", "sequence_number": 0,
                    "response": {"id": "resp_m", "object": "response", "status": "in_progress", "output": [], "model": "m"}})),
                (Some("response.completed"), json!({"type": "response.completed", "sequence_number": 1,
                    "response": empty_response()})),
            ],
            false,
        )),
        (Format::Gemini, false) => gemini_empty().to_string().into_bytes(),
        (Format::Gemini, true) => one(&ev(vec![(None, gemini_empty())], false)),
    }
}

fn empty_response() -> Value {
    json!({"id": "resp_m", "object": "response", "created_at": 0, "status": "completed", "model": "m",
        "output": [], "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}})
}

fn gemini_empty() -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}],
        "modelVersion": "m"})
}

fn mutate_response(
    m: Mutant,
    fmt: Format,
    stream: bool,
    status: u16,
    body: Vec<u8>,
) -> (u16, Vec<u8>) {
    if m == Mutant::ErrorAs200 && status >= 500 {
        let array =
            stream && fmt == Format::Gemini && !String::from_utf8_lossy(&body).contains("data:");
        return (200, empty_success(fmt, stream, array));
    }
    if status >= 400 {
        return (status, body);
    }
    if matches!(
        m,
        Mutant::SearchAsCall | Mutant::NamespaceDropped | Mutant::CallerDropped
    ) {
        return (status, server_items(m, stream, body));
    }
    match m {
        Mutant::CutCallFinished if !stream => {
            let Ok(mut v) = serde_json::from_slice::<Value>(&body) else {
                return (status, body);
            };
            cut_call_finished(&mut None, &mut v);
            (status, v.to_string().into_bytes())
        }
        Mutant::CutCallFinished => {
            let mut e = parse_events(&body);
            for (name, v) in &mut e.events {
                cut_call_finished(name, v);
            }
            (status, write_events(&e))
        }
        Mutant::FinishStop if !stream => {
            let Ok(mut v) = serde_json::from_slice::<Value>(&body) else {
                return (status, body);
            };
            finish_stop(fmt, &mut v);
            (status, v.to_string().into_bytes())
        }
        Mutant::UsageDropped if !stream => {
            let Ok(mut v) = serde_json::from_slice::<Value>(&body) else {
                return (status, body);
            };
            drop_usage(&mut v);
            (status, v.to_string().into_bytes())
        }
        Mutant::GeminiSameId if fmt == Format::Gemini && !stream => {
            let Ok(mut v) = serde_json::from_slice::<Value>(&body) else {
                return (status, body);
            };
            same_gemini_id(&mut v);
            (status, v.to_string().into_bytes())
        }
        Mutant::GeminiSameId if fmt == Format::Gemini => {
            let mut e = parse_events(&body);
            e.events.iter_mut().for_each(|(_, v)| same_gemini_id(v));
            (status, write_events(&e))
        }
        Mutant::StreamCallsSwallowed
        | Mutant::ParallelMerged
        | Mutant::ArgumentsHeldBack
        | Mutant::FinishStop
        | Mutant::UsageDropped
        | Mutant::TerminalDropped
        | Mutant::SharedIndexMerged
        | Mutant::UsageOnFinishChunk
            if stream =>
        {
            let mut e = parse_events(&body);
            mutate_stream(m, fmt, &mut e);
            (status, write_events(&e))
        }
        _ => (status, body),
    }
}

/// `SearchAsCall`, `NamespaceDropped` and `CallerDropped` over a whole body or each stream
/// event.
fn server_items(m: Mutant, stream: bool, body: Vec<u8>) -> Vec<u8> {
    let apply = |v: &mut Value| match m {
        Mutant::SearchAsCall => search_as_call(v),
        Mutant::CallerDropped => drop_caller(v),
        _ => drop_namespace(v),
    };
    if !stream {
        let Ok(mut v) = serde_json::from_slice::<Value>(&body) else {
            return body;
        };
        apply(&mut v);
        return v.to_string().into_bytes();
    }
    let mut e = parse_events(&body);
    // A `tool_search_output` item's events go: the client is left a function call only.
    if m == Mutant::SearchAsCall {
        e.events
            .retain(|(_, v)| v.pointer("/item/type") != Some(&json!("tool_search_output")));
    }
    e.events.iter_mut().for_each(|(_, v)| apply(v));
    write_events(&e)
}

/// `SearchAsCall`: every tool-search item or block made a client call (Anthropic
/// `server_tool_use` of `tool_search_tool_*` a `tool_use`, its result an empty text block;
/// Responses `tool_search_call` a `function_call` named `tool_search`, its output dropped).
fn search_as_call(v: &mut Value) {
    match v {
        Value::Array(a) => {
            a.retain(|x| ty(x) != "tool_search_output");
            a.iter_mut().for_each(search_as_call);
        }
        Value::Object(o) => {
            let kind = o
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let name = o.get("name").and_then(Value::as_str).unwrap_or("");
            if kind == "server_tool_use" && name.starts_with("tool_search_tool_") {
                o.insert("type".into(), json!("tool_use"));
            } else if kind == "tool_search_tool_result" {
                *v = json!({"type": "text", "text": ""});
                return;
            } else if kind == "tool_search_call" {
                let args = o.get("arguments").cloned().unwrap_or(json!({}));
                o.insert("type".into(), json!("function_call"));
                o.insert("name".into(), json!("tool_search"));
                o.insert("call_id".into(), json!("call_tool_search"));
                o.insert("arguments".into(), json!(args.to_string()));
            }
            o.values_mut().for_each(search_as_call);
        }
        _ => {}
    }
}

/// `NamespaceDropped`: `namespace` removed from every Responses `function_call` item.
fn drop_namespace(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(drop_namespace),
        Value::Object(o) => {
            if o.get("type") == Some(&json!("function_call")) {
                o.remove("namespace");
            }
            o.values_mut().for_each(drop_namespace);
        }
        _ => {}
    }
}

/// `CallerDropped`: `caller` removed from every Responses `function_call` item and Anthropic
/// `tool_use` block.
fn drop_caller(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(drop_caller),
        Value::Object(o) => {
            if matches!(
                o.get("type").and_then(Value::as_str),
                Some("function_call" | "tool_use")
            ) {
                o.remove("caller");
            }
            o.values_mut().for_each(drop_caller);
        }
        _ => {}
    }
}

// ---------------------------------------------------------------- the proxy

async fn forward(
    m: Mutant,
    upstream: Arc<String>,
    client: reqwest::Client,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    let (parts, bytes) = read(req).await;
    let path = parts.uri.path().to_string();
    let pq = path_and_query(&parts);
    let fmt = format_of(&path);
    let mut body_out = bytes.clone();
    let mut stream = false;
    let mut held = None;
    if let (Some(fmt), Ok(mut v)) = (fmt, serde_json::from_slice::<Value>(&bytes)) {
        stream = v["stream"] == true || path.contains(":streamGenerateContent");
        if m == Mutant::ContextRepeated && fmt == Format::Responses {
            held = Some(repeat_context(&mut v));
        }
        if m != Mutant::Faithful {
            mutate_request(m, fmt, stream, &mut v);
            body_out = serde_json::to_vec(&v).unwrap_or_default();
        }
    }
    let answer = match send(&client, &upstream, &parts, body_out).await {
        Ok(a) => a,
        Err(refused) => return refused,
    };
    if let Some(held) = held.filter(|_| answer.status == 200) {
        remember_context(held, &answer.body);
    }
    let (status, out) = match fmt {
        Some(fmt) if m != Mutant::Faithful => {
            mutate_response(m, fmt, stream, answer.status, answer.body)
        }
        _ => (answer.status, answer.body),
    };
    let ctype = if status < 300
        && stream
        && m == Mutant::ErrorAs200
        && !answer.ctype.contains("event-stream")
    {
        if fmt == Some(Format::Gemini) && !pq.contains("alt=sse") {
            "application/json".to_string()
        } else {
            "text/event-stream".to_string()
        }
    } else {
        answer.ctype
    };
    respond(status, &ctype, out)
}

/// Serves mutant `m` on loopback in front of `upstream`; the task ends with the runtime.
async fn serve_mutant(m: Mutant, upstream: String) -> SocketAddr {
    serve(upstream, move |upstream, client, req| {
        forward(m, upstream, client, req)
    })
    .await
}

// ---------------------------------------------------------------- the suite

/// A scratch root with the chosen cases, their tools, and the 500 case.
fn project() -> Scratch {
    let root = Scratch::with_cases("mutants", &CASES);
    std::fs::write(root.join("cases/server_error.toml"), SERVER_ERROR).unwrap();
    root.with_narrowed();
    // Only Chat and Responses callers declare custom tools: the case on those routes only.
    let custom = root.join(format!("cases/{CUSTOM}.toml"));
    let text = std::fs::read_to_string(&custom).unwrap();
    let narrowed = format!("providers = [\"openai-chat\", \"openai-responses\"]\n{text}");
    std::fs::write(&custom, narrowed).unwrap();
    std::fs::write(root.join("mutant.toml"), PROFILE).unwrap();
    root
}

fn run_mutant(root: &Path, cases: &[Arc<Case>], m: Mutant) -> Vec<tooltape::engine::TrialResult> {
    let profile = Arc::new(
        tooltape::gateway::load_gateway(root, root.join("mutant.toml").to_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let routes = profile.routes();
    let trials = tooltape::engine::trials(cases, &routes, None);
    runtime().block_on(async {
        let upstream = Arc::new(tooltape::engine::Upstream::start().await.unwrap());
        let addr = serve_mutant(m, upstream.base_url()).await;
        let url = format!("http://{addr}");
        crate::scratch::run_through(Arc::clone(&profile), trials, &upstream, Some(url), root).await
    })
}

fn first_finding(r: &tooltape::engine::TrialResult) -> String {
    match &r.cell {
        tooltape::engine::Cell::Fail(s) | tooltape::engine::Cell::Broken(s) => s.clone(),
        other => format!("{other:?}"),
    }
}

#[test]
fn the_faithful_proxy_passes_and_each_mutant_fails_exactly_its_trials() {
    let root = project();
    let discovery = discover(&root);
    assert!(discovery.broken.is_empty(), "{:?}", discovery.broken);
    let cases = tooltape::engine::cases_of(&discovery);
    let faithful = run_mutant(&root, &cases, Mutant::Faithful);
    let total = faithful.len();
    assert!(total >= 60, "only {total} trials");
    let bad: Vec<String> = faithful
        .iter()
        .filter(|r| r.cell != tooltape::engine::Cell::Pass)
        .map(|r| format!("{}: {:?} {:?}", r.id.key(), r.cell, r.findings))
        .collect();
    assert!(
        bad.is_empty(),
        "the faithful proxy fails:\n{}",
        bad.join("\n")
    );
    let facts: Vec<Facts> = faithful.iter().map(facts).collect();
    let mut table = String::from(
        "# Mutant gateways\n\n\
         Generated by `cargo test --test it gateway_mutants` (rewrite with `TOOLTAPE_WRITE_DOCS=1`).\n\
         Each row is a loopback proxy written in `tests/it/gateway_mutants.rs`, run through the same\n\
         runner as `tooltape gateway --url` over the same-format routes (chat→openai-chat,\n\
         responses→openai-responses, messages→anthropic, generate-content→gemini) and the cases\n\
         `weather`, `parallel`, `strict_invoice`, `tool_error` (a follow-up round),\n\
         `c04_parallel_shared_index` (Chat calls streamed at one index), a 500 case,\n\
         `c19_reasoning_state_kept` (reasoning carried back on a follow-up round),\n\
         `c19_reasoning_by_reference` (the Responses reasoning item sent back by `item_reference`),\n\
         `c23_hosted_search_beside_function` (on the routes with hosted search) and\n\
         `c24_mcp_name_over_64` (on Gemini's, whose 128-character limit carries it),\n\
         `c26_tools_change_between_rounds` (the tools change on the second request),\n\
         `c25_eager_cut_mid_parameter` (an eager tool's arguments cut by max_tokens),\n\
         `c33_constraints_kept` (an allowed subset or a named tool, parallel off; on the\n\
         routes with a parallel switch), `c28_anthropic_regex_search` (messages→anthropic),\n\
         `c28_responses_tool_search` and `c29_namespaced_call` (responses→openai-responses),\n\
         `c30_anthropic_programmatic` (messages→anthropic) and `c30_responses_programmatic`\n\
         (responses→openai-responses), both modes.\n\
         Every mutant fails exactly the trials it should, each with the expected finding.\n\n",
    );
    table.push_str(&format!("{total} trials per proxy.\n\n"));
    table.push_str("| mutant | trials failed | finding expected | first finding |\n| --- | --- | --- | --- |\n");
    let mut problems = Vec::new();
    // Snapshots: every trial of the faithful proxy, and each mutant's first failing trial.
    let mut snaps: Vec<(String, String)> = Vec::new();
    for m in Mutant::ALL {
        let results = if m == Mutant::Faithful {
            faithful.clone()
        } else {
            run_mutant(&root, &cases, m)
        };
        assert_eq!(results.len(), total);
        let mut failed = 0;
        let mut first = None;
        for (r, f) in results.iter().zip(&facts) {
            assert_eq!(r.id.key(), f.key);
            let fails = r.cell != tooltape::engine::Cell::Pass;
            let should = m.should_fail(f);
            if fails {
                failed += 1;
                if first.is_none() {
                    snaps.push((
                        format!("{}__{}", m.slug(), r.id.snapshot_name()),
                        tooltape::report::suite::snapshot(r),
                    ));
                }
                first.get_or_insert_with(|| first_finding(r));
            }
            if m == Mutant::Faithful {
                snaps.push((
                    format!("Faithful__{}", r.id.snapshot_name()),
                    tooltape::report::suite::snapshot(r),
                ));
            }
            if fails != should {
                problems.push(format!(
                    "{}: {} should {}: {}",
                    m.name(),
                    r.id.key(),
                    if should { "fail" } else { "pass" },
                    first_finding(r)
                ));
            } else if fails
                && !r
                    .findings
                    .iter()
                    .any(|x| x.message.contains(m.finding_in(f)))
            {
                problems.push(format!(
                    "{}: {} fails without the finding `{}`: {:?}",
                    m.name(),
                    r.id.key(),
                    m.finding_in(f),
                    r.findings
                ));
            }
        }
        let expected = facts.iter().filter(|f| m.should_fail(f)).count();
        if m != Mutant::Faithful {
            assert!(expected > 0, "{} has no trial to fail", m.name());
        }
        table.push_str(&format!(
            "| {} | {failed} of {total} | {} | {} |\n",
            m.name(),
            if m.finding().is_empty() {
                "—".to_string()
            } else {
                format!("`{}`", m.finding())
            },
            first.map_or("—".to_string(), |s| format!(
                "`{}`",
                s.replace('|', "\\|")
            )),
        ));
    }
    let translated = translating::run();
    table.push_str(&translated.table);
    snaps.extend(translated.snaps);
    problems.extend(translated.problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(repo().join("tests/snapshots/gateway/mutant"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, yaml) in &snaps {
            insta::assert_snapshot!(name.as_str(), yaml);
        }
    });
    let doc = repo().join("docs/gateways/mutants.md");
    if std::env::var_os("TOOLTAPE_WRITE_DOCS").is_some() {
        std::fs::write(&doc, &table).unwrap();
    }
    let on_disk = std::fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        on_disk == table,
        "{}:1: out of date with the mutant run\n--- expected\n{table}\n--- on disk\n{on_disk}\nrun: TOOLTAPE_WRITE_DOCS=1 cargo test --test it gateway_mutants",
        doc.display()
    );
}
