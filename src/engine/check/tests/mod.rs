//! Unit tests of the gateway checks, by finding kind: for each finding a check makes, the
//! smallest input that makes exactly that finding (kind, side, severity, the gist of its
//! message), and the faithful input on which the check stays silent. One file a concern.

use super::{Finding, FindingKind, Side};
use crate::model::Severity;

mod compaction;
mod context;
mod custom;
mod downstream;
mod eager;
mod error_flag;
mod handed;
mod ids;
mod mcp;
mod nontext;
mod phase;
mod programmatic;
mod reasoning;
mod stream;
mod tool_search;
mod tools;
mod toolset;
mod upstream;
mod view;

/// `found` is exactly one finding, of `kind`, `side` and `severity`, whose message holds `gist`.
#[track_caller]
pub(crate) fn one(
    found: &[Finding],
    kind: FindingKind,
    side: Side,
    severity: Severity,
    gist: &str,
) {
    let [f] = found else {
        panic!("expected one {kind:?} finding ({gist}), got {found:#?}");
    };
    assert_eq!(
        (f.kind, f.side, f.severity),
        (kind, side, severity),
        "{f:?}"
    );
    assert!(f.message.contains(gist), "{:?} lacks {gist:?}", f.message);
}

/// The check found nothing.
#[track_caller]
pub(crate) fn silent(found: &[Finding]) {
    assert!(found.is_empty(), "expected no finding, got {found:#?}");
}

/// A `get_weather` call, `call_1`, for Bern.
pub(crate) fn weather_call() -> crate::model::ToolCall {
    crate::model::ToolCall::unsigned("call_1", "get_weather", serde_json::json!({"city": "Bern"}))
}

/// A follow-up round: `assistant` (the answered turn as sent back), then its call's result.
pub(crate) fn round_after(assistant: crate::model::Message) -> crate::model::ChatRequest {
    crate::model::ChatRequest::new("m")
        .with_user("weather?")
        .with_messages([
            assistant,
            crate::model::Message::Tool {
                call_id: "call_1".into(),
                name: "get_weather".into(),
                content: "{}".into(),
                is_error: false,
                parts: Vec::new(),
            },
        ])
}
