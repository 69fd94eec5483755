//! How the judge words its findings: messages clipped, a round's findings numbered.

use super::super::finding::Finding;

/// `s` cut to its first 160 characters, marked with `…` where cut.
pub(super) fn clip(s: &str) -> String {
    crate::text::clip(s, 160)
}

/// `findings` as round `n`'s (their messages prefixed `round N: `).
pub(super) fn numbered(n: usize, findings: Vec<Finding>) -> Vec<Finding> {
    findings
        .into_iter()
        .map(|f| Finding {
            message: format!("round {}: {}", n + 1, f.message),
            ..f
        })
        .collect()
}
