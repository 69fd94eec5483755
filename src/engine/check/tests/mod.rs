//! Unit tests of the gateway checks, by finding kind: for each finding a check makes, the
//! smallest input that makes exactly that finding (kind, side, severity, the gist of its
//! message), and the faithful input on which the check stays silent. One file a concern.

use super::{Finding, FindingKind, Side};
use crate::model::Severity;

mod compaction;
mod context;
mod custom;
mod downstream;
mod eager;
mod handed;
mod ids;
mod nontext;
mod phase;
mod reasoning;
mod stream;
mod tool_search;
mod tools;
mod toolset;
mod upstream;
mod view;

/// `found` is exactly one finding, of `kind`, `side` and `severity`, whose message holds `gist`.
#[track_caller]
pub(crate) fn one(
    found: &[Finding],
    kind: FindingKind,
    side: Side,
    severity: Severity,
    gist: &str,
) {
    let [f] = found else {
        panic!("expected one {kind:?} finding ({gist}), got {found:#?}");
    };
    assert_eq!(
        (f.kind, f.side, f.severity),
        (kind, side, severity),
        "{f:?}"
    );
    assert!(f.message.contains(gist), "{:?} lacks {gist:?}", f.message);
}

/// The check found nothing.
#[track_caller]
pub(crate) fn silent(found: &[Finding]) {
    assert!(found.is_empty(), "expected no finding, got {found:#?}");
}
