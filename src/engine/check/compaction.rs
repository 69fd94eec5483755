//! The compaction check (class 31): each compaction item upstream answered (a Responses
//! `compaction` item with its `encrypted_content`, an Anthropic `compaction` block with its
//! summary) reaches upstream again on the next round, verbatim. The item stands for the
//! conversation before it: a round without it goes on without that conversation, and the API
//! accepts it (nothing but this check sees the loss).

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity};
use crate::providers::compaction::{is_compaction, owner};

/// Upstream check of a follow-up round to the provider that `answered`: each of the answer's
/// compaction items is in an assistant turn of `sent` (the round's upstream request, decoded),
/// unchanged.
///
/// Only an item of the caller's own API (`inbound`) is judged: a server compacts only when the
/// request asks for it (Responses' and Anthropic's `context_management`), which a caller can
/// ask only in its own API's form. An item answered to a caller of another format (a Chat
/// client routed to Anthropic) stands for a compaction nobody could have asked for; what a layer
/// does with it says nothing (the simulator answers one whatever was asked, for now).
pub(crate) fn compaction_kept(
    answered: &Outcome,
    sent: &ChatRequest,
    inbound: Provider,
) -> Vec<Finding> {
    let items = || {
        (sent.messages.iter()).flat_map(|m| match m {
            Message::Assistant { opaque, .. } => opaque.as_slice(),
            _ => &[],
        })
    };
    let carried: Vec<&Value> = items().filter(|o| is_compaction(o)).collect();
    // A Responses item sent back by reference (`item_reference` to its id, with `store`): the
    // server that stored it reads it whole.
    let referred: Vec<&Value> = items()
        .filter(|o| o["type"] == "item_reference")
        .filter_map(|o| o.get("id"))
        .collect();
    let by_reference = |o: &Value| o.get("id").is_some_and(|id| referred.contains(&id));
    (answered.opaque.iter())
        .filter(|o| is_compaction(o) && owner(o) == inbound)
        .filter(|o| !carried.iter().any(|c| same_item(c, o)) && !by_reference(o))
        .map(|_| {
            let instead = if carried.is_empty() {
                "none is"
            } else {
                "only another, or an altered one, is"
            };
            Finding::new(
                FindingKind::Compaction,
                Severity::Breaking,
                Side::Upstream,
                format!(
                    "compaction item not carried back: upstream answered a compaction item (the conversation before it, summarized), and {instead} in the follow-up: the conversation it stands for is dropped"
                ),
            )
        })
        .collect()
}

/// The same item by meaning: equal but for fields set to null (an SDK's model of the item writes
/// its unset optional fields, `"created_by": null`, which the API reads as absent).
fn same_item(a: &Value, b: &Value) -> bool {
    let set = |v: &Value| -> Value {
        match v.as_object() {
            Some(o) => Value::Object(
                (o.iter())
                    .filter(|(_, x)| !x.is_null())
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect(),
            ),
            None => v.clone(),
        }
    };
    set(a) == set(b)
}
