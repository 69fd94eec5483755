//! Named scenarios: what a test of its own picks when it uses the simulator as a mock provider,
//! by the scenario header (`x-tooltape-scenario: parallel`) or a model-name suffix
//! (`gpt-4.1-mini~parallel`); several combine (`parallel,stream_cut` or `~parallel~stream_cut`).
//! Each name sets fields of the [`Scenario`], filled from the request's own tools.

use serde_json::{Map, Value};

use super::args;
use super::decide::{Ask, eligible};
use crate::scenario::{Scenario, ScenarioCall, ScenarioError, StreamFault, StreamShape};

/// Separates scenario names from the model name (`~` is never percent-encoded in a URL path).
pub(crate) const MODEL_SEPARATOR: char = '~';

type Apply = fn(&mut Scenario, &Ask);

/// (name, what the model does, how): the table `docs/simulate.md` lists.
pub(crate) const NAMED: &[(&str, &str, Apply)] = &[
    (
        "default",
        "one call to the first tool the tool choice allows",
        |_, _| {},
    ),
    (
        "parallel",
        "two calls at once: the first two allowed tools (one tool: called twice)",
        parallel,
    ),
    (
        "no_arguments",
        "one call whose arguments are an empty object `{}`",
        |s, a| {
            s.calls = first_call(a, Some("{}"));
        },
    ),
    (
        "empty_arguments",
        "one call whose arguments are empty: `\"\"` (OpenAI), no `input` / `args` (Anthropic, Gemini)",
        |s, a| {
            s.calls = first_call(a, Some(""));
        },
    ),
    (
        "text",
        "a text answer, no call, when the tool choice lets it (auto)",
        |s, _| s.prefer_text = true,
    ),
    (
        "reasoning",
        "reasoning before the call (thinking block, reasoning item, thought part)",
        |s, _| {
            s.reasoning = Some("The user wants a tool result; I will call the tool.".into());
        },
    ),
    (
        "redacted_reasoning",
        "reasoning before the call, and an Anthropic `redacted_thinking` block after the signed thinking block (both to be sent back unchanged)",
        |s, _| {
            s.reasoning = Some("The user wants a tool result; I will call the tool.".into());
            s.redacted_reasoning = true;
        },
    ),
    (
        "max_tokens",
        "the output-token limit is reached halfway through the last call's arguments",
        |s, _| {
            s.max_tokens_mid_call = true;
        },
    ),
    ("refusal", "a refusal instead of an answer", |s, _| {
        s.refusal = Some("I can't help with that.".into());
    }),
    ("no_usage", "no token usage in the answer", |s, _| {
        s.no_usage = true
    }),
    (
        "rate_limited",
        "HTTP 429 in the provider's error envelope (retry-after: 1)",
        |s, _| {
            s.error = Some(ScenarioError {
                status: 429,
                message: None,
            });
        },
    ),
    (
        "server_error",
        "HTTP 500 in the provider's error envelope",
        |s, _| {
            s.error = Some(ScenarioError {
                status: 500,
                message: None,
            });
        },
    ),
    (
        "stream_error",
        "a stream that fails halfway with the provider's error event",
        |s, _| {
            s.stream_fault = Some(StreamFault::ErrorEvent);
        },
    ),
    (
        "stream_cut",
        "a stream cut halfway, before its terminal event",
        |s, _| {
            s.stream_fault = Some(StreamFault::Cut);
        },
    ),
    (
        "one_delta",
        "streamed: each call's arguments in one delta",
        |s, _| {
            s.stream_shape = Some(StreamShape::OneDelta);
        },
    ),
    (
        "done_only",
        "streamed: no argument deltas, the arguments only in the call's done/start event",
        |s, _| {
            s.stream_shape = Some(StreamShape::DoneOnly);
        },
    ),
    (
        "interleaved",
        "streamed: two parallel calls whose argument deltas interleave",
        |s, a| {
            parallel(s, a);
            s.stream_shape = Some(StreamShape::Interleaved);
        },
    ),
    (
        "same_chunk",
        "streamed: text and every call in one chunk",
        |s, _| {
            s.stream_shape = Some(StreamShape::SameChunk);
        },
    ),
    (
        "shared_index",
        "streamed (Chat): two parallel calls one after another at index 0, told apart by their ids",
        |s, a| {
            parallel(s, a);
            s.stream_shape = Some(StreamShape::SharedIndex);
        },
    ),
];

fn generated(schema: &Value) -> Map<String, Value> {
    match args::generate(schema) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// One call to the first allowed tool, its arguments written as `raw`.
fn first_call(ask: &Ask, raw: Option<&str>) -> Vec<ScenarioCall> {
    (eligible(ask).first().into_iter())
        .map(|t| ScenarioCall {
            name: t.name.clone(),
            arguments: Map::new(),
            raw_arguments: raw.map(str::to_string),
            id: None,
        })
        .collect()
}

fn parallel(s: &mut Scenario, ask: &Ask) {
    let tools = eligible(ask);
    let picked: Vec<_> = match tools.as_slice() {
        [] => Vec::new(),
        [one] => vec![*one, *one],
        [a, b, ..] => vec![*a, *b],
    };
    s.calls = (picked.into_iter())
        .map(|t| ScenarioCall {
            name: t.name.clone(),
            arguments: generated(&t.schema),
            raw_arguments: None,
            id: None,
        })
        .collect();
}

/// The names a request picks: the scenario header when it is not JSON, then the model-name
/// suffixes.
fn names<'a>(header: Option<&'a str>, model: &'a str) -> Vec<&'a str> {
    let from_header = header
        .filter(|h| !h.trim_start().starts_with('{'))
        .into_iter()
        .flat_map(|h| h.split(','));
    let from_model = model.split(MODEL_SEPARATOR).skip(1);
    from_header
        .chain(from_model)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect()
}

/// The scenario the request picks by name, laid over `base`; `None` when it names none; an
/// unknown name is an error naming the known ones.
pub(crate) fn select(
    header: Option<&str>,
    ask: &Ask,
    base: &Scenario,
) -> Result<Option<Scenario>, String> {
    let names = names(header, &ask.model);
    if names.is_empty() {
        return Ok(None);
    }
    let mut s = base.clone();
    for name in names {
        let Some((_, _, apply)) = NAMED.iter().find(|(n, _, _)| *n == name) else {
            let known: Vec<&str> = NAMED.iter().map(|(n, _, _)| *n).collect();
            return Err(format!(
                "unknown tooltape scenario `{name}` (from the x-tooltape-scenario header or a `{MODEL_SEPARATOR}NAME` model suffix); known: {}",
                known.join(", ")
            ));
        };
        apply(&mut s, ask);
    }
    Ok(Some(s))
}

/// (name, what the model does) of every named scenario, in table order (`docs/simulate.md`).
pub fn named_scenarios() -> Vec<(&'static str, &'static str)> {
    NAMED.iter().map(|(n, what, _)| (*n, *what)).collect()
}
