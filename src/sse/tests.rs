//! Tests of the Server-Sent Events framer.

use super::*;

fn collect(chunks: &[&[u8]]) -> Vec<(String, String, usize)> {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    let mut f = |e: SseEvent<'_>| -> Result<(), SseError> {
        out.push((e.event.to_string(), e.data.to_string(), e.line));
        Ok(())
    };
    for c in chunks {
        d.push(c, &mut f).unwrap();
    }
    d.finish(&mut f).unwrap();
    out
}

#[test]
fn multi_line_data_comments_crlf_and_cr() {
    let body =
        b": keep-alive\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: x\r\rdata: [DONE]\n\n";
    let whole = collect(&[body]);
    assert_eq!(
        whole,
        vec![
            ("a".into(), "one\ntwo".into(), 3),
            ("".into(), "x".into(), 6),
            ("".into(), "[DONE]".into(), 8)
        ]
    );
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(collect(&bytes), whole);
    for split in 0..body.len() {
        let (a, b) = body.split_at(split);
        assert_eq!(collect(&[a, b]), whole, "split at {split}");
    }
}

#[test]
fn find_any_finds_the_first_needle_at_every_position() {
    for len in 0..40 {
        for at in 0..len {
            for needle in [b'\n', b'\r'] {
                let mut v: Vec<u8> = (0..len)
                    .map(|i| 0x80 | (i as u8).wrapping_mul(37))
                    .collect();
                v[at] = needle;
                if at + 1 < len {
                    v[at + 1] = b'\n';
                }
                assert_eq!(find_any(&v, [b'\n', b'\r']), Some(at), "len {len} at {at}");
            }
        }
        let v = vec![b'a'; len];
        assert_eq!(find_any(&v, [b'\n', b'\r']), None);
    }
}

#[test]
fn last_event_without_blank_line_is_dispatched() {
    assert_eq!(collect(&[b"data: {}"]), vec![("".into(), "{}".into(), 1)]);
}

#[test]
fn invalid_utf8_names_the_line() {
    let mut d = SseDecoder::new();
    let err = d
        .push(
            b"data: ok\n\ndata: \xff\n",
            &mut |_e| Ok::<(), SseError>(()),
        )
        .unwrap_err();
    assert_eq!(err.line, 3);
}

#[test]
fn split_events_round_trips() {
    let body = "event: a\r\ndata: 1\r\n\r\ndata: 2\n\ndata: tail";
    let parts = split_events(body);
    assert_eq!(parts.len(), 3);
    assert_eq!(parts.concat(), body);
}
