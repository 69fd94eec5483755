//! The deterministic simulated model: from what a request asks (tools, tool choice, parallel
//! switch, tool results) and the trial's scenario, which text, calls and searches it answers with.

use serde_json::{Map, Value};

use super::args;
use super::wire;
use crate::model::{AllowedMode, ToolChoice};
use crate::scenario::{ModelServer, Scenario, ScenarioCall, StreamFault, StreamShape};
use crate::text::clip_bytes;

/// A function tool as read from a request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FnTool {
    pub name: String,
    pub schema: Value,
    /// Strict (constrained decoding): the model emits every required key, `null` where allowed.
    pub strict: bool,
}

/// What one request asks of the model, in neutral form (read by each API's parser).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ask {
    pub model: String,
    pub tools: Vec<FnTool>,
    pub choice: ToolChoice,
    /// `tool_choice` as sent (`Null` when absent): some rejections depend on its exact form.
    pub raw_choice: Value,
    pub parallel: bool,
    /// The hosted web-search tool type, when the request offers one.
    pub search: Option<String>,
    /// Every hosted (server-side) tool type in the request, for `unsupported_tool_types`.
    pub hosted_types: Vec<String>,
    /// The tool results, when the conversation's last message carries them.
    pub tool_results: Option<Vec<String>>,
    /// The last user text (search queries quote it).
    pub user_text: String,
    pub stream: bool,
    /// How many rounds of tool results the conversation holds (0 on the first exchange).
    pub rounds_done: usize,
    /// The tools whose arguments stream eagerly (Anthropic `eager_input_streaming: true`).
    pub eager: Vec<String>,
    /// Declared tools not loaded (`defer_loading: true`, no search has returned them yet).
    pub deferred: Vec<FnTool>,
    /// The tool-search tool type the request offers (Anthropic `tool_search_tool_*`,
    /// Responses `tool_search`).
    pub tool_search: Option<String>,
    /// (function, namespace) of each Responses function whose calls carry a `namespace`: a
    /// namespace's functions, and a deferred top-level function (its own name).
    pub namespaces: Vec<(String, String)>,
    /// The programmatic-calling runner type the request offers (Anthropic `code_execution_*`,
    /// Responses `programmatic_tool_calling`), class 30.
    pub programmatic: Option<String>,
    /// The tools code may call (`allowed_callers` names the runner), and those only code may.
    pub by_code: Vec<String>,
    pub code_only: Vec<String>,
    /// The runner call whose calls the conversation's last results answer: its output comes
    /// before the final text.
    pub program: Option<String>,
}

impl Ask {
    /// Records the tool results the conversation's last message carries; none leaves
    /// `tool_results` unset.
    pub(crate) fn set_tool_results(&mut self, results: Vec<String>) {
        if !results.is_empty() {
            self.tool_results = Some(results);
        }
    }

    pub(super) fn new(model: &str) -> Ask {
        Ask {
            model: model.to_string(),
            tools: Vec::new(),
            choice: ToolChoice::Auto,
            raw_choice: Value::Null,
            parallel: true,
            search: None,
            hosted_types: Vec::new(),
            tool_results: None,
            user_text: String::new(),
            stream: false,
            rounds_done: 0,
            eager: Vec::new(),
            deferred: Vec::new(),
            tool_search: None,
            namespaces: Vec::new(),
            programmatic: None,
            by_code: Vec::new(),
            code_only: Vec::new(),
            program: None,
        }
    }

    /// The namespace a call of `name` carries (Responses), if any.
    pub(super) fn namespace_of(&self, name: &str) -> Option<&str> {
        (self.namespaces.iter())
            .find(|(f, _)| f == name)
            .map(|(_, n)| n.as_str())
    }

    pub(super) fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }
}

/// One call the model makes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    pub name: String,
    pub arguments: Value,
    /// The arguments exactly as written on the wire (`""`, `"{}"`), when the scenario pins them.
    pub raw: Option<String>,
    /// The id the scenario pins for the call (`ScenarioCall::id`).
    pub id: Option<String>,
    /// The Responses namespace the call carries (`function_call.namespace`).
    pub namespace: Option<String>,
    /// The model's code makes the call (class 30): it carries the runner call as its caller.
    pub by_program: bool,
}

impl Call {
    /// The arguments as the JSON string OpenAI-shaped APIs carry.
    pub(super) fn arguments_json(&self) -> String {
        match &self.raw {
            Some(raw) => raw.clone(),
            None => wire::compact(&self.arguments),
        }
    }

    /// Anthropic `input` / Gemini `args`: absent when the scenario pins an empty string.
    pub(super) fn arguments_object(&self) -> Option<&Value> {
        match self.raw.as_deref() {
            Some(raw) if raw.trim().is_empty() => None,
            _ => Some(&self.arguments),
        }
    }
}

/// The ids of `calls` in `api`: each scenario-pinned id `api` takes, else `made(i)` (the API's
/// own; `None` for Gemini, whose calls carry no id). Only Chat-compatible servers answer two
/// calls sharing one id: elsewhere a pinned id repeated is replaced too.
pub(super) fn call_ids(
    api: crate::model::Provider,
    calls: &[Call],
    made: impl Fn(usize) -> Option<String>,
) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::with_capacity(calls.len());
    for (i, c) in calls.iter().enumerate() {
        let pinned = c.id.as_ref().filter(|id| {
            crate::providers::call_ids::invalid(api, id).is_none()
                && (api == crate::model::Provider::OpenaiChat
                    || !out.iter().any(|o| o.as_ref() == Some(*id)))
        });
        out.push(pinned.cloned().or_else(|| made(i)));
    }
    out
}

/// A hosted web search the model ran.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Search {
    pub query: String,
    pub hits: Vec<Hit>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hit {
    pub url: String,
    pub title: String,
    pub snippet: String,
}

/// A piece of answer text, citing a search hit (by index) or not.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Segment {
    pub text: String,
    pub cites: Option<usize>,
}

/// The model's turn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Turn {
    /// Text written before any calls, in segments (only search answers cite).
    pub segments: Vec<Segment>,
    pub search: Option<Search>,
    /// The deferred tools a tool search loaded before the calls (class 28).
    pub tool_search: Option<Vec<String>>,
    pub calls: Vec<Call>,
    /// How the answer is shaped on the wire (scenario options carried to the renderers).
    pub wire: WireShape,
}

/// The scenario's wire options, for the renderers.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WireShape {
    pub reasoning: Option<String>,
    /// A `redacted_thinking` block follows the thinking block (Anthropic).
    pub redacted: bool,
    /// Responses message items carry `phase` (class 32).
    pub phase: bool,
    /// The answer with calls starts with a compaction item (class 31).
    pub compaction: bool,
    /// Chat: the model server whose dialect the answer is written in.
    pub server: Option<ModelServer>,
    pub stream_shape: Option<StreamShape>,
    /// The last call's arguments are cut halfway: the output-token limit was reached.
    pub cut_last_call: bool,
    pub refusal: Option<String>,
    pub fault: Option<StreamFault>,
    pub usage: bool,
}

impl WireShape {
    fn of(scenario: &Scenario) -> WireShape {
        WireShape {
            reasoning: scenario.reasoning.clone(),
            redacted: scenario.redacted_reasoning,
            phase: scenario.phase,
            compaction: scenario.compaction,
            server: scenario.server,
            stream_shape: scenario.stream_shape,
            cut_last_call: scenario.max_tokens_mid_call,
            refusal: scenario.refusal.clone(),
            fault: scenario.stream_fault,
            usage: !scenario.no_usage,
        }
    }

    pub(super) fn is(&self, shape: StreamShape) -> bool {
        self.stream_shape == Some(shape)
    }
}

impl Turn {
    pub(super) fn text(&self) -> String {
        self.segments.iter().map(|s| s.text.as_str()).collect()
    }

    pub(super) fn has_text(&self) -> bool {
        self.segments.iter().any(|s| !s.text.is_empty())
    }
}

/// Decides the model's answer. Tool results → a text answer. Otherwise the tool choice picks the
/// eligible tools, and the calls are the scenario's (filtered), or one generated call.
pub(crate) fn decide(ask: &Ask, scenario: &Scenario) -> Turn {
    let mut turn = decide_turn(ask, scenario);
    for c in &mut turn.calls {
        c.namespace = ask.namespace_of(&c.name).map(str::to_string);
        // With a runner offered, the model calls the tools code may call from its code.
        c.by_program = ask.programmatic.is_some() && ask.by_code.contains(&c.name);
    }
    turn.wire = WireShape::of(scenario);
    if turn.wire.refusal.is_some() {
        turn.calls.clear();
        turn.segments.clear();
        turn.wire.cut_last_call = false;
    }
    if turn.calls.is_empty() {
        turn.wire.cut_last_call = false;
    }
    // A follow-up turn carries no new reasoning and no faults of the first answer.
    if ask.tool_results.is_some() {
        turn.wire.reasoning = None;
        turn.wire.fault = None;
        turn.wire.refusal = None;
        turn.wire.cut_last_call = false;
    }
    turn
}

fn decide_turn(ask: &Ask, scenario: &Scenario) -> Turn {
    if let Some(results) = &ask.tool_results {
        let round = ask.rounds_done.max(1);
        if let Some(next) = scenario.then.get(round - 1) {
            let calls = pinned(&ask.tools.iter().collect::<Vec<_>>(), next);
            if !calls.is_empty() {
                return Turn {
                    segments: Vec::new(),
                    search: None,
                    tool_search: None,
                    calls,
                    wire: WireShape::default(),
                };
            }
        }
        let text = scenario
            .final_text
            .clone()
            .unwrap_or_else(|| quote(results));
        return text_turn(text);
    }
    let search = search_invoked(ask, scenario).then(|| run_search(ask, scenario));
    let (loaded, tool_search) = match searched(ask, scenario) {
        Some((loaded, found)) => (std::borrow::Cow::Owned(loaded), Some(found)),
        None => (std::borrow::Cow::Borrowed(ask), None),
    };
    let calls = choose_calls(&loaded, scenario, search.is_some());
    let mut segments = Vec::new();
    if let Some(t) = &scenario.text {
        segments.push(Segment {
            text: t.clone(),
            cites: None,
        });
    }
    if let Some(s) = &search {
        segments.extend(cited_sentences(s, !segments.is_empty()));
    }
    if segments.is_empty() && calls.is_empty() {
        segments.push(Segment {
            text: "I can answer that directly without calling a tool.".into(),
            cites: None,
        });
    }
    Turn {
        segments,
        search,
        tool_search,
        calls,
        wire: WireShape::default(),
    }
}

fn text_turn(text: String) -> Turn {
    Turn {
        segments: vec![Segment { text, cites: None }],
        search: None,
        tool_search: None,
        calls: Vec::new(),
        wire: WireShape::default(),
    }
}

/// The scenario's calls to tools among `tools` (strict tools completed as constrained decoding does).
fn pinned(tools: &[&FnTool], wanted: &[ScenarioCall]) -> Vec<Call> {
    wanted
        .iter()
        .filter_map(|c| {
            let tool = tools.iter().find(|t| t.name == c.name)?;
            // Raw arguments that are an object are the arguments of the APIs that carry an
            // object (Anthropic's `input`, Gemini's `args`): a `null` TOML cannot write.
            let raw = c
                .raw_arguments
                .as_deref()
                .map(serde_json::from_str::<Value>);
            let mut arguments = match raw {
                Some(Ok(Value::Object(o))) => o,
                _ => c.arguments.clone(),
            };
            if tool.strict && c.raw_arguments.is_none() {
                complete_strict(&tool.schema, &mut arguments);
            }
            Some(Call {
                name: c.name.clone(),
                arguments: Value::Object(arguments),
                raw: c.raw_arguments.clone(),
                id: c.id.clone(),
                namespace: None,
                by_program: false,
            })
        })
        .collect()
}

/// The deferred tools the model's search loads: those the scenario calls, when the request
/// offers a tool search and its choice lets the model act. `ask` comes back with them callable.
pub(super) fn searched(ask: &Ask, scenario: &Scenario) -> Option<(Ask, Vec<String>)> {
    ask.tool_search.as_ref()?;
    let acts = match &ask.choice {
        ToolChoice::Auto | ToolChoice::Allowed { .. } => !scenario.prefer_text,
        ToolChoice::Required => true,
        ToolChoice::None | ToolChoice::Forced(_) => false,
    };
    if !acts {
        return None;
    }
    let mut loaded = ask.clone();
    let mut found = Vec::new();
    for c in &scenario.calls {
        if let Some(i) = loaded.deferred.iter().position(|t| t.name == c.name) {
            found.push(c.name.clone());
            let tool = loaded.deferred.remove(i);
            loaded.tools.push(tool);
        }
    }
    (!found.is_empty()).then_some((loaded, found))
}

/// Moves the deferred tools named in `names` into the tools the model may call.
pub(super) fn load(ask: &mut Ask, names: &[String]) {
    for n in names {
        if let Some(i) = ask.deferred.iter().position(|t| &t.name == n) {
            let tool = ask.deferred.remove(i);
            ask.tools.push(tool);
        }
    }
}

/// "Based on the tool results: …" quoting each result (clipped).
fn quote(results: &[String]) -> String {
    let quoted: Vec<String> = results.iter().map(|r| clip_bytes(r, 200)).collect();
    if quoted.is_empty() {
        return "The tool returned no result.".into();
    }
    format!("Based on the tool results: {}.", quoted.join("; "))
}

/// The model searches when a hosted search tool is offered and the choice lets it act
/// (auto without `prefer_text`, or required); a forced function or `none` keeps it from searching.
fn search_invoked(ask: &Ask, scenario: &Scenario) -> bool {
    ask.search.is_some()
        && match &ask.choice {
            ToolChoice::Auto => !scenario.prefer_text,
            ToolChoice::Required => true,
            _ => false,
        }
}

fn run_search(ask: &Ask, scenario: &Scenario) -> Search {
    let query = match ask.user_text.trim() {
        "" => "latest news".to_string(),
        t => clip_bytes(t, 80),
    };
    let hits = if scenario.empty_search_results {
        Vec::new()
    } else {
        (1..=2)
            .map(|i| Hit {
                url: format!("https://example.com/search/result-{i}"),
                title: format!("Example result {i}"),
                snippet: format!("Synthetic search result {i} for the query \"{query}\"."),
            })
            .collect()
    };
    Search { query, hits }
}

fn cited_sentences(search: &Search, after_text: bool) -> Vec<Segment> {
    let lead = if after_text { " " } else { "" };
    if search.hits.is_empty() {
        return vec![Segment {
            text: format!("{lead}The web search returned no results, so I cannot cite a source."),
            cites: None,
        }];
    }
    let mut out = vec![Segment {
        text: format!("{lead}Here is what I found. "),
        cites: None,
    }];
    for (i, hit) in search.hits.iter().enumerate() {
        out.push(Segment {
            text: format!("{} reports: {}", hit.title, hit.snippet),
            cites: Some(i),
        });
        if i + 1 < search.hits.len() {
            out.push(Segment {
                text: " ".into(),
                cites: None,
            });
        }
    }
    out
}

/// The tools the choice lets the model call, in request order.
pub(super) fn eligible(ask: &Ask) -> Vec<&FnTool> {
    match &ask.choice {
        ToolChoice::None => Vec::new(),
        ToolChoice::Auto | ToolChoice::Required => ask.tools.iter().collect(),
        ToolChoice::Forced(name) => ask.tools.iter().filter(|t| &t.name == name).collect(),
        ToolChoice::Allowed { tools, .. } => ask
            .tools
            .iter()
            .filter(|t| tools.contains(&t.name))
            .collect(),
    }
}

fn choose_calls(ask: &Ask, scenario: &Scenario, searched: bool) -> Vec<Call> {
    let demanded = ask.choice.demands_call();
    let wants = match &ask.choice {
        ToolChoice::None => false,
        ToolChoice::Auto
        | ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            ..
        } => !scenario.prefer_text,
        _ => true,
    };
    let tools = eligible(ask);
    if !wants || tools.is_empty() {
        return Vec::new();
    }
    let mut calls = pinned(&tools, &scenario.calls);
    // A search answer stands on its own unless the scenario pins calls or a call is demanded.
    let generate = calls.is_empty() && (scenario.calls.is_empty() && !searched || demanded);
    if generate && let Some(first) = tools.first() {
        calls.push(generated(first));
    }
    if !ask.parallel {
        calls.truncate(1);
    }
    calls
}

/// What constrained decoding guarantees under strict mode: every required top-level key is
/// present; one the scenario left out is `null` when its schema allows null, else generated.
fn complete_strict(schema: &Value, args: &mut Map<String, Value>) {
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if args.contains_key(name) {
            continue;
        }
        let prop = schema
            .pointer(&format!("/properties/{name}"))
            .cloned()
            .unwrap_or(Value::Null);
        let value = if accepts_null(&prop) {
            Value::Null
        } else {
            args::generate(&prop)
        };
        args.insert(name.to_string(), value);
    }
}

fn accepts_null(schema: &Value) -> bool {
    let is_null = |t: &Value| t.as_str() == Some("null");
    match schema.get("type") {
        Some(Value::Array(types)) if types.iter().any(is_null) => return true,
        Some(t) if is_null(t) => return true,
        _ => {}
    }
    schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|branches| branches.iter().any(accepts_null))
}

fn generated(tool: &FnTool) -> Call {
    let arguments = args::generate(&tool.schema);
    Call {
        name: tool.name.clone(),
        arguments: if arguments.is_object() {
            arguments
        } else {
            Value::Object(Map::new())
        },
        raw: None,
        id: None,
        namespace: None,
        by_program: false,
    }
}

/// A seed of the calls alone (their names and arguments): what a buffered answer and its
/// streamed twin share, for items whose content must agree between them (compaction).
pub(crate) fn calls_seed(calls: &[Call]) -> u64 {
    let text: String = (calls.iter())
        .map(|c| format!("{}{}", c.name, c.arguments))
        .collect();
    crate::fnv::fnv1a(text.as_bytes())
}
