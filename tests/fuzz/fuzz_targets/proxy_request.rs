//! Fuzz target `proxy_request`: the property `props::proxy_request` (see tests/fuzz/props.rs), no panics.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::proxy_request(data));
