//! tooltape: a record-and-replay conformance suite for LLM tool calling.
//!
//! The pipeline (see ARCHITECTURE.md): case file → trials → `providers::encode` → transport
//! (replay, live, or the simulator) → `providers::decode` → `check` → snapshot and report.

pub mod capability;
pub mod case;
pub mod cassette;
pub mod check;
pub mod drift;
mod fnv;
pub mod gateway;
pub mod harness;
pub mod http;
pub mod import_vcr;
pub mod inject;
pub mod jsonseq;
pub mod located;
pub mod model;
pub mod pointer;
pub mod providers;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
pub mod run;
pub mod scenario;
pub mod schema;
pub mod simulate;
pub mod sse;
pub mod status;
pub mod textcall;
pub mod tls;
