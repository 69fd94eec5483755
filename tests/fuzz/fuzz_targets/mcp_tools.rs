//! Fuzz target `mcp_tools`: the property `props::mcp_tools` (see tests/fuzz/props.rs), no panics.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::mcp_tools(data));
