//! Fuzz target for the incremental `<tool_call>` parser: no panics, and the chunking the input
//! chooses gives the same outcome as the whole text.
//!
//! Input layout: byte 0 = how many chunk-length bytes follow (at most 32); those bytes are the
//! chunk lengths (0 read as 1, cycled); the rest, read as lossy UTF-8, is the model text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tooltape::textcall::{Parser, ParserConfig, parse};

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 33).min(rest.len());
    let (lengths, text) = rest.split_at(n);
    let text = String::from_utf8_lossy(text);

    let config = ParserConfig::from_request(&json!({"tools": [
        {"type": "function", "name": "search", "strict": true,
         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
        {"type": "function", "name": "say_hello"}
    ]}));
    let whole = parse(&config, &text);

    let mut parser = Parser::new(config.clone());
    let mut remaining: &str = &text;
    let mut i = 0;
    while !remaining.is_empty() {
        let want = lengths
            .get(i % lengths.len().max(1))
            .map_or(1, |&l| usize::from(l).max(1));
        let mut cut = want.min(remaining.len());
        // Chunks are `&str`: move the cut to the next char boundary.
        while !remaining.is_char_boundary(cut) {
            cut += 1;
        }
        let (chunk, tail) = remaining.split_at(cut);
        parser.push(chunk);
        remaining = tail;
        i += 1;
    }
    assert_eq!(parser.finish(), whole);
});
