//! The integration tests, one binary (one link of tokio, reqwest and wiremock): each module is
//! one area, tested from outside through the library's public API or the built `tooltape`
//! binary. The per-trial conformance harness is the other test binary (`tests/conformance.rs`).

mod anywhere;
mod architecture;
mod case_format;
mod catalogue;
mod chunking;
mod cli;
mod client_docs;
mod client_mutants;
mod corpus;
mod fuzz;
mod gateway_compare;
mod gateway_docs;
mod gateway_mutants;
mod hosted_search;
mod import_vcr;
mod loopback_proxy;
mod proxy;
mod proxy_hostile;
mod python;
mod real_traffic;
mod recording;
mod recording_e2e;
mod recording_support;
mod reports;
mod request_decoders;
mod scratch;
mod sdk_simulate;
mod size_limits;
