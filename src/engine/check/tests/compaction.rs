//! The compaction check: each compaction item upstream answered must come back verbatim;
//! silence when it does, and when the answer had none.

use serde_json::{Value, json};

use super::{one, round_after, silent, weather_call};
use crate::engine::check::{FindingKind, Side, compaction_kept};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity, ToolCall};

const RESPONSES: Provider = Provider::OpenaiResponses;

fn item(sealed: &str) -> Value {
    json!({"id": "cmp_1", "type": "compaction", "encrypted_content": sealed})
}

fn call() -> ToolCall {
    weather_call()
}

fn answered(opaque: Vec<Value>) -> Outcome {
    Outcome {
        tool_calls: vec![call()],
        opaque,
        ..Outcome::default()
    }
}

fn follow_up(opaque: Vec<Value>) -> ChatRequest {
    round_after(Message::Assistant {
        phase: None,
        text: None,
        tool_calls: vec![call()],
        opaque,
    })
}

#[test]
fn compaction_sent_back_by_reference_is_carried() {
    // With `store`, a Responses client refers to the stored item by its id.
    let reference = json!({"type": "item_reference", "id": "cmp_1"});
    silent(&compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(vec![reference]),
        RESPONSES,
    ));
    // A reference to another item is not it.
    let other = json!({"type": "item_reference", "id": "rs_1"});
    assert_eq!(
        compaction_kept(
            &answered(vec![item("a")]),
            &follow_up(vec![other]),
            RESPONSES
        )
        .len(),
        1
    );
}

#[test]
fn compaction_carried_back_is_silent() {
    silent(&compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(vec![item("a")]),
        RESPONSES,
    ));
    silent(&compaction_kept(
        &answered(Vec::new()),
        &follow_up(Vec::new()),
        RESPONSES,
    ));
}

#[test]
fn compaction_dropped_is_a_breaking_finding() {
    let found = compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(Vec::new()),
        RESPONSES,
    );
    one(
        &found,
        FindingKind::Compaction,
        Side::Upstream,
        Severity::Breaking,
        "compaction item not carried back",
    );
}

#[test]
fn compaction_altered_is_a_finding() {
    let found = compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(vec![item("b")]),
        RESPONSES,
    );
    one(
        &found,
        FindingKind::Compaction,
        Side::Upstream,
        Severity::Breaking,
        "only another, or an altered one",
    );
}

/// A server compacts only when asked, in the caller's own API: an item answered to a caller of
/// another format (a Chat client routed to the Responses API) is not judged.
#[test]
fn compaction_for_a_caller_of_another_api_is_not_judged() {
    silent(&compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(Vec::new()),
        Provider::OpenaiChat,
    ));
    silent(&compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(Vec::new()),
        Provider::Anthropic,
    ));
}

/// An item that comes back with its unset optional fields written as null is the same item.
#[test]
fn compaction_with_null_optional_fields_is_the_same_item() {
    let mut back = item("a");
    back["created_by"] = Value::Null;
    silent(&compaction_kept(
        &answered(vec![item("a")]),
        &follow_up(vec![back]),
        RESPONSES,
    ));
}
