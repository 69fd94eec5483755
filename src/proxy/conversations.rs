//! The Responses conversations the proxy answered (class 22): a Responses client may continue a
//! round with `previous_response_id` and only its new items (`function_call_output`). The ids
//! the proxy gives its clients are its own (`resp_tt…`), never an upstream's, so it keeps each
//! conversation it answered itself (unless the request said `store: false`, as OpenAI does),
//! keyed by that id, and sends the whole context upstream, whatever the upstream's format; an id
//! it does not have is the Responses API's own 400 `previous_response_not_found`. Bounded,
//! oldest forgotten first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::model::{ChatRequest, Message, Outcome};
use crate::providers::{Rejection, responses_no_call};
use crate::respond::Inbound;

/// How many conversations the proxy keeps.
const KEPT: usize = 4096;

/// What a Responses request says of its conversation state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Continuation {
    /// The response it continues (`previous_response_id`).
    pub previous: Option<String>,
    /// Whether its answer is kept (`store`, default true). Always false for other formats.
    pub store: bool,
}

impl Continuation {
    pub(super) fn of(inbound: Inbound, body: &Value) -> Continuation {
        if inbound != Inbound::Responses {
            return Continuation::default();
        }
        Continuation {
            previous: body
                .get("previous_response_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            store: body.get("store") != Some(&Value::Bool(false)),
        }
    }
}

/// Conversations by the response id the client was given: every message up to and with that
/// answer's turn (system messages aside: instructions are not carried over).
#[derive(Default)]
pub(super) struct Conversations {
    kept: Mutex<VecDeque<(String, Vec<Message>)>>,
}

impl Conversations {
    /// Puts the kept conversation before the request's own messages (after its system
    /// messages); an unknown id is the Responses API's 400.
    pub(super) fn continued(
        &self,
        asked: &Continuation,
        neutral: &mut ChatRequest,
    ) -> Result<(), Rejection> {
        let Some(id) = &asked.previous else {
            return Ok(());
        };
        let Some(earlier) = self.get(id) else {
            return Err(Rejection::bad_request(format!(
                "Previous response with id '{id}' not found."
            ))
            .param("previous_response_id")
            .code("previous_response_not_found"));
        };
        // A result names its call by id, in the kept conversation (the Responses API's 400
        // otherwise); it gets its name from it.
        neutral.continue_after(earlier);
        let whole = neutral.messages.clone();
        for m in &mut neutral.messages {
            if let Message::Tool { call_id, name, .. } = m {
                let Some(called) = call_name(&whole, call_id) else {
                    return Err(responses_no_call(call_id));
                };
                if name.is_empty() {
                    *name = called;
                }
            }
        }
        Ok(())
    }

    fn get(&self, id: &str) -> Option<Vec<Message>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter().find(|(k, _)| k == id).map(|(_, v)| v.clone())
    }

    fn keep(&self, id: String, messages: Vec<Message>) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((id, messages));
    }
}

fn call_name(messages: &[Message], call_id: &str) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .find(|c| c.id == call_id)
            .map(|c| c.name.clone()),
        _ => None,
    })
}

/// Where one answer's conversation goes when it succeeds: the id the client is given and the
/// conversation before the answer (as the client meant it: before reasoning state is put back
/// and ids are fitted to the upstream).
pub(super) struct Keep {
    conversations: Arc<Conversations>,
    id: String,
    context: Vec<Message>,
}

impl Keep {
    /// Set when the request's answer is to be kept (a Responses request, `store` not false).
    pub(super) fn of(
        conversations: &Arc<Conversations>,
        asked: &Continuation,
        id: &str,
        neutral: &ChatRequest,
    ) -> Option<Keep> {
        asked.store.then(|| Keep {
            conversations: Arc::clone(conversations),
            id: id.to_string(),
            context: neutral
                .messages
                .iter()
                .filter(|m| !matches!(m, Message::System { .. }))
                .cloned()
                .collect(),
        })
    }

    /// The answer succeeded: the conversation with its turn is kept under the client's id.
    pub(super) fn answered(self, outcome: &Outcome) {
        if outcome.error.is_some() {
            return;
        }
        let mut messages = self.context;
        messages.push(Message::Assistant {
            phase: outcome.phase,
            text: outcome.text.clone(),
            tool_calls: outcome.tool_calls.clone(),
            opaque: outcome.opaque.clone(),
        });
        self.conversations.keep(self.id, messages);
    }
}
