//! The reasoning state the proxy keeps between rounds: what upstream answered with its calls
//! (Anthropic thinking blocks with their signatures, Responses reasoning items, Gemini thought
//! signatures) must go back to the same upstream with the results, unmodified, and a client in
//! another format cannot carry it. The proxy remembers it by the calls it answered with and puts
//! it back into the follow-up that carries those calls; bounded, oldest forgotten first. The
//! answer's Responses message `phase` is kept and put back the same way (class 32).
//!
//! A Responses client's `item_reference` (what SDKs send with `store: true`) names an item the
//! upstream stored: to a Responses upstream it goes as it came (the reference to the kept
//! reasoning is that reasoning carried); to another API the proxy resolves it from the items it
//! kept (then the encoder keeps or drops the item as that API takes it), and refuses a
//! reference it cannot resolve with a clear 400 rather than drop an item it cannot see.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::Value;

use crate::model::{ChatRequest, Message, Outcome, Phase, Provider, ToolCall};
use crate::providers::gemini::SYNTHETIC_ID_PREFIX;

/// How many answers' reasoning the proxy keeps.
const KEPT: usize = 4096;

/// One answer's reasoning: the upstream it came from, its calls, its opaque items and each
/// call's thought signature.
struct Entry {
    provider: Provider,
    /// The conversation the answer was to ([`context`]).
    context: u64,
    calls: Vec<Called>,
    opaque: Vec<Value>,
    signatures: Vec<Option<String>>,
    /// The answer's message `phase` (Responses), which goes back with its turn (class 32).
    phase: Option<Phase>,
}

/// A call as a client sends it back: its id (which a format without ids on the wire, as
/// Gemini's, makes anew), its name and its arguments (as JSON text).
#[derive(PartialEq)]
struct Called {
    id: String,
    name: String,
    arguments: String,
}

/// The reasoning of recent answers, by their calls.
#[derive(Default)]
pub(super) struct Reasoning {
    entries: Mutex<VecDeque<Entry>>,
}

fn calls_of(calls: &[ToolCall]) -> Vec<Called> {
    calls
        .iter()
        .map(|c| Called {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.to_string(),
        })
        .collect()
}

/// The same calls: by id and name, or (`by_id` false) by name and arguments (the client may
/// get arguments without the nulls a strict rewrite added, and its format may make other ids).
fn same(a: &[Called], b: &[Called], by_id: bool) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.name == y.name
                && if by_id {
                    // The ids the Gemini decoder makes (`gemini-call-0-NAME`) are the same in
                    // every answer: they tell no answer from another.
                    x.id == y.id && !x.id.starts_with(SYNTHETIC_ID_PREFIX)
                } else {
                    x.arguments == y.arguments
                }
        })
}

/// A conversation's fingerprint: the text of its system, developer and user messages, which a
/// follow-up repeats before the turn it sends back whatever format the client speaks.
fn context(messages: &[Message]) -> u64 {
    let mut text = String::new();
    for m in messages {
        if let Message::System { content }
        | Message::Developer { content }
        | Message::User { content } = m
        {
            text.push_str(content);
            text.push('\0');
        }
    }
    crate::fnv::fnv1a(text.as_bytes())
}

fn kind(item: &Value) -> Option<&str> {
    item.get("type").and_then(Value::as_str)
}

impl Reasoning {
    /// Keeps the reasoning `provider` answered `asked` with `outcome`'s calls (nothing when it has
    /// none).
    pub(super) fn remember(&self, provider: Provider, asked: &ChatRequest, outcome: &Outcome) {
        let signed = outcome
            .tool_calls
            .iter()
            .any(|c| c.thought_signature.is_some());
        let phased = outcome.phase.is_some();
        if outcome.tool_calls.is_empty() || (outcome.opaque.is_empty() && !signed && !phased) {
            return;
        }
        let entry = Entry {
            provider,
            context: context(&asked.messages),
            calls: calls_of(&outcome.tool_calls),
            opaque: outcome.opaque.clone(),
            signatures: outcome
                .tool_calls
                .iter()
                .map(|c| c.thought_signature.clone())
                .collect(),
            phase: outcome.phase,
        };
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= KEPT {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    /// Puts the kept reasoning back into each assistant turn of `req` whose calls are those of
    /// an answer `provider` gave (by id and name; by name and arguments when the client's format
    /// made other ids), where the client did not send it itself: the opaque
    /// items when the turn has none of their kinds (what it has instead is another format's),
    /// and the thought signatures its calls lack.
    pub(super) fn restore(&self, provider: Provider, req: &mut ChatRequest) {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        for i in 0..req.messages.len() {
            let before = context(&req.messages[..i]);
            let Message::Assistant {
                tool_calls,
                opaque,
                phase,
                ..
            } = &mut req.messages[i]
            else {
                continue;
            };
            let calls = calls_of(tool_calls);
            let mine = || {
                entries
                    .iter()
                    .rev()
                    .filter(|e| e.provider == provider && e.context == before)
            };
            let Some(e) = mine()
                .find(|e| same(&e.calls, &calls, true))
                .or_else(|| mine().find(|e| same(&e.calls, &calls, false)))
            else {
                continue;
            };
            let kinds: Vec<&str> = e.opaque.iter().filter_map(kind).collect();
            let referred = references(opaque);
            let by_reference =
                (e.opaque.iter()).any(|i| i.get("id").is_some_and(|id| referred.contains(&id)));
            if !by_reference && !opaque.iter().filter_map(kind).any(|k| kinds.contains(&k)) {
                // References to other items (the turn's text, say) stay, for `resolve`.
                let others: Vec<Value> = (opaque.drain(..))
                    .filter(|i| kind(i) == Some(REFERENCE))
                    .collect();
                opaque.clone_from(&e.opaque);
                opaque.extend(others);
            }
            if phase.is_none() {
                *phase = e.phase;
            }
            for (c, sig) in tool_calls.iter_mut().zip(&e.signatures) {
                if c.thought_signature.is_none() {
                    c.thought_signature.clone_from(sig);
                }
            }
        }
    }

    /// To an upstream other than Responses: each `item_reference` left in an assistant turn of
    /// `req` replaced by the kept item of that id; `Err` with the message of the 400 the proxy
    /// answers when one names no item it kept (only the server that stored it can resolve it).
    pub(super) fn resolve(&self, provider: Provider, req: &mut ChatRequest) -> Result<(), String> {
        if provider == Provider::OpenaiResponses {
            return Ok(());
        }
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        for m in &mut req.messages {
            let Message::Assistant { opaque, .. } = m else {
                continue;
            };
            for item in opaque.iter_mut().filter(|i| kind(i) == Some(REFERENCE)) {
                let id = item.get("id").cloned().unwrap_or_default();
                let kept = (entries.iter().rev())
                    .flat_map(|e| &e.opaque)
                    .find(|i| i.get("id") == Some(&id));
                match kept {
                    Some(found) => item.clone_from(found),
                    None => {
                        return Err(format!(
                            "input item_reference `{}` cannot be sent to {}: only the Responses server that stored the item can resolve it, and this proxy kept no item with that id; send the item itself",
                            id.as_str().unwrap_or_default(),
                            provider.slug()
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The input item naming a stored item by id (Responses).
const REFERENCE: &str = "item_reference";

/// The ids a turn's `item_reference` items name.
fn references(opaque: &[Value]) -> Vec<&Value> {
    (opaque.iter())
        .filter(|i| kind(i) == Some(REFERENCE))
        .filter_map(|i| i.get("id"))
        .collect()
}

/// The value Gemini documents for a `thoughtSignature` it did not make (history from another
/// model): it skips the signature check (ai.google.dev/gemini-api/docs/thought-signatures, FAQ).
pub(super) const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// To Gemini: the first call of each model turn that carries no thought signature (a turn
/// another provider answered, whose reasoning Gemini cannot verify) gets the documented skip
/// value, without which Gemini 3 answers 400 (it thinks whether or not the request asks).
pub(crate) fn sign_foreign(provider: Provider, req: &mut ChatRequest) {
    if provider != Provider::Gemini {
        return;
    }
    for m in &mut req.messages {
        if let Message::Assistant { tool_calls, .. } = m
            && let Some(first) = tool_calls.first_mut()
            && first.thought_signature.is_none()
        {
            first.thought_signature = Some(SKIP_SIGNATURE.to_string());
        }
    }
}
