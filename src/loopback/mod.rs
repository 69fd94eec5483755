//! The one loopback HTTP/1 server under `tooltape proxy`, the simulator and gateway mode's
//! recording upstream: binding, the base URL, shutdown on drop (listener and open connections),
//! one accept loop (with the proxy's connection limits as an option), each request read into a
//! plain [`Request`] (query percent-decoded, body within a size limit) and each [`Reply`] written
//! back. The servers above it write only what they answer.
//!
//! Layout: `server` (start, options, shutdown), `accept` (the accept loop and the guarded
//! connection), `request` (the request as read, the body limits and their refusals, the query
//! parser), `reply` (what a handler answers, its bodies, the hyper response).

mod accept;
mod reply;
mod request;
mod server;

#[cfg(test)]
mod tests;

pub(crate) use accept::ConnLimits;
pub(crate) use reply::{Body, Reply, Sink, chunked, full, pulled};
pub(crate) use request::{BodyError, BodyLimits, Request, parse_query};
pub(crate) use server::{Options, Server};
