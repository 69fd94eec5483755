//! Fuzz target `request_decoder`: the property `props::request_decoder` (see tests/fuzz/props.rs), no panics.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::request_decoder(data));
