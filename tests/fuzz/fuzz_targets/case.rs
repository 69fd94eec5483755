//! Fuzz target `case`: the property `props::case` (see tests/fuzz/props.rs), no panics.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::case(data));
