//! Fuzz target `response`: the property `props::response` (see tests/fuzz/props.rs), no panics.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::response(data));
