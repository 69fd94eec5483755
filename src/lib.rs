//! tooltape: a record-and-replay conformance suite for LLM tool calling.
//!
//! One pipeline (ARCHITECTURE.md): a case file expands into trials ([`discover`], [`Trial`]);
//! each trial's neutral request ([`ChatRequest`]) is encoded for a provider ([`encode`]), sent to
//! an [`Endpoint`] (the [`ReplayServer`], the [`Simulator`], a gateway or a live provider) by
//! [`run_trial`], decoded ([`decode`], [`StreamDecoder`]) into an [`Outcome`], checked,
//! snapshotted and reported. The root holds the neutral model and those entry points; each
//! capability is a façade module exporting what its `mod.rs` curates: [`model`] (the rest of the
//! neutral types), [`providers`] (the wire
//! formats, one module each, and the route table), [`schema`], [`textcall`], [`inject`],
//! [`case`], [`cassette`], [`redact`], [`run`], [`harness`], [`record`], [`simulate`],
//! [`proxy`], [`mcp`], [`engine`] (the trial engine gateway and client mode run on), [`gateway`], [`client`], [`report`], [`drift`], [`status`].
//!
//! The library prints nothing: commands, terminal output and progress are the binary's.

#![warn(unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capability;
pub mod case;
pub mod cassette;
pub mod client;
pub mod clock;
mod contract;
pub mod drift;
pub mod engine;
mod fnv;
pub mod gateway;
pub mod harness;
mod http;
pub mod import_vcr;
pub mod inject;
pub mod input;
mod jsonseq;
mod junit;
mod located;
mod loopback;
pub mod matrix;
pub mod mcp;
pub mod model;
mod pointer;
pub mod providers;
pub mod proxy;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
mod respond;
pub mod run;
mod runtime;
mod scenario;
pub mod schema;
#[cfg(test)]
mod scratch;
pub mod server;
pub mod simulate;
mod sse;
pub mod status;
pub mod system;
mod text;
pub mod textcall;
mod tls;

// The neutral model and plain HTTP values.
pub use http::{HttpRequest, HttpResponse};
pub use model::{
    ChatRequest, DecodeError, EncodeError, Encoded, Finish, HostedTool, Message, Outcome, Provider,
    Severity, StrictPolicy, Tool, ToolCall, ToolChoice,
};

// The pipeline's entry points: cases and trials, the codecs, running a trial and where it goes.
pub use case::{Case, ChoiceSpec, Mode, Trial, discover};
pub use providers::{StreamDecoder, decode, decode_request, encode};
pub use proxy::{Proxy, ProxyConfig};
pub use replay::ReplayServer;
pub use run::{Endpoint, run_trial};
pub use runtime::runtime;
pub use simulate::{SimConfig, Simulator};
