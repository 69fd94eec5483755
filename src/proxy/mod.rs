//! `tooltape proxy`: the project's conversion logic served as a gateway on loopback. A client's
//! request (four inbound formats) becomes the neutral request, is encoded for the route's
//! upstream (strict transform, sanitizers, hosted-search policy failing closed), sent, decoded as
//! bytes arrive, and written back in the client's format, streamed incrementally; the reasoning
//! state of an answer is kept for the round that sends its calls back, and a Responses client's
//! conversation for the round that continues it by `previous_response_id`.

mod answer;
mod config;
mod conversations;
mod forward;
mod h1;
mod inbound;
mod read;
mod reasoning;
mod relay;
mod server;
mod upstream;

#[cfg(test)]
mod tests;

pub use config::{ProxyConfig, ProxyRoute};
pub use server::Proxy;
// What a library must do too when a conversation goes on on another provider (the reference
// driver's rounds).
pub(crate) use reasoning::sign_foreign;
