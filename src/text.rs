//! Small text helpers every renderer shares: clipping long text, a Markdown table cell, HTML
//! escaping (and the markup escaping HTML and XML share), a JSON value's type as messages name it.

use serde_json::Value;

/// `s` cut to its first `n` characters, with `…` when something was cut.
pub(crate) fn clip(s: &str, n: usize) -> String {
    let c: String = s.chars().take(n).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}

/// `s` cut to at most `n` bytes on a character boundary, with `…` when something was cut (the
/// simulator's answers, whose length is counted in bytes).
pub(crate) fn clip_bytes(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `s` as one Markdown table cell: `|` escaped, line breaks as spaces.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `s` escaped for HTML element content and attribute values.
pub(crate) fn html_escape(s: &str) -> String {
    markup_escape(s, |c, out| {
        let entity = match c {
            '"' => "&quot;",
            '\'' => "&#39;",
            _ => return false,
        };
        out.push_str(entity);
        true
    })
}

/// `s` with `&`, `<` and `>` as entities, as every markup writes them; any other character
/// `other` writes (returning `true`) or is kept as it is.
pub(crate) fn markup_escape(s: &str, mut other: impl FnMut(char, &mut String) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if other(c, &mut out) => {}
            c => out.push(c),
        }
    }
    out
}

/// A JSON value's type as a message names it: `null`, `a boolean`, `a number`, `a string`,
/// `an array`, `an object`.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
