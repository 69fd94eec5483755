//! The compaction check (class 31): each compaction item upstream answered (a Responses
//! `compaction` item with its `encrypted_content`, an Anthropic `compaction` block with its
//! summary) reaches upstream again on the next round, verbatim. The item stands for the
//! conversation before it: a round without it goes on without that conversation, and the API
//! accepts it (nothing but this check sees the loss).

use serde_json::Value;

use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Message, Outcome, Severity};
use crate::providers::compaction::is_compaction;

/// Upstream check of a follow-up round to the provider that `answered`: each of the answer's
/// compaction items is in an assistant turn of `sent` (the round's upstream request, decoded),
/// unchanged.
pub(crate) fn compaction_kept(answered: &Outcome, sent: &ChatRequest) -> Vec<Finding> {
    let carried: Vec<&Value> = (sent.messages.iter())
        .flat_map(|m| match m {
            Message::Assistant { opaque, .. } => opaque.as_slice(),
            _ => &[],
        })
        .filter(|o| is_compaction(o))
        .collect();
    (answered.opaque.iter())
        .filter(|o| is_compaction(o) && !carried.contains(o))
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
