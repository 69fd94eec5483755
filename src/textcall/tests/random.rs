//! Bounded deterministic random inputs (seeded xorshift): no panics, and every random chunking
//! gives the outcome of the whole input.

use serde_json::json;

use super::vectors::all_chunkings;
use crate::providers::testkit::XorShift;
use crate::textcall::{Parser, ParserConfig, parse};

const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "</tool",
    "<",
    ">",
    "/",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "\\",
    ":",
    ",",
    "\"name\"",
    "\"arguments\"",
    "\"search\"",
    "\"say_hello\"",
    "\"{\\\"q\\\":\\\"x\\\"}\"",
    "{}",
    "```json\n",
    "```",
    " ",
    "\n",
    "text",
    "é",
    "日本",
    "🦀",
    "null",
    "true",
    "1e999",
    "\"parameters\"",
    "\\u00e9",
    r#"{"name":"search","arguments":"{\"q\":\"ok\"}"}"#,
];

fn config() -> ParserConfig {
    ParserConfig::from_request(&json!({"tools": [
        {"type": "function", "name": "search", "strict": true,
         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
        {"type": "function", "name": "say_hello"}
    ]}))
}

fn random_input(rng: &mut XorShift) -> String {
    let n = rng.below(24);
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(PIECES[rng.below(PIECES.len())]);
    }
    s
}

/// Random chunk boundaries on char boundaries.
fn random_chunks<'a>(rng: &mut XorShift, s: &'a str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let mut cut = 1 + rng.below(rest.len().min(8));
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    out
}

#[test]
fn random_inputs_whole_equals_chunked() {
    let config = config();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut calls = 0;
    for i in 0..3000 {
        let input = random_input(&mut rng);
        let whole = parse(&config, &input);
        calls += whole.tool_calls.len();
        for _ in 0..4 {
            let mut p = Parser::new(config.clone());
            for c in random_chunks(&mut rng, &input) {
                p.push(c);
            }
            assert_eq!(p.finish(), whole, "input #{i}: {input:?}");
        }
        // Every input also through the exhaustive splits, for the shorter ones.
        if input.len() < 40 {
            all_chunkings(&config, &input);
        }
    }
    assert!(calls > 0, "the generator should produce some valid calls");
}
