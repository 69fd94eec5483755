//! The proxy's checks on a request's text before JSON parsing (UTF-8, nesting depth), and the
//! words it answers a body not read whole with (`loopback` reads the body within the limits and
//! gives the status: 413, 408 or 400), naming the config key that sets the limit.

use crate::loopback::BodyError;

/// The message the client gets for `e`, in its format's envelope (status: `e.status()`).
pub(super) fn unread(e: &BodyError) -> String {
    match e {
        BodyError::TooLarge(_) => format!("{e} (max_body_bytes)"),
        BodyError::Timeout(_) => format!("{e} (body_timeout_ms)"),
        BodyError::Broken(_) => e.to_string(),
    }
}

/// What is wrong with `bytes` as request text before JSON parsing: invalid UTF-8 (with the
/// byte offset) or arrays and objects nested deeper than `max_depth`.
pub(super) fn text_problem(bytes: &[u8], max_depth: usize) -> Option<String> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Some(format!(
            "the request body is not valid UTF-8 (at byte {})",
            e.valid_up_to()
        ));
    }
    nested_deeper(bytes, max_depth).map(|at| {
        format!(
            "the request body nests arrays and objects deeper than {max_depth} levels (at byte {at}; max_json_depth)"
        )
    })
}

/// The offset of the first bracket that opens level `max_depth + 1` (brackets in strings skipped).
pub(super) fn nested_deeper(bytes: &[u8], max_depth: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}
