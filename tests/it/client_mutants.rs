//! Proof that client mode's checks are right: the reference driver (`tooltape client drive`,
//! tooltape's own codecs as the library) must pass every trial over the five wire formats; each
//! mutant driver ships one bug client libraries have shipped and must fail exactly the trials
//! it should, with the expected finding. No third-party install. The table is
//! `docs/clients/mutants.md` (rewrite it with `TOOLTAPE_WRITE_DOCS=1`).

use std::path::Path;
use std::sync::Arc;

use tooltape::client::{Mutant, Spec};
use tooltape::engine::{Cell, TrialResult};
use tooltape::{discover, runtime};

use crate::scratch::{
    CONSTRAINTS, HOSTED, LLAMA_CPP, LONG_NAME, MCP_ERROR, MCP_IMAGE, MCP_REMOTE_REF,
    MCP_STRUCTURED, NAMESPACED, PROGRAM_ANTHROPIC, PROGRAM_RESPONSES, SEARCH_HOSTED, SEARCH_REGEX,
    Scratch, VLLM, bin, repo,
};

/// The chosen cases: one call, parallel calls, parallel calls at one chat index, a call with
/// no arguments, a follow-up round, a follow-up round after reasoning; plus one whose upstream
/// answers 500; a round that changes the tools in force; results given as parts; and a round
/// continued by `previous_response_id`; conversations continued on another provider; a custom
/// tool beside a function; an eager call cut by `max_tokens`; a hosted search the model refuses;
/// class 35's results through an MCP server (on the MCP routes too).
const CASES: [&str; 27] = [
    "weather",
    "parallel",
    "c04_parallel_shared_index",
    "no_args",
    CONSTRAINTS,
    "tool_error",
    "c19_reasoning_state_kept",
    "c20_gemini_calls_without_ids",
    TOOLS_CHANGE,
    "c21_result_text_parts",
    "c21_result_image",
    "c22_previous_response_id",
    CONTINUE_ON_GEMINI,
    CONTINUE_ON_ANTHROPIC,
    CUSTOM,
    CUT,
    FALLBACK,
    PHASE,
    COMPACTION,
    VLLM,
    LLAMA_CPP,
    KIMI_ON_ANTHROPIC,
    KIMI_ON_GEMINI,
    MCP_STRUCTURED,
    MCP_IMAGE,
    MCP_ERROR,
    MCP_REMOTE_REF,
];
/// Class 34, with `VLLM` and `LLAMA_CPP`: a conversation started on vLLM with Kimi's call ids,
/// continued on Anthropic and on Gemini.
const KIMI_ON_ANTHROPIC: &str = "c34_vllm_kimi_ids_continued_on_anthropic";
const KIMI_ON_GEMINI: &str = "c34_vllm_kimi_ids_continued_on_gemini";
/// Class 31: a compaction item upstream answered, to be sent back verbatim.
const COMPACTION: &str = "c31_compaction_kept";
/// Class 32: the Responses message's `phase`, to be sent back with it.
const PHASE: &str = "c32_phase_resent";
/// An OpenAI custom tool the caller declares beside its function (class 23).
const CUSTOM: &str = "c23_custom_tool_beside_function";
/// Conversations continued on another provider: round 2 on Gemini, on Anthropic.
const CONTINUE_ON_GEMINI: &str = "c20_continue_on_other_provider";
const CONTINUE_ON_ANTHROPIC: &str = "c20_continue_on_anthropic";
/// Class 25: an eager tool's arguments cut by `max_tokens` midway through a parameter.
const CUT: &str = "c25_eager_cut_mid_parameter";
/// A hosted `web_search` the model answers "not supported" (a library hands the 400 over).
const FALLBACK: &str = "web_search_fallback";
const TOOLS_CHANGE: &str = "c26_tools_change_between_rounds";
const SERVER_ERROR: &str = r#"description = "Upstream answers 500: the library must raise, not hand over a success"
tools = ["get_weather"]
choices = ["auto"]

[[messages]]
role = "user"
content = "Client mutant check: is it raining in Oslo?"

[simulate]
error = { status = 500, message = "upstream exploded" }
"#;

/// The cases with a follow-up round (ids sent back upstream): `CASES` from `tool_error` on.
const FOLLOW_UP: &[&str] = CASES.split_at(5).1;

/// What the faithful run tells about a trial.
struct Facts {
    key: String,
    case: String,
    /// The route's API (an MCP route's too).
    api: String,
    /// An MCP route: the tools and results come from tooltape's MCP server.
    mcp: bool,
    choice: String,
    stream: bool,
    calls: usize,
    /// Upstream made a call with no arguments (`{}`).
    empty_call: bool,
}

fn facts(r: &TrialResult) -> Facts {
    Facts {
        key: r.id.key(),
        case: r.id.case.clone(),
        api: (r.id.route.strip_prefix("mcp-"))
            .unwrap_or(&r.id.route)
            .to_string(),
        mcp: r.id.route.starts_with("mcp-"),
        choice: r.id.choice.clone(),
        stream: r.id.mode == tooltape::Mode::Stream,
        calls: r
            .downstream_outcome
            .as_ref()
            .map_or(0, |o| o.tool_calls.len()),
        empty_call: r.downstream_outcome.as_ref().is_some_and(|o| {
            o.tool_calls
                .iter()
                .any(|c| c.arguments.as_object().is_some_and(|a| a.is_empty()))
        }),
    }
}

fn name(m: Mutant) -> &'static str {
    match m {
        Mutant::Faithful => "faithful (tooltape's own codecs)",
        Mutant::DropTools => "`tools` not sent when not streaming",
        Mutant::NeverYield => "streamed calls accumulated, never yielded",
        Mutant::RequiredToAuto => "`required` sent as `auto`",
        Mutant::MergeParallel => "parallel calls merged into one",
        Mutant::LoseIds => "call ids lost",
        Mutant::OmitStrict => "Responses tools sent without `strict` (non-strict caller)",
        Mutant::EmptyFragments => "a no-argument call streamed as `\"\"`, accumulated as `{}`",
        Mutant::DropReasoning => "reasoning state not kept for the next round",
        Mutant::ResultsOneId => "every result sent under the first call's id",
        Mutant::StaleTools => "the first request's tools sent again in every round",
        Mutant::KimiIds => "call ids sent in Kimi's style (`functions.NAME:IDX`) to Anthropic",
        Mutant::TruncateNames => "names over 64 characters cut to 64, never restored",
        Mutant::DropHosted => "hosted web search dropped, the rest sent",
        Mutant::UsageOnFinish => "Chat usage read from the finish chunk only",
        Mutant::QuoteParts => "a tool result's parts sent as one JSON string",
        Mutant::DropResponseId => "a round to continue by `previous_response_id` sent without it",
        Mutant::ForeignReasoning => {
            "a conversation continued on another provider with the first's reasoning as its own"
        }
        Mutant::CustomAsFunction => "a custom tool sent as an ordinary function",
        Mutant::CutCallFinished => {
            "a call cut by max_tokens handed over as finished (`tool_calls`)"
        }
        Mutant::SwallowUnsupported => "a hosted tool's \"not supported\" 400 swallowed",
        Mutant::DropEager => "a tool's `eager_input_streaming` switch left out",
        Mutant::WholeConversation => {
            "continued with the whole conversation instead of previous_response_id"
        }
        Mutant::ResendWithId => "previous_response_id plus the earlier items again",
        Mutant::DropParallel => "the parallel switch (off) left out",
        Mutant::WidenAllowed => "an allowed subset sent as plain `auto` / `required`",
        Mutant::DropDeferral => "deferred tools sent loaded beside the tool search",
        Mutant::SearchAsCall => "the upstream's tool search handed over as the caller's call",
        Mutant::DropNamespace => "a call's namespace not kept for the next round",
        Mutant::DropPhase => "the message's `phase` not kept for the next round",
        Mutant::DropCompaction => "compaction items not kept for the next round",
        Mutant::DropCallers => "a tool's `allowed_callers` left out",
        Mutant::DropCaller => "a call's `caller` not kept for the next round",
        Mutant::DropContainer => "Anthropic's `container` not named on the next round",
        Mutant::DropErrorFlag => "a tool result's error flag not sent",
        Mutant::McpBypass => "MCP tools declared by hand, results made up",
        Mutant::McpGivenResults => "MCP results sent without calling the server",
        Mutant::McpDropNulls => "`null` arguments dropped before the MCP call",
        Mutant::McpFetchRefs => "an MCP schema's network `$ref` fetched",
    }
}

/// What a failing trial's findings must contain. The text protocol carries tools and choice as
/// injected instructions: a change to either is an instruction that differs.
fn finding(m: Mutant, api: &str) -> &'static str {
    let text = api == "text-protocol";
    match m {
        Mutant::DropTools | Mutant::RequiredToAuto if text => "injected instructions differ",
        Mutant::Faithful => "",
        Mutant::DropTools => "tools dropped",
        Mutant::NeverYield => "streamed calls never yielded",
        Mutant::RequiredToAuto => "required sent as auto",
        Mutant::MergeParallel => "handed over as",
        // A Gemini route's calls carry no ids; continued on Anthropic, the results answer none.
        Mutant::LoseIds if api == "gemini" => "answers no call",
        Mutant::LoseIds => "without its id",
        Mutant::OmitStrict => "sent to the Responses API without",
        Mutant::EmptyFragments => "in the chunks are \"\" (not JSON)",
        Mutant::DropReasoning => "reasoning not carried back",
        Mutant::ResultsOneId => "is linked to the call",
        Mutant::StaleTools => "the tools sent upstream are not the tools in force",
        Mutant::KimiIds => "is invalid for its API",
        Mutant::TruncateNames => "not restored",
        Mutant::DropHosted => "hosted web search dropped",
        Mutant::UsageOnFinish => "usage sent in its own final chunk",
        Mutant::QuoteParts if text => "not in the text protocol's <tool_result>",
        Mutant::QuoteParts => "JSON-quoted into one string",
        Mutant::DropResponseId => "continued with previous_response_id",
        Mutant::ForeignReasoning => "as its own",
        Mutant::CustomAsFunction => "sent as an ordinary function",
        Mutant::CutCallFinished => "for upstream's output-token limit",
        Mutant::SwallowUnsupported => "handed to the caller as a success, with no error",
        Mutant::DropEager => "eager_input_streaming dropped",
        Mutant::WholeConversation => "the whole conversation sent again",
        Mutant::ResendWithId => "the earlier items again",
        Mutant::DropParallel => "parallel_tool_calls false dropped",
        Mutant::WidenAllowed => "tool_choice allowed-",
        Mutant::DropDeferral => "sent loaded",
        Mutant::SearchAsCall => "handed to the client as its own call",
        Mutant::DropNamespace => "Missing namespace for function_call",
        Mutant::DropPhase => "phase not carried back",
        Mutant::DropCompaction => "compaction item not carried back",
        Mutant::DropCallers => "`allowed_callers` dropped or changed",
        Mutant::DropCaller => "without its caller",
        Mutant::DropContainer => "not named on the next round",
        Mutant::DropErrorFlag => "without its error flag",
        Mutant::McpBypass => "not listed from the MCP server",
        Mutant::McpGivenResults => "did not come from the MCP server",
        Mutant::McpDropNulls => "with other arguments than the model's",
        Mutant::McpFetchRefs => "was fetched",
    }
}

/// Whether the trial (as the faithful run saw it) is one this mutant must fail.
fn should_fail(m: Mutant, t: &Facts) -> bool {
    // Gemini and the text protocol carry no call ids on the wire.
    let ids = !matches!(t.api.as_str(), "gemini" | "text-protocol");
    match m {
        Mutant::Faithful => false,
        // Without tools `none` means the same, except in the text protocol's instructions.
        // The hosted search the model refuses comes without tools.
        Mutant::DropTools => {
            !t.stream && (t.choice != "none" || t.api == "text-protocol") && t.case != FALLBACK
        }
        Mutant::NeverYield => t.stream && t.calls > 0,
        Mutant::RequiredToAuto => t.choice == "required",
        Mutant::MergeParallel => t.calls > 1,
        Mutant::LoseIds => t.calls > 0 && (ids || round_api(t) == "anthropic"),
        // Every chosen case but the hosted search's sends tools, none of them strict.
        Mutant::OmitStrict => t.api == "openai-responses" && t.case != FALLBACK,
        Mutant::EmptyFragments => t.stream && t.empty_call,
        // A follow-up round after a reasoning answer; on Gemini (a Gemini 3 model, clients/
        // tooltape.toml) every follow-up round: Gemini 3 signs its calls and validates them back.
        // (A round continued on Anthropic takes none of Gemini's reasoning back.)
        // A model server's reasoning text on Chat, on a round that stays on that server.
        Mutant::DropReasoning => {
            let follow_up = FOLLOW_UP.contains(&t.case.as_str()) && t.case != CONTINUE_ON_ANTHROPIC;
            let server = t.case == VLLM || t.case == LLAMA_CPP;
            t.calls > 0
                && (t.case == "c19_reasoning_state_kept"
                    || t.api == "gemini" && follow_up
                    || server)
        }
        // A round answering two calls (the program's two among them); Gemini links results by
        // order and name, not id.
        Mutant::ResultsOneId => {
            t.calls > 1 && (t.case == "c20_gemini_calls_without_ids" || programmed(t)) && ids
        }
        Mutant::StaleTools => t.calls > 0 && t.case == TOOLS_CHANGE,
        // Ids are sent back on a follow-up round; only Anthropic's pattern rejects Kimi's.
        Mutant::KimiIds => {
            let searched = t.case == SEARCH_REGEX || t.case == SEARCH_HOSTED;
            let follow_up = FOLLOW_UP.contains(&t.case.as_str()) || programmed(t) || searched;
            round_api(t) == "anthropic" && t.calls > 0 && follow_up
        }
        Mutant::TruncateNames => t.case == LONG_NAME,
        Mutant::DropHosted => t.case == HOSTED || t.case == FALLBACK,
        // Chat streams with usage asked (the text protocol asks none): usage in its own chunk.
        Mutant::UsageOnFinish => t.stream && t.api == "openai-chat" && t.case != "server_error",
        Mutant::QuoteParts => t.calls > 0 && (t.case.starts_with("c21_") || t.case == MCP_IMAGE),
        // Only a Responses caller continues by id.
        Mutant::DropResponseId => {
            t.calls > 0 && t.case == "c22_previous_response_id" && t.api == "openai-responses"
        }
        // Every first provider of these cases answers with reasoning state (a signed thinking
        // block, an encrypted reasoning item, a signed call); a model server's reasoning text
        // is not sealed: there is nothing to forge from it.
        Mutant::ForeignReasoning => {
            let server = t.case == KIMI_ON_ANTHROPIC || t.case == KIMI_ON_GEMINI;
            round_api(t) != t.api && t.calls > 0 && !server
        }
        // The case runs on the Chat and Responses routes only (its tool's wire forms).
        Mutant::CustomAsFunction => t.case == CUSTOM,
        Mutant::CutCallFinished => t.case == CUT,
        Mutant::SwallowUnsupported => t.case == FALLBACK,
        // Only Anthropic's API has the switch (the case's tool is eager).
        Mutant::DropEager => t.case == CUT && t.api == "anthropic",
        // As `DropResponseId`: only a Responses caller continues by id.
        Mutant::WholeConversation | Mutant::ResendWithId => {
            t.calls > 0 && t.case == "c22_previous_response_id" && t.api == "openai-responses"
        }
        Mutant::DropParallel => t.case == CONSTRAINTS,
        Mutant::WidenAllowed => t.choice.starts_with("allowed-"),
        Mutant::DropDeferral => t.case == SEARCH_REGEX || t.case == SEARCH_HOSTED,
        // A search ran before the call the model made of the tool it found.
        Mutant::SearchAsCall => (t.case == SEARCH_REGEX || t.case == SEARCH_HOSTED) && t.calls > 0,
        // The case with a round: its call replayed without the namespace.
        Mutant::DropNamespace => (t.case == NAMESPACED || t.case == SEARCH_HOSTED) && t.calls > 0,
        // Only Responses answers a phase, on the message before the call.
        Mutant::DropPhase => t.case == PHASE && t.api == "openai-responses" && t.calls > 0,
        // Each runner on its own API (the cases are narrowed to it).
        Mutant::DropCallers => programmed(t),
        Mutant::DropCaller => programmed(t) && t.calls > 0,
        // Only Anthropic runs the code in a container.
        Mutant::DropContainer => t.case == PROGRAM_ANTHROPIC && t.calls > 0,
        // The APIs with an error flag on a result (the text protocol's `error="true"` is not
        // judged).
        Mutant::DropErrorFlag => {
            (t.case == "tool_error" || t.case == MCP_ERROR)
                && matches!(round_api(t), "anthropic" | "gemini")
                && t.calls > 0
        }
        Mutant::McpBypass => t.mcp,
        Mutant::McpGivenResults => t.mcp && t.calls > 0,
        Mutant::McpDropNulls => t.mcp && t.case == MCP_STRUCTURED && t.calls > 0,
        Mutant::McpFetchRefs => t.mcp && t.case == MCP_REMOTE_REF,
        // Only Responses and Anthropic answer compaction items.
        Mutant::DropCompaction => {
            t.case == COMPACTION
                && matches!(t.api.as_str(), "openai-responses" | "anthropic")
                && t.calls > 0
        }
    }
}

/// A trial of class 30's cases: a tool only the model's code may call.
fn programmed(t: &Facts) -> bool {
    t.case == PROGRAM_ANTHROPIC || t.case == PROGRAM_RESPONSES
}

/// The API the trial's follow-up round goes to (another provider's, in a continued case).
fn round_api(t: &Facts) -> &str {
    match t.case.as_str() {
        CONTINUE_ON_GEMINI | KIMI_ON_GEMINI => "gemini",
        CONTINUE_ON_ANTHROPIC | KIMI_ON_ANTHROPIC => "anthropic",
        _ => &t.api,
    }
}

/// A scratch root with the chosen cases, their tools, and the 500 case.
fn project() -> Scratch {
    let root = Scratch::with_cases("client-mutants", &CASES);
    std::fs::write(root.join("cases/server_error.toml"), SERVER_ERROR).unwrap();
    root.with_narrowed();
    // Only Chat and Responses callers declare custom tools: the case on those routes only.
    let custom = root.join(format!("cases/{CUSTOM}.toml"));
    let text = std::fs::read_to_string(&custom).unwrap();
    let narrowed = format!("providers = [\"openai-chat\", \"openai-responses\"]\n{text}");
    std::fs::write(&custom, narrowed).unwrap();
    root
}

fn run(root: &Path, m: Mutant) -> Vec<TrialResult> {
    let profile =
        tooltape::client::load_client(repo(), "tooltape").unwrap_or_else(|e| panic!("{e}"));
    let discovery = discover(root);
    assert!(discovery.broken.is_empty(), "{:?}", discovery.broken);
    let cases = tooltape::engine::cases_of(&discovery);
    let trials = tooltape::engine::trials(&cases, &profile.routes(), None);
    let slug = Mutant::ALL.iter().find(|(_, x)| *x == m).unwrap().0;
    let spec = Spec {
        argv: [bin(), "client", "drive", "--mutant", slug]
            .map(String::from)
            .to_vec(),
        env: Vec::new(),
        cwd: root.to_path_buf(),
        log: root.join(format!("{slug}.log")),
    };
    runtime().block_on(async {
        let upstream = Arc::new(tooltape::engine::Upstream::start().await.unwrap());
        let library = tooltape::client::Library::new(profile, repo()).with_driver(spec);
        crate::scratch::run_through(Arc::new(library), trials, &upstream, None, root).await
    })
}

fn first_finding(r: &TrialResult) -> String {
    match &r.cell {
        Cell::Fail(s) | Cell::Broken(s) => s.clone(),
        other => format!("{other:?}"),
    }
}

#[test]
fn the_reference_driver_passes_and_each_mutant_fails_exactly_its_trials() {
    let root = project();
    let faithful = run(&root, Mutant::Faithful);
    let total = faithful.len();
    assert!(total >= 100, "only {total} trials");
    let bad: Vec<String> = faithful
        .iter()
        .filter(|r| r.cell != Cell::Pass)
        .map(|r| format!("{}: {:?} {:?}", r.id.key(), r.cell, r.findings))
        .collect();
    assert!(
        bad.is_empty(),
        "the faithful driver fails:\n{}",
        bad.join("\n")
    );
    let facts: Vec<Facts> = faithful.iter().map(facts).collect();
    let mut table = format!(
        "# Mutant client drivers\n\n\
         Generated by `cargo test --test it client_mutants` (rewrite with `TOOLTAPE_WRITE_DOCS=1`).\n\
         Each row is the reference driver (`tooltape client drive --mutant NAME`, tooltape's own\n\
         codecs as the library, `src/client/reference.rs`) with one bug client libraries have\n\
         shipped, run by the same runner as `tooltape client` over the routes of\n\
         `clients/tooltape.toml` (openai-chat, openai-responses, anthropic, gemini, text-protocol,\n\
         and each again as an MCP route, `mcp-API`, for the cases whose tools an MCP server serves)\n\
         and the cases `{}`, a 500 case, `{HOSTED}` (on the routes with hosted search) and\n\
         `{LONG_NAME}` (on Gemini's route, forced), `{SEARCH_REGEX}` (Anthropic's),\n\
         `{SEARCH_HOSTED}` and `{NAMESPACED}` (Responses'), `{PROGRAM_ANTHROPIC}` and\n\
         `{PROGRAM_RESPONSES}` (each on its own API), both modes.\n\
         Every mutant fails exactly the trials it should, each with the expected finding.\n\n\
         {total} trials per driver.\n\n\
         | mutant | trials failed | finding expected | first finding |\n| --- | --- | --- | --- |\n",
        CASES.join("`, `")
    );
    let mut problems = Vec::new();
    for (_, m) in Mutant::ALL {
        let results = if m == Mutant::Faithful {
            faithful.clone()
        } else {
            run(&root, m)
        };
        assert_eq!(results.len(), total);
        let (mut failed, mut first) = (0, None);
        for (r, f) in results.iter().zip(&facts) {
            assert_eq!(r.id.key(), f.key);
            let fails = r.cell != Cell::Pass;
            let should = should_fail(m, f);
            if fails {
                failed += 1;
                first.get_or_insert_with(|| first_finding(r));
            }
            if fails != should {
                problems.push(format!(
                    "{}: {} should {}: {}",
                    name(m),
                    r.id.key(),
                    if should { "fail" } else { "pass" },
                    first_finding(r)
                ));
            } else if fails
                && !r
                    .findings
                    .iter()
                    .any(|x| x.message.contains(finding(m, &f.api)))
            {
                problems.push(format!(
                    "{}: {} fails without the finding `{}`: {:?}",
                    name(m),
                    r.id.key(),
                    finding(m, &f.api),
                    r.findings
                ));
            }
        }
        if m != Mutant::Faithful {
            assert!(
                facts.iter().any(|f| should_fail(m, f)),
                "{} has no trial to fail",
                name(m)
            );
        }
        table.push_str(&format!(
            "| {} | {failed} of {total} | {} | {} |\n",
            name(m),
            if m == Mutant::Faithful {
                "—".to_string()
            } else {
                format!("`{}`", finding(m, ""))
            },
            first.map_or("—".to_string(), |s| format!(
                "`{}`",
                s.replace('|', "\\|")
            )),
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let doc = repo().join("docs/clients/mutants.md");
    if std::env::var_os("TOOLTAPE_WRITE_DOCS").is_some() {
        std::fs::write(&doc, &table).unwrap();
    }
    let on_disk = std::fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        on_disk == table,
        "{}:1: the mutant table is out of date\n{}\nfix: TOOLTAPE_WRITE_DOCS=1 cargo test --test it client_mutants",
        doc.display(),
        table
    );
}
