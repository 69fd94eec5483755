//! Tests of the streamed-JSON-array framer.

use super::*;

fn collect(chunks: &[&[u8]]) -> Result<Vec<(String, usize)>, JsonSeqError> {
    let mut d = JsonSeqDecoder::new();
    let mut out = Vec::new();
    for c in chunks {
        d.push(c, &mut |e: Element<'_>| -> Result<(), JsonSeqError> {
            out.push((e.text.to_string(), e.line));
            Ok(())
        })?;
    }
    Ok(out)
}

#[test]
fn array_elements_with_strings_escapes_and_nesting() {
    let body = "[{\"a\":\"}]\\\"{\",\"b\":[1,{\"c\":2}]}\n,\r\n{\"é\":\"x\"}\n]\n".as_bytes();
    let whole = collect(&[body]).unwrap();
    assert_eq!(
        whole,
        vec![
            ("{\"a\":\"}]\\\"{\",\"b\":[1,{\"c\":2}]}".into(), 1),
            ("{\"é\":\"x\"}".into(), 3)
        ]
    );
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(collect(&bytes).unwrap(), whole);
    for split in 0..body.len() {
        let (a, b) = body.split_at(split);
        assert_eq!(collect(&[a, b]).unwrap(), whole, "split at {split}");
    }
}

#[test]
fn bare_values_and_incomplete_state() {
    let mut d = JsonSeqDecoder::new();
    let mut n = 0;
    let mut f = |_e: Element<'_>| -> Result<(), JsonSeqError> {
        n += 1;
        Ok(())
    };
    d.push(b"{\"a\":1}\n{\"b\":", &mut f).unwrap();
    assert!(d.is_incomplete());
    d.push(b"2}", &mut f).unwrap();
    assert!(!d.is_incomplete());
    assert_eq!(n, 2);
}

#[test]
fn garbage_between_elements_names_line_and_column() {
    let err = collect(&[b"[{}\n, x]"]).unwrap_err();
    assert_eq!((err.line, err.column), (2, 3));
    assert!(collect(&[b"[{}] {}"]).is_err());
}
