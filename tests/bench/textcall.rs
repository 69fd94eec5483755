//! The `<tool_call>` text parser: 1 MB of mixed text and calls, whole and in 1-byte chunks.

use std::time::Duration;

use serde_json::json;

use crate::report::{Report, fastest_pair, mb_per_s};
use tooltape::{textcall::Parser, textcall::ParserConfig};

/// About 1 MB: prose (with `<` that are not tags), valid calls, recovered and rejected calls.
fn sample() -> String {
    let pieces = [
        "Let me look that up for you. Comparing a < b and c > d is fine in prose. ",
        "<tool_call>{\"name\":\"search\",\"arguments\":\"{\\\"q\\\":\\\"rust parsers\\\",\\\"limit\\\":5}\"}</tool_call>\n",
        "Some more text with a <b>tag</b> and unicode: é 日本 🦀.\n",
        "<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":\"object args\"}}</tool_call>>\n",
        "<tool_call>{\"name\":\"serach\",\"arguments\":\"{}\"}</tool_call>\n",
    ];
    let mut s = String::with_capacity(1 << 20);
    let mut i = 0;
    while s.len() < 1_000_000 {
        s.push_str(pieces[i % pieces.len()]);
        i += 1;
    }
    s
}

fn config() -> ParserConfig {
    ParserConfig::from_request(
        &json!({"tools": [{"type": "function", "name": "search", "strict": true,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]}}]}),
    )
}

/// Feeds `text` to `push` one char at a time (1 byte except for multi-byte characters, which a
/// `&str` cannot split). Each char is re-encoded into a small buffer: slicing the text instead
/// checks both ends of each slice for a char boundary, which costs more per chunk than the
/// parser does, and the figure is the parser's.
fn for_each_char(text: &str, mut push: impl FnMut(&str)) {
    let mut buf = [0u8; 4];
    for c in text.chars() {
        push(c.encode_utf8(&mut buf));
    }
}

fn run(config: &ParserConfig, text: &str, one_byte: bool) -> usize {
    let mut p = Parser::new(config.clone());
    if one_byte {
        for_each_char(text, |c| p.push(c));
    } else {
        p.push(text);
    }
    p.finish().tool_calls.len()
}

/// What the figures rest on, checked before timing: the 1-byte chunks are the sample's chars,
/// and both runs give the same calls.
fn check_method(config: &ParserConfig, text: &str) {
    let mut chunks = 0;
    let mut rebuilt = String::with_capacity(text.len());
    for_each_char(text, |c| {
        chunks += 1;
        rebuilt.push_str(c);
    });
    assert_eq!(chunks, text.chars().count(), "one chunk per char");
    assert_eq!(rebuilt, text, "the chunks are the sample");
    let whole = run(config, text, false);
    assert_eq!(run(config, text, true), whole, "1-byte run = whole run");
    assert!(whole > 5000, "the sample holds over 5000 calls");
}

pub fn section(report: &mut Report) {
    report.section("textcall parser");
    let text = sample();
    let config = config();
    check_method(&config, &text);
    let budget = Duration::from_millis(1600);
    let (whole, bytes) = fastest_pair(
        budget,
        || {
            std::hint::black_box(run(&config, &text, false));
        },
        || {
            std::hint::black_box(run(&config, &text, true));
        },
    );
    let whole_mb = mb_per_s(text.len(), whole);
    let bytes_mb = mb_per_s(text.len(), bytes);
    report.figure(
        "textcall: 1 MB mixed, whole",
        whole_mb,
        "MB/s",
        Some(("≥ 200", whole_mb >= 200.0)),
    );
    let ratio = bytes.as_secs_f64() / whole.as_secs_f64();
    report.figure(
        "textcall: 1 MB mixed, 1-byte chunks",
        bytes_mb,
        "MB/s",
        None,
    );
    report.figure(
        "textcall: 1-byte / whole time",
        ratio,
        "x",
        Some(("< 2", ratio < 2.0)),
    );
}
