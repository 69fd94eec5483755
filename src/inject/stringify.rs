//! Compact JSON serialization with JavaScript `JSON.stringify` parity (the proxy this mirrors is JS).
//!
//! serde_json's compact writer already agrees on strings (`/`, non-ASCII, U+2028/2029 raw; control
//! characters as `\b \t \n \f \r` or lower-case `\u00xx`), but not on numbers: serde_json keeps
//! `1.0` and writes `1e21`, JavaScript writes `1` and `1e+21`. So numbers go through
//! [`js_number`], and the rest is written here too, to keep the two rules in one place.

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// `JSON.stringify(value)` for a value parsed from JSON (key order kept by `preserve_order`).
pub(crate) fn js_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// `JSON.stringify(s)` for a string: the quoted, escaped form.
pub(crate) fn js_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        if esc.is_none() && c >= ' ' {
            continue;
        }
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// JavaScript reads every number as an f64: integers beyond 2^53 print as their f64 value.
fn number(n: &Number) -> String {
    const SAFE: u64 = 1 << 53;
    if let Some(u) = n.as_u64() {
        if u <= SAFE {
            return u.to_string();
        }
    } else if let Some(i) = n.as_i64()
        && i.unsigned_abs() <= SAFE
    {
        return i.to_string();
    }
    js_number(n.as_f64().unwrap_or(0.0))
}

/// `Number.prototype.toString()` for an f64 (ECMA-262 Number::toString, radix 10).
pub(crate) fn js_number(f: f64) -> String {
    if !f.is_finite() {
        return "null".into(); // JSON.stringify(NaN) and Infinity
    }
    if f == 0.0 {
        return "0".into(); // also -0
    }
    // `{:e}` gives the shortest round-trip digits, like JavaScript: `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp + 1;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (a, b) = digits.split_at(n as usize);
        let _ = write!(out, "{a}.{b}");
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let e = n - 1;
        let sign = if e >= 0 { '+' } else { '-' };
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{sign}{}", e.abs());
    }
    out
}

#[cfg(test)]
mod tests;
