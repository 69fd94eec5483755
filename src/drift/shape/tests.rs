//! Tests of the drift report's body shapes.

use super::*;

#[test]
fn sse_and_array_entries() {
    assert_eq!(
        parse_entry("event: ping\ndata: {\"type\":\"ping\"}\n\n")
            .0
            .as_deref(),
        Some("ping")
    );
    assert_eq!(parse_entry("data: [DONE]\n\n").0.as_deref(), Some("[DONE]"));
    assert_eq!(
        parse_entry("data: {\"object\":\"chat.completion.chunk\"}\n\n")
            .0
            .as_deref(),
        Some("chat.completion.chunk")
    );
    assert_eq!(
        parse_entry(",\r\n{\"candidates\":[]}").0.as_deref(),
        Some("data")
    );
    assert_eq!(parse_entry("\n]").0, None);
}
