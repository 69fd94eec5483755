//! Tests of the cassette format: load with positions, provenance, atomic write.

use super::*;

#[test]
fn json_array_stream_splits_per_element() {
    let body = "[{\"a\":\"}\"}\n,\r\n{\"b\":[1,{\"c\":2}]}\n]";
    let parts = split_stream(body);
    assert_eq!(parts.concat(), body);
    assert_eq!(parts.len(), 3, "{parts:?}");
}

#[test]
fn today_is_a_date() {
    let d = today();
    assert_eq!(d.len(), 10);
    assert!(d.starts_with("20"));
}

#[test]
fn atomic_write_replaces_whole_file() {
    let tmp = crate::scratch::folder("cassette-test");
    let dir = tmp.path().join("sub");
    let p = dir.join("x.json");
    write_atomic(&p, "one").unwrap();
    write_atomic(&p, "two").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary file left behind"
    );
}
