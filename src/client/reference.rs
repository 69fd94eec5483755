//! The reference driver (`tooltape drive`): tooltape's own encoders and decoders as the client
//! library, speaking the driver protocol on stdin and stdout; and its mutants, each a bug
//! client libraries have shipped, which prove client mode's checks (docs/clients/mutants.md).

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, Lines};

use super::protocol::{DriverMessage, DriverResult, DriverTrial, Next};
use crate::engine::{HandedCall, HandedChunk, HandedError};
use crate::model::{AllowedMode, ChatRequest, Message, Outcome, Provider, ToolCall, ToolChoice};
use crate::run::{Endpoint, SupportCache, fallback_step};

mod mcp;
mod mutants;

/// A deliberate bug in the reference driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutant {
    /// None: the faithful driver.
    Faithful,
    /// `tools` (and `tool_choice`) not forwarded when not streaming.
    DropTools,
    /// Streamed calls accumulated and never handed to the caller.
    NeverYield,
    /// `tool_choice: required` sent as `auto`.
    RequiredToAuto,
    /// Parallel calls merged into one (the first's name and id, the arguments merged).
    MergeParallel,
    /// Call ids lost (the caller gets calls without ids).
    LoseIds,
    /// Responses tools sent without `strict` when the caller did not ask for strict (the key
    /// only written when true), so the Responses API makes them strict.
    OmitStrict,
    /// A no-argument call streamed as `arguments: ""` while the accumulated call says `{}`.
    EmptyFragments,
    /// The reasoning state of an answer (thinking blocks, reasoning items, thought signatures)
    /// not kept in the conversation: the next round goes upstream without it.
    DropReasoning,
    /// Every tool result of a round sent back under the first call's id.
    ResultsOneId,
    /// The tools of the first request sent again in every round: a change of the tools in
    /// force between rounds is not followed.
    StaleTools,
    /// Call ids sent to Anthropic in Kimi K2's style (`functions.NAME:IDX`), which Anthropic's
    /// `^[a-zA-Z0-9_-]+$` rejects (BerriAI/litellm#34523: such ids reach an Anthropic request
    /// unless rewritten).
    KimiIds,
    /// Tool names over 64 characters cut to their first 64 (OpenAI's limit) whatever the target,
    /// and calls handed over under the cut name, never restored (Trae-AI/TRAE#2194: MCP tool
    /// names truncated, the model calls a tool the client cannot find).
    TruncateNames,
    /// A hosted web search the caller offered left out of the request, the rest sent
    /// (ahmadrosid/nakama#825: hosted `web_search` dropped on Gemini whenever local tools shared
    /// the turn, the model answering as though it had searched).
    DropHosted,
    /// Chat streams: usage read from the chunk carrying the finish only, so usage sent in its own
    /// final chunk (`choices: []`, as `stream_options.include_usage` frames it) is lost
    /// (AstrBotDevs/AstrBot#8306: the usage chunk skipped for its empty choices).
    UsageOnFinish,
    /// A tool result given as parts sent as one JSON string of its parts.
    QuoteParts,
    /// A round to be continued by `previous_response_id` sent with only its results and no
    /// id: the upstream gets the results without the conversation they belong to.
    DropResponseId,
    /// A conversation continued on another provider sent with the first provider's reasoning
    /// state as the new provider's own (an Anthropic signature as a Gemini thoughtSignature, a
    /// Gemini signature as an Anthropic thinking block's; BerriAI/litellm#15601).
    ForeignReasoning,
    /// An OpenAI custom (freeform) tool the caller declared sent as an ordinary function of its
    /// name, whose JSON arguments the caller's freeform tool cannot take.
    CustomAsFunction,
    /// A call `max_tokens` cut inside its arguments (Anthropic's fine-grained tool streaming
    /// ends midway through a parameter) handed to the caller as a finished call: its arguments
    /// the invalid JSON text received, the finish `tool_calls` instead of the length finish.
    CutCallFinished,
    /// A hosted tool the model answers "not supported" (400) swallowed: no retry with another
    /// variant and no error, the caller gets an empty answer as though the model had nothing
    /// to say.
    SwallowUnsupported,
    /// Anthropic's fine-grained tool streaming switch (`eager_input_streaming: true`) the caller
    /// set on a tool left out of the request: the tool's arguments stream buffered, not as asked.
    DropEager,
    /// A round to be continued by `previous_response_id` sent as the whole conversation, without
    /// the id: the caller's request to continue on the server's state ignored (a library that
    /// only ever replays history).
    WholeConversation,
    /// A round continued by `previous_response_id` sent with the id and the earlier items again:
    /// upstream holds them already and reads them twice.
    ResendWithId,
    /// The parallel switch the caller turned off left out of the request (a library that
    /// forwards `parallel_tool_calls` only when true, or not for every provider).
    DropParallel,
    /// An allowed subset sent as its bare mode (`auto` / `required`) over every tool: the
    /// constraint widened (a library that maps `allowed_tools` to its mode only).
    WidenAllowed,
    /// The tools the caller deferred (`defer_loading`) sent loaded beside the tool search: every
    /// definition in the model's context, the deferral the caller asked for dropped.
    DropDeferral,
    /// The upstream's tool search handed to the caller as a call of its own (a library that
    /// reads every `server_tool_use` / `tool_search_call` as a function call).
    SearchAsCall,
    /// A call's Responses `namespace` not kept in the conversation: the next round replays the
    /// call without it (Responses' 400 "Missing namespace for function_call").
    DropNamespace,
    /// The assistant message's `phase` (Responses' `commentary` / `final_answer`) not kept in
    /// the conversation: the next round sends the message back without it (vercel/ai PR
    /// #12860, pydantic-ai PR #5229: libraries that dropped it).
    DropPhase,
    /// The answer's compaction items not kept in the conversation (LiteLLM PR #42016, "Gateway
    /// passthrough drops compaction"): the next round goes on without the conversation they
    /// stand for.
    DropCompaction,
    /// A tool's `allowed_callers` left out of the request: a tool only code may call sent as
    /// the model's own (a library whose tool type has no field for it).
    DropCallers,
    /// A call's `caller` not kept in the conversation: the next round sends the call the
    /// model's code made as a direct one (vercel/ai issue 12504's "orphaned caller" in reverse:
    /// the API refuses a direct call of a tool only code may call).
    DropCaller,
    /// Anthropic's `container` not named on the next round: the code that made the calls
    /// cannot continue.
    DropContainer,
    /// A tool result's error flag not sent (a library whose tool message has no error status,
    /// or drops it converting to the provider's form): the model reads the error as the answer.
    DropErrorFlag,
    /// MCP tools not taken from the server: the tools the caller was told of declared by hand,
    /// and each round's results made up instead of called (a client that caches a stale list).
    McpBypass,
    /// MCP tools listed from the server, but each round's results sent as the caller was given
    /// them, without calling the tool through the server.
    McpGivenResults,
    /// Arguments the model set to `null` dropped before the MCP call (a library that strips
    /// `None` from the arguments it forwards): the server gets other arguments than the model's.
    McpDropNulls,
    /// Every network `$ref` of the server's tool schemas fetched to resolve it (the MCP
    /// conformance suite's canary: a client must never dereference a schema's remote reference).
    McpFetchRefs,
}

impl Mutant {
    pub const ALL: [(&'static str, Mutant); 39] = [
        ("faithful", Mutant::Faithful),
        ("drop-tools", Mutant::DropTools),
        ("never-yield", Mutant::NeverYield),
        ("required-to-auto", Mutant::RequiredToAuto),
        ("merge-parallel", Mutant::MergeParallel),
        ("lose-ids", Mutant::LoseIds),
        ("omit-strict", Mutant::OmitStrict),
        ("empty-fragments", Mutant::EmptyFragments),
        ("drop-reasoning", Mutant::DropReasoning),
        ("results-one-id", Mutant::ResultsOneId),
        ("stale-tools", Mutant::StaleTools),
        ("kimi-ids", Mutant::KimiIds),
        ("truncate-names", Mutant::TruncateNames),
        ("drop-hosted", Mutant::DropHosted),
        ("usage-on-finish", Mutant::UsageOnFinish),
        ("quote-parts", Mutant::QuoteParts),
        ("drop-response-id", Mutant::DropResponseId),
        ("foreign-reasoning", Mutant::ForeignReasoning),
        ("custom-as-function", Mutant::CustomAsFunction),
        ("cut-call-finished", Mutant::CutCallFinished),
        ("swallow-unsupported", Mutant::SwallowUnsupported),
        ("drop-eager", Mutant::DropEager),
        ("whole-conversation", Mutant::WholeConversation),
        ("resend-with-id", Mutant::ResendWithId),
        ("drop-parallel", Mutant::DropParallel),
        ("widen-allowed", Mutant::WidenAllowed),
        ("drop-deferral", Mutant::DropDeferral),
        ("search-as-call", Mutant::SearchAsCall),
        ("drop-namespace", Mutant::DropNamespace),
        ("drop-phase", Mutant::DropPhase),
        ("drop-compaction", Mutant::DropCompaction),
        ("drop-callers", Mutant::DropCallers),
        ("drop-caller", Mutant::DropCaller),
        ("drop-container", Mutant::DropContainer),
        ("drop-error-flag", Mutant::DropErrorFlag),
        ("mcp-bypass", Mutant::McpBypass),
        ("mcp-given-results", Mutant::McpGivenResults),
        ("mcp-drop-nulls", Mutant::McpDropNulls),
        ("mcp-fetch-refs", Mutant::McpFetchRefs),
    ];

    /// The mutant named `name` (`faithful`, `drop-tools`, …).
    pub fn named(name: &str) -> Option<Mutant> {
        Mutant::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }

    /// What the library sends for the caller's request.
    fn request(self, mut req: ChatRequest) -> ChatRequest {
        match self {
            Mutant::DropTools if !req.stream => {
                req.tools.clear();
                req.tool_choice = None;
            }
            Mutant::RequiredToAuto if req.tool_choice == Some(ToolChoice::Required) => {
                req.tool_choice = Some(ToolChoice::Auto);
            }
            Mutant::TruncateNames => mutants::truncate_names(&mut req),
            Mutant::DropParallel => req.parallel_tool_calls = None,
            Mutant::WidenAllowed => {
                if let Some(ToolChoice::Allowed { mode, .. }) = &req.tool_choice {
                    req.tool_choice = Some(match mode {
                        AllowedMode::Auto => ToolChoice::Auto,
                        AllowedMode::Required => ToolChoice::Required,
                    });
                }
            }
            Mutant::DropHosted => req.hosted.retain(|h| !h.is_web_search()),
            Mutant::DropDeferral => {
                for t in &mut req.tools {
                    t.defer_loading = false;
                }
            }
            Mutant::DropCallers => {
                for t in &mut req.tools {
                    t.allowed_callers.clear();
                }
            }
            Mutant::DropEager => {
                for t in &mut req.tools {
                    t.eager_input_streaming = false;
                }
            }
            _ => {}
        }
        req
    }

    /// The Responses body of a round continued by the response `id`: only the round's new items
    /// and the id (the mutants: no id, the whole conversation without it, or the id with the
    /// whole conversation again).
    fn continue_from(self, body: &mut Value, id: &str) {
        match self {
            Mutant::WholeConversation => {}
            Mutant::ResendWithId => body["previous_response_id"] = Value::String(id.into()),
            _ => crate::providers::openai_responses::continue_from(body, id),
        }
        if self == Mutant::DropResponseId
            && let Some(o) = body.as_object_mut()
        {
            o.remove("previous_response_id");
        }
    }

    /// The Responses body with each tool's `strict: false` left out (the key written only when
    /// true, as a library that treats an absent switch as off does).
    fn omit_strict(self, body: &mut Value) {
        let tools = body.get_mut("tools").and_then(Value::as_array_mut);
        for tool in tools.into_iter().flatten() {
            if let Some(t) = tool.as_object_mut()
                && t.get("strict") == Some(&Value::Bool(false))
            {
                t.remove("strict");
            }
        }
    }

    /// The assistant turn the library keeps in its conversation for the answer `o`: its text,
    /// `calls` and its reasoning state (in the API's own form, sent back as it came).
    fn kept(self, o: &Outcome, text: Option<String>, mut calls: Vec<ToolCall>) -> Message {
        // The call as the library holds it: its Responses namespace and its caller with it.
        for (c, answered) in calls.iter_mut().zip(&o.tool_calls) {
            if self != Mutant::DropNamespace {
                c.namespace.clone_from(&answered.namespace);
            }
            if self != Mutant::DropCaller {
                c.caller.clone_from(&answered.caller);
            }
        }
        // Only reasoning is: drop-reasoning keeps compaction items and server items (a tool
        // search, a program), drop-compaction keeps all but compaction items.
        let compaction = crate::providers::compaction::is_compaction;
        if self == Mutant::DropReasoning {
            let reasoning = ["thinking", "redacted_thinking", "reasoning"];
            let server_text = crate::providers::openai_chat::reasoning::is_item;
            let kept = |i: &&Value| !reasoning.iter().any(|r| i["type"] == *r) && !server_text(i);
            return Message::Assistant {
                phase: o.phase,
                text,
                tool_calls: calls,
                opaque: o.opaque.iter().filter(kept).cloned().collect(),
            };
        }
        for (c, answered) in calls.iter_mut().zip(&o.tool_calls) {
            c.thought_signature.clone_from(&answered.thought_signature);
        }
        Message::Assistant {
            // The message's phase is kept with it (class 32), but by the mutant that loses it.
            phase: o.phase.filter(|_| self != Mutant::DropPhase),
            text,
            tool_calls: calls,
            opaque: (o.opaque.iter())
                .filter(|i| self != Mutant::DropCompaction || !compaction(i))
                .cloned()
                .collect(),
        }
    }

    /// The round's results as the library links them to their calls.
    fn link(self, results: &mut [Message]) {
        if self != Mutant::ResultsOneId {
            return;
        }
        let first = results.iter().find_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.clone()),
            _ => None,
        });
        for m in results {
            if let (Message::Tool { call_id, .. }, Some(f)) = (m, &first) {
                call_id.clone_from(f);
            }
        }
    }

    /// A tool result as the library sends it: its parts as they are (the mutant: one JSON
    /// string of them).
    fn sent_result(self, m: Message) -> Message {
        match m {
            Message::Tool {
                call_id,
                name,
                content,
                parts,
                is_error: true,
            } if self == Mutant::DropErrorFlag => Message::Tool {
                call_id,
                name,
                content,
                parts,
                is_error: false,
            },
            Message::Tool {
                call_id,
                name,
                parts,
                is_error,
                ..
            } if self == Mutant::QuoteParts && !parts.is_empty() => Message::Tool {
                call_id,
                name,
                content: serde_json::to_string(&parts).unwrap_or_default(),
                parts: Vec::new(),
                is_error,
            },
            other => other,
        }
    }

    /// What the library hands its caller for the outcome it decoded.
    fn result(self, o: &Outcome, stream: bool) -> DriverResult {
        let mut calls: Vec<HandedCall> = o
            .tool_calls
            .iter()
            .map(|c| HandedCall {
                index: None,
                id: Some(c.id.clone()),
                name: Some(c.name.clone()),
                arguments: Some(Value::String(c.arguments.to_string())),
            })
            .collect();
        let mut finish = o.raw_finish.clone();
        if let Some(cut) = o.truncated_call.as_ref()
            && self == Mutant::CutCallFinished
        {
            calls.push(HandedCall {
                index: None,
                id: Some(cut.id.clone()),
                name: Some(cut.name.clone()),
                arguments: Some(Value::String(cut.arguments.clone())),
            });
            finish = Some("tool_calls".into());
        }
        if self == Mutant::MergeParallel && calls.len() > 1 {
            let mut merged = Map::new();
            for c in &o.tool_calls {
                if let Value::Object(m) = &c.arguments {
                    merged.extend(m.clone());
                }
            }
            calls.truncate(1);
            calls[0].arguments = Some(Value::String(Value::Object(merged).to_string()));
        }
        if let Some(search) = o
            .tool_search
            .as_ref()
            .filter(|_| self == Mutant::SearchAsCall)
        {
            calls.insert(0, mutants::search_as_call(search));
        }
        if self == Mutant::LoseIds {
            for c in &mut calls {
                c.id = None;
            }
        }
        let chunks = stream.then(|| {
            let mut chunks = Vec::new();
            if let Some(t) = &o.text {
                chunks.push(HandedChunk {
                    text: Some(t.clone()),
                    ..Default::default()
                });
            }
            if self != Mutant::NeverYield {
                for (i, c) in calls.iter().enumerate() {
                    let mut fragment = HandedCall {
                        index: Some(i as u64),
                        ..c.clone()
                    };
                    if self == Mutant::EmptyFragments
                        && c.parsed_arguments()
                            .is_ok_and(|a| a == Value::Object(Map::new()))
                    {
                        fragment.arguments = Some(Value::String(String::new()));
                    }
                    chunks.push(HandedChunk {
                        calls: vec![fragment],
                        ..Default::default()
                    });
                }
            }
            chunks.push(HandedChunk {
                finish: finish.clone(),
                ..Default::default()
            });
            chunks
        });
        if self == Mutant::NeverYield && stream {
            calls.clear();
        }
        DriverResult {
            calls,
            text: o.text.clone(),
            finish,
            usage: o.usage.clone(),
            error: o.error.as_ref().map(|e| HandedError {
                kind: e.kind.clone().unwrap_or_else(|| "ProviderError".into()),
                message: e.message.clone(),
                status: Some(e.status),
            }),
            chunks,
            unsupported: Vec::new(),
            response_id: None,
            reasoning: if self == Mutant::DropReasoning {
                Vec::new()
            } else {
                o.opaque.clone()
            },
        }
    }
}

/// One call through tooltape's own codecs: what the caller gets (with the answer's response id),
/// and the outcome decoded (empty when nothing was). `previous`: the round is continued by this
/// response id, with only its results (`continue_with`).
async fn call(
    client: &reqwest::Client,
    mutant: Mutant,
    (trial, previous): (&DriverTrial, Option<&str>),
    req: &ChatRequest,
    cache: &SupportCache,
) -> (DriverResult, Outcome) {
    let error = |kind: &str, message: String| {
        let r = DriverResult {
            error: Some(HandedError {
                kind: kind.into(),
                message,
                status: None,
            }),
            ..Default::default()
        };
        (r, Outcome::default())
    };
    let Some(api) = Provider::from_slug(&trial.api) else {
        return error("UnknownApi", format!("unknown api `{}`", trial.api));
    };
    let endpoint = Endpoint {
        base_url: trial.base_url.trim_end_matches('/').to_string(),
        key: Some(trial.api_key.clone()),
        extra_headers: Vec::new(),
    };
    let mut sent = mutant.request(req.clone());
    if !trial.round_routes.is_empty() {
        // A conversation that changes provider: each API gets only its own reasoning (the
        // encoders drop the others'), Gemini takes calls it did not sign with its skip value,
        // Anthropic a tool turn it did not answer without thinking, and the call ids are made
        // valid in the new API (as `tooltape proxy` does).
        if mutant == Mutant::ForeignReasoning {
            mutants::forge_reasoning(api, &mut sent);
        }
        crate::proxy::sign_foreign(api, &mut sent);
        crate::providers::opaque::think_only_on_own(api, &mut sent);
        crate::providers::call_ids::fit_request(api, &mut sent);
    }
    let answer = loop {
        let mut encoded = match crate::providers::encode(api, &sent) {
            Ok(e) => e,
            Err(e) => return error("EncodeError", e.to_string()),
        };
        if mutant == Mutant::OmitStrict && api == Provider::OpenaiResponses {
            mutant.omit_strict(&mut encoded.request.body);
        }
        if mutant == Mutant::KimiIds && api == Provider::Anthropic {
            mutants::kimi_ids(&mut encoded.request.body);
        }
        // The caller's tools the neutral request cannot carry, sent beside the others as given.
        let as_function = mutant == Mutant::CustomAsFunction;
        mutants::add_caller_tools(&trial.caller_tools, as_function, &mut encoded.request.body);
        if let Some(id) = previous {
            mutant.continue_from(&mut encoded.request.body, id);
        }
        let answer = crate::run::send(client, &endpoint, api, &sent, &encoded.request).await;
        // tooltape's own hosted-search variant fallback (`web_search` answered unsupported:
        // `web_search_preview`), as its direct runs and `tooltape proxy` do.
        let falls_back = mutant != Mutant::SwallowUnsupported;
        match answer {
            Ok((_, outcome))
                if falls_back && fallback_step(api, &mut sent, &outcome, cache).is_some() => {}
            answer => break answer,
        }
    };
    match answer {
        Err(e) => error("ConnectionError", e),
        Ok((_, Err(e))) => error("DecodeError", e.to_string()),
        Ok((response, Ok(o))) => {
            let mut r = mutant.result(&o, req.stream);
            if mutant == Mutant::UsageOnFinish
                && req.stream
                && matches!(api, Provider::OpenaiChat | Provider::TextProtocol)
                && !mutants::usage_on_finish(&response.body)
            {
                r.usage = None;
            }
            if api == Provider::OpenaiResponses {
                r.response_id = crate::providers::openai_responses::response_id(&response.body);
            }
            if r.error.is_none() && crate::engine::broken(&o).is_some() {
                r.error = Some(HandedError {
                    kind: "StreamTruncated".into(),
                    message: "the stream ended before its terminal event".into(),
                    status: None,
                });
            }
            if r.error.is_none() && !response.is_success() {
                r.error = Some(HandedError {
                    kind: "HTTPError".into(),
                    message: String::from_utf8_lossy(&response.body).into_owned(),
                    status: Some(response.status),
                });
            }
            if mutant == Mutant::SwallowUnsupported {
                mutants::swallow_unsupported(&mut r, req.stream);
            }
            (r, o)
        }
    }
}

async fn write_line(out: &mut (impl AsyncWrite + Unpin), doc: &Value) -> Result<(), String> {
    let mut line = doc.to_string().into_bytes();
    line.push(b'\n');
    out.write_all(&line).await.map_err(|e| e.to_string())?;
    out.flush().await.map_err(|e| e.to_string())
}

/// The next line that is not blank, or `None` at end of input.
async fn next_line(lines: &mut Lines<impl AsyncBufRead + Unpin>) -> Result<Option<String>, String> {
    while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
        if !line.trim().is_empty() {
            return Ok(Some(line));
        }
    }
    Ok(None)
}

/// Serves the driver protocol on `input` and `output` until end of input; a line the protocol
/// does not allow where it comes is an error (docs/clients/README.md, "The loop's edge cases").
pub async fn drive(
    mutant: Mutant,
    input: impl tokio::io::AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
) -> Result<(), String> {
    let client = crate::run::client(std::time::Duration::from_secs(60));
    let cache = SupportCache::new(SupportCache::DEFAULT_TTL);
    let mut lines = BufReader::new(input).lines();
    while let Some(line) = next_line(&mut lines).await? {
        let mut trial: DriverTrial = serde_json::from_str(&line)
            .map_err(|e| format!("protocol error: a trial line is not a trial: {e}"))?;
        let mut req = trial.request();
        // An MCP route: the tools come from the server (a failure to reach it is the answer).
        let mcp = match &trial.mcp {
            Some(m) => Some(mcp::open(mutant, &m.url, &mut req).await),
            None => None,
        };
        let by_id = trial.continue_with.as_deref() == Some("previous_response_id");
        // The last answer's id, when the trial's rounds are continued by it.
        let mut previous: Option<String> = None;
        for round in 0.. {
            let turn = (&trial, previous.as_deref());
            let (r, outcome) = match &mcp {
                Some(Err(e)) => (mcp::failed(e), Outcome::default()),
                _ => call(&client, mutant, turn, &req, &cache).await,
            };
            previous = r.response_id.clone().filter(|_| by_id);
            let calls: Vec<_> = r
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| c.whole(i))
                .collect();
            let result = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            write_line(&mut output, &serde_json::json!({ "result": result })).await?;
            let Some(next) = next_line(&mut lines).await? else {
                return Ok(());
            };
            match serde_json::from_str::<Next>(&next).map_err(|e| {
                format!("protocol error: the line after a result is neither results nor done: {e}")
            })? {
                Next::Done { .. } => break,
                Next::Results {
                    results,
                    tool_choice,
                    tools,
                } => {
                    req.tool_choice = tool_choice.as_ref().and_then(super::protocol::choice_of);
                    if let Some(tools) = tools.filter(|_| mutant != Mutant::StaleTools) {
                        req.tools = tools.iter().map(|t| t.neutral()).collect();
                    }
                    let answered = calls.clone();
                    req.messages
                        .push(mutant.kept(&outcome, r.text.clone(), calls));
                    // The container the answer's programmatic calls run in, named again.
                    if outcome.container.is_some() && mutant != Mutant::DropContainer {
                        req.server.container.clone_from(&outcome.container);
                    }
                    let mut sent: Vec<Message> = Vec::new();
                    for r in &results {
                        let given = DriverMessage::neutral(r);
                        let got = match &mcp {
                            Some(Ok(session)) => {
                                mcp::result(mutant, session, &answered, given).await
                            }
                            _ => given,
                        };
                        sent.push(mutant.sent_result(got));
                    }
                    mutant.link(&mut sent);
                    req.messages.extend(sent);
                    // The round goes on on another provider: its route's API and model.
                    if let Some(Some(to)) = trial.round_routes.get(round).cloned() {
                        trial.api = to.api;
                        req.model = to.model;
                    }
                }
            }
        }
        if let Some(Ok(session)) = mcp {
            session.close().await;
        }
    }
    Ok(())
}
