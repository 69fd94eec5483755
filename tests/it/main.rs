//! The integration tests, one binary (one link of tokio, reqwest and wiremock): each module is
//! one area, tested from outside through the library's public API or the built `tooltape`
//! binary. The per-trial conformance harness is the other test binary (`tests/conformance.rs`).

// Support modules, shared by the test modules below; they hold no tests.

// The repository, the built binary, and self-removing scratch folders and project roots.
mod scratch;
// The recording and import tests' two-case project, and a recursive file listing.
mod recording_support;
// A test's resources beyond the repository (programs, the real-traffic corpus beside it): a
// skip saying how to provide one, or under CI a failure.
mod needs;
// The Python interpreter for the SDK scripts and driver loops (and the packaged helpers' tests).
mod python;
// A loopback HTTP proxy the gateway mutant and compare tests put in front of the upstream.
mod loopback_proxy;

// Test modules, one area each.

mod action;
mod anywhere;
mod architecture;
mod case_format;
mod catalogue;
mod chunking;
mod cli;
mod client_docs;
mod client_mutants;
mod corpus;
mod driver_loops;
mod fuzz;
mod gateway_compare;
mod gateway_docs;
mod gateway_mutants;
mod hosted_search;
mod import_vcr;
mod matrix;
mod mcp;
mod mcp_corpus;
mod proxy;
mod proxy_hostile;
mod real_traffic;
mod recording;
mod recording_e2e;
mod reports;
mod request_decoders;
mod sdk_simulate;
mod server;
mod signals;
mod size_limits;
