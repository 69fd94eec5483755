//! Fuzz target `cassette`: the property `props::cassette` (see tests/fuzz/props.rs), no panics.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::cassette(data));
