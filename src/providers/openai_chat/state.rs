//! The Chat Completions stream decoder's state: calls assembled by `index` (or `id`), text,
//! finish, usage, model, a mid-stream error; the chunk seeds (`chunk.rs`) write into it.

use std::collections::HashMap;

use serde_json::Value;

use super::decode::{error_from_value, parse_arguments, set_finish};
use super::wire::{BStr, CallDeltaWire};
use crate::model::{Diagnostic, Outcome, ProviderError, ToolCall, Usage};

#[derive(Default)]
pub(super) struct State {
    calls: Vec<PartialCall>,
    /// Position of the call the previous delta touched: the usual next target.
    last: usize,
    /// The highest wire `index` among the calls: a delta with a higher one starts a new call
    /// without a search through them all (which made 8,000 calls cost 32M comparisons).
    max_index: Option<u64>,
    /// The first call of each wire `index`, and of each id: a delta finds its call without a
    /// search through them all (the id search at every new call had brought the 32M
    /// comparisons back at 8,000 calls, 367 → 135 MB/s).
    by_index: HashMap<u64, usize>,
    by_id: HashMap<String, usize>,
    pub(super) text: String,
    /// A model server's reasoning text, per field of `reasoning::FIELDS`.
    pub(super) reasoning: [String; 2],
    pub(super) finish_reason: Option<String>,
    pub(super) usage: Option<Usage>,
    model: Option<String>,
    error: Option<ProviderError>,
    pub(super) done: bool,
    /// How many chunks were applied (a stream needs one, or `data: [DONE]`).
    pub(super) chunks: usize,
}

struct PartialCall {
    /// The wire `index`; `None` for servers that omit it (Mistral).
    index: Option<u64>,
    id: String,
    name: String,
    args: String,
}

impl State {
    pub(super) fn set_model(&mut self, m: BStr<'_>) {
        if self.model.as_deref() != Some(m.as_str()) {
            self.model = Some(m.0.into_owned());
        }
    }

    /// A mid-stream error arrives after a 200 status line; the first one is kept.
    pub(super) fn set_error(&mut self, err: &Value) {
        if self.error.is_none() && !err.is_null() {
            self.error = error_from_value(&serde_json::json!({ "error": err }), 200);
        }
    }

    pub(super) fn apply_call(&mut self, d: CallDeltaWire<'_>) {
        let pos = self.locate(&d);
        self.last = pos;
        let call = &mut self.calls[pos];
        // id and name come on the first delta; later non-empty values do not overwrite them and
        // empty ones (vLLM's `"name": ""` follow-ups) are ignored.
        if let Some(id) = d.id.filter(|s| !s.0.is_empty())
            && call.id.is_empty()
        {
            call.id = id.0.into_owned();
            // The first call holding an id answers for it, as a search in call order would.
            self.by_id
                .entry(call.id.clone())
                .and_modify(|k| *k = (*k).min(pos))
                .or_insert(pos);
        }
        if let Some(f) = d.function {
            if let Some(n) = f.name.filter(|s| !s.0.is_empty())
                && call.name.is_empty()
            {
                call.name = n.0.into_owned();
            }
            if let Some(a) = &f.arguments {
                a.append_to(&mut call.args);
            }
        }
    }

    /// The call a delta belongs to, creating it when new. With `index`: the call of that index.
    /// Without (Mistral sends whole calls with no index): a matching `id`, else a new call when the
    /// delta names an id or a function, else (a bare arguments fragment) the previous call.
    fn locate(&mut self, d: &CallDeltaWire<'_>) -> usize {
        let id = d.id.as_ref().map(BStr::as_str).filter(|s| !s.is_empty());
        let found = match d.index {
            Some(i) => match self.calls.get(self.last) {
                Some(c) if c.index == Some(i) => Some(self.last),
                _ if self.max_index.is_none_or(|m| i > m) => None,
                _ => self.by_index.get(&i).copied(),
            },
            None => match id {
                Some(id) => self.by_id.get(id).copied(),
                None => {
                    let named = d
                        .function
                        .as_ref()
                        .and_then(|f| f.name.as_ref())
                        .is_some_and(|n| !n.0.is_empty());
                    (!named && !self.calls.is_empty()).then_some(self.last)
                }
            },
        };
        // A delta naming another id than the call found at its index starts (or resumes) the
        // call of that id: servers that stream parallel calls at one index tell them apart so.
        // A new index is a new call even when it repeats an earlier call's id (two calls
        // sharing one id, as some servers answer: class 20).
        let new_index = d.index.is_some() && found.is_none();
        let found = found
            .filter(|&k| id.is_none_or(|id| self.calls[k].id.is_empty() || self.calls[k].id == id))
            .or_else(|| {
                id.filter(|_| !new_index)
                    .and_then(|id| self.by_id.get(id).copied())
            });
        found.unwrap_or_else(|| {
            if let Some(i) = d.index {
                self.max_index = Some(self.max_index.map_or(i, |m| m.max(i)));
                self.by_index.entry(i).or_insert(self.calls.len());
            }
            self.calls.push(PartialCall {
                index: d.index,
                id: String::new(),
                name: String::new(),
                args: String::new(),
            });
            self.calls.len() - 1
        })
    }

    pub(super) fn progress(&self) -> crate::providers::Progress<'_> {
        crate::providers::Progress {
            text: if self.text.is_empty() {
                Vec::new()
            } else {
                vec![self.text.as_str()]
            },
            calls: self
                .calls
                .iter()
                .map(|c| crate::providers::CallProgress {
                    caller: None,
                    id: &c.id,
                    name: &c.name,
                    arguments: std::borrow::Cow::Borrowed(&c.args),
                })
                .collect(),
        }
    }

    pub(super) fn into_outcome(self) -> Outcome {
        let mut out = Outcome {
            usage: self.usage,
            model: self.model,
            error: self.error,
            ..Outcome::default()
        };
        if !self.text.is_empty() {
            out.text = Some(self.text);
        }
        let texts = super::reasoning::FIELDS.iter().zip(&self.reasoning);
        out.opaque
            .extend(super::reasoning::item(texts.map(|(f, t)| (*f, t.as_str()))));
        let last_raw = self.calls.last().map(|c| c.args.clone());
        for (i, c) in self.calls.into_iter().enumerate() {
            let arguments = parse_arguments(&c.args, i, &mut out.diagnostics);
            out.tool_calls
                .push(ToolCall::unsigned(c.id, c.name, arguments));
        }
        let truncated = !self.done && self.finish_reason.is_none() && out.error.is_none();
        set_finish(&mut out, self.finish_reason, last_raw.as_deref());
        if truncated {
            out.diagnostics.push(Diagnostic::stream_truncated(
                "stream ended without `data: [DONE]` or a finish_reason",
            ));
        }
        out
    }
}
