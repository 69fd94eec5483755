//! Anthropic's fine-grained tool streaming as the simulator answers it, for a tool the request
//! marks `eager_input_streaming: true`: the arguments' `input_json_delta` fragments come
//! unbuffered and unvalidated, longer than the default fragments and cut inside keys, strings
//! and numbers (never between two tokens), so no accumulated prefix is valid JSON before the
//! block ends; when `max_tokens` is reached the arguments end midway through a parameter's value.
//! Source: platform.claude.com, "Fine-grained tool streaming".

/// A string (key or value, quotes included) or a number of a compact JSON text: its bytes
/// `start..end`, and whether it is a key (a string followed by `:`).
struct Token {
    start: usize,
    end: usize,
    key: bool,
}

/// The strings and numbers of `json`, in order.
fn tokens(json: &str) -> Vec<Token> {
    let bytes = json.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
            let key = bytes.get(i) == Some(&b':');
            out.push(Token { start, end: i, key });
        } else if bytes[i].is_ascii_digit() || bytes[i] == b'-' {
            while i < bytes.len() && (bytes[i].is_ascii_digit() || b".eE+-".contains(&bytes[i])) {
                i += 1;
            }
            out.push(Token {
                start,
                end: i,
                key: false,
            });
        } else {
            i += 1;
        }
    }
    out
}

/// The offsets strictly inside `t` where a cut leaves both sides of the token apart: char
/// boundaries, never right after a backslash.
fn inside(json: &str, t: &Token) -> Vec<usize> {
    (t.start + 1..t.end)
        .filter(|&o| json.is_char_boundary(o) && json.as_bytes()[o - 1] != b'\\')
        .collect()
}

/// The eager fragments of `json`: about 11 to 19 bytes each (longer than the default stream's),
/// every cut inside a token.
pub(crate) fn fragments(json: &str, seed: u64) -> Vec<&str> {
    const SIZES: [usize; 5] = [13, 17, 11, 19, 15];
    let cuts: Vec<usize> = tokens(json).iter().flat_map(|t| inside(json, t)).collect();
    let mut out = Vec::new();
    let (mut start, mut turn) = (0, (seed % 5) as usize);
    while start < json.len() {
        let want = start + SIZES[turn % 5];
        let end = cuts
            .iter()
            .copied()
            .find(|&o| o >= want)
            .unwrap_or(json.len());
        out.push(&json[start..end]);
        start = end;
        turn += 1;
    }
    out
}

/// `json` cut by `max_tokens` midway through its last string value, or through its middle
/// when it has none.
pub(crate) fn cut(json: &str) -> &str {
    let tokens = tokens(json);
    let last = tokens
        .iter()
        .rev()
        .find(|t| !t.key && json.as_bytes()[t.start] == b'"');
    let within = last.map(|t| inside(json, t)).unwrap_or_default();
    match within.get(within.len() / 2) {
        Some(&at) => &json[..at],
        None => super::wire::half(json),
    }
}
