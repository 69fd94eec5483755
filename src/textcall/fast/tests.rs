//! Tests of the fast reader's word-at-a-time scan.

use super::{Reader, STRING_STOP};
use crate::providers::testkit::XorShift;

/// The word-at-a-time scan stops where the byte-at-a-time one does, at every offset of
/// texts mixing plain ASCII, stops and bytes at the edges of the tests (0x1F, 0x20, 0x7F,
/// 0x80 and up).
#[test]
fn plain_runs_end_at_the_first_stop() {
    const PIECES: &[&str] = &[
        "a", "z", " ", "~", "!", "#", "[", "]", "\"", "\\", "\u{1}", "\u{1f}", "\t", "\n",
        "\u{7f}", "\u{80}", "é", "日", "🦀", "\u{a0}",
    ];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut members = Vec::new();
    for _ in 0..2_000 {
        let mut text = String::new();
        for _ in 0..rng.below(40) {
            // Mostly plain letters, so that long runs occur.
            let piece = if rng.below(4) == 0 {
                PIECES[rng.below(PIECES.len())]
            } else {
                PIECES[rng.below(2)]
            };
            text.push_str(piece);
        }
        for pos in 0..=text.len() {
            let r = Reader {
                text: &text,
                pos,
                members: &mut members,
            };
            let rest = text.as_bytes().get(pos..).unwrap_or_default();
            let want = rest
                .iter()
                .position(|&b| STRING_STOP[usize::from(b)])
                .unwrap_or(rest.len());
            assert_eq!(r.plain_run(), want, "{text:?} from {pos}");
        }
    }
}
