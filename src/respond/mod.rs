//! Writing a neutral outcome back in a client's wire format: buffered bodies, incremental
//! streams (Chat chunks, Responses events, Anthropic events, Gemini JSON array or SSE) and error
//! envelopes. Used by the proxy (answering clients) and the simulator (its envelopes and framing).

mod body;
mod chat_chunk;
mod errors;
mod format;
mod frame;
mod server_items;
mod stream;

#[cfg(test)]
mod tests;

pub(crate) use body::body;
pub(crate) use errors::{Envelope, Family, envelope};
pub(crate) use format::{Inbound, Meta};
pub(crate) use frame::{ResponsesEvents, sse};
pub(crate) use stream::StreamWriter;
