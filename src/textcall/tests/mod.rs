//! Tests of the `<tool_call>` parser: call ids here; the fast reader against serde_json
//! (`fast`), seeded random inputs and chunkings (`random`), the reference vectors (`vectors`).

mod fast;
mod random;
mod vectors;

#[test]
fn call_ids_count_in_decimal() {
    for (n, id) in [
        (0, "call_0"),
        (7, "call_7"),
        (10, "call_10"),
        (4096, "call_4096"),
    ] {
        assert_eq!(super::call_id(n), id);
    }
    assert_eq!(super::call_id(usize::MAX), format!("call_{}", usize::MAX));
}
