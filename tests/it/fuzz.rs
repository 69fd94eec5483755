//! The fuzz targets' bounded deterministic random-input run: every property of
//! `tests/fuzz/props.rs` (the same code the cargo-fuzz targets call) over a fixed number of
//! inputs made by seeded mutations of the repository's own files (cassettes' requests and
//! responses, cases, gateway profiles, tools as MCP `tools/list` pages): no panic, and streams give the same outcome chunked.

use std::path::{Path, PathBuf};

#[path = "../fuzz/props.rs"]
mod props;

use serde_json::{Value, json};

use crate::scratch::repo;
use tooltape::Provider;

/// xorshift64*: the same inputs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens the mutations insert: JSON, SSE and TOML syntax, odd numbers and characters.
const PIECES: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b":",
    b",",
    b"null",
    b"true",
    b"1e999",
    b"-0",
    b"\n\n",
    b"\r\n",
    b"data: ",
    b"event: ",
    b"data: [DONE]\n\n",
    b": ping\n\n",
    b"=",
    b"[[",
    b"]]",
    b"\"type\"",
    b"\"tool_use\"",
    b"\"function\"",
    b"\"text\"",
    b"\\u0000",
    b"\\ud800",
    "é".as_bytes(),
    b"\xff",
    b"\xe2\x82",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"\"\"",
    b"0",
    b"18446744073709551616",
];

fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(5) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let end = (at + rng.below(16)).min(v.len());
                v.drain(at..end);
            }
            2 => {
                let end = (at + rng.below(64)).min(v.len());
                let copy = v[at..end].to_vec();
                v.splice(at..at, copy);
            }
            3 => v.truncate(at),
            _ => {
                let p = PIECES[rng.below(PIECES.len())];
                v.splice(at..at, p.iter().copied());
            }
        }
    }
    v
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

/// One interaction's request body, response body, and whether the response streamed.
type Bodies = (Vec<u8>, Vec<u8>, bool);

/// Every 25th cassette (sorted): its provider's index, its file text, its interactions' bodies.
fn cassettes() -> Vec<(usize, Vec<u8>, Vec<Bodies>)> {
    let mut all = Vec::new();
    for (pi, p) in Provider::ALL.iter().enumerate() {
        let mut stack = vec![repo().join("cassettes").join(p.slug())];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "json") {
                    all.push((pi, path));
                }
            }
        }
    }
    all.sort();
    all.iter()
        .step_by(25)
        .filter_map(|(pi, path)| {
            let (c, text) = tooltape::cassette::load(path).ok()??;
            let bodies = c
                .interactions
                .iter()
                .map(|it| {
                    let req = serde_json::to_vec(&it.request.body).unwrap();
                    (req, it.response.body_bytes(), it.response.stream.is_some())
                })
                .collect();
            Some((*pi, text.into_bytes(), bodies))
        })
        .collect()
}

fn framed(head: &[u8], body: &[u8]) -> Vec<u8> {
    let mut v = head.to_vec();
    v.extend_from_slice(body);
    v
}

/// Runs `prop` on `n` mutations of the seeds (and on each seed once), seeded by `salt`.
fn run(seeds: &[Vec<u8>], n: usize, salt: u64, prop: fn(&[u8])) {
    assert!(!seeds.is_empty(), "no seeds");
    for s in seeds {
        prop(s);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ salt);
    for _ in 0..n {
        let seed = &seeds[rng.below(seeds.len())];
        prop(&mutate(seed, &mut rng));
    }
}

#[test]
fn response_decoders_survive_random_bodies_and_chunkings() {
    let mut seeds = Vec::new();
    for (pi, _, bodies) in cassettes() {
        for (_, resp, stream) in bodies {
            let sel = pi as u8 | if stream { 8 } else { 0 };
            // 3 chunk lengths: 1, 7 and 64 bytes, cycled.
            seeds.push(framed(&[sel, 3, 1, 7, 64], &resp));
        }
    }
    run(&seeds, 5000, 1, props::response);
}

#[test]
fn request_decoders_survive_random_bodies() {
    let mut seeds = Vec::new();
    for (pi, _, bodies) in cassettes() {
        for (req, _, stream) in bodies {
            let path = match (Provider::ALL[pi], stream) {
                (Provider::Gemini, true) => 4,
                (p, _) => [0, 1, 2, 3, 5][Provider::ALL.iter().position(|x| *x == p).unwrap()],
            };
            seeds.push(framed(&[path], &req));
        }
    }
    run(&seeds, 5000, 2, props::request_decoder);
}

#[test]
fn the_proxy_reading_survives_random_requests() {
    let mut seeds = Vec::new();
    for (pi, _, bodies) in cassettes() {
        for (req, _, _) in bodies {
            let text = String::from_utf8(req).unwrap();
            let model = format!("to-{}", Provider::ALL[pi]);
            let text = text.replacen("\"model\":", &format!("\"model\":\"{model}\",\"x\":"), 1);
            seeds.push(framed(&[[0, 2, 3, 4, 0][pi]], text.as_bytes()));
        }
    }
    run(&seeds, 5000, 3, props::proxy_request);
}

#[test]
fn the_loaders_survive_random_files() {
    let cases: Vec<Vec<u8>> = files(&repo().join("cases"), "toml")
        .iter()
        .filter(|p| !p.ends_with("providers.toml"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    run(&cases, 1000, 4, props::case);
    let texts: Vec<Vec<u8>> = cassettes().into_iter().map(|(_, t, _)| t).collect();
    run(&texts, 1000, 5, props::cassette);
    let profiles: Vec<Vec<u8>> = files(&repo().join("gateways"), "toml")
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    run(&profiles, 1000, 6, props::profile);
}

#[test]
fn the_mcp_tools_reader_survives_random_pages() {
    // Each repository tool as a one-tool `tools/list` page (`parameters` as `inputSchema`).
    let seeds: Vec<Vec<u8>> = files(&repo().join("cases/tools"), "json")
        .iter()
        .step_by(4)
        .map(|p| {
            let t: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            let tool = json!({
                "name": t["name"],
                "description": t.get("description"),
                "inputSchema": t.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
            });
            serde_json::to_vec(&json!({"tools": [tool], "nextCursor": "2"})).unwrap()
        })
        .collect();
    let limits = tooltape::mcp::Limits::default();
    assert!(
        seeds
            .iter()
            .all(|s| tooltape::mcp::read_tools_page(s, limits).is_ok_and(|(t, _)| t.len() == 1)),
        "a seed is not a tools/list result"
    );
    run(&seeds, 1000, 7, props::mcp_tools);
}
