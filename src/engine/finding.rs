//! A finding: what one check saw wrong, by kind, side and severity.

pub(crate) use super::check::{Finding, FindingKind, Side};
