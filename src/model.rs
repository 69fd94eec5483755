//! The neutral model: tools, tool choice, conversations and outcomes, independent of any wire format.
//!
//! Every provider module converts *from* [`ChatRequest`] and *to* [`Outcome`]; nothing here knows
//! about HTTP or JSON shapes of a particular API.
//!
//! This file declares and re-exports; each concern is a child: the request and its builder,
//! the outcome and its repairs, `Provider`, the codec errors, and the findings' `Severity`.

mod builder;
mod codec;
mod outcome;
mod provider;
mod repair;
mod request;
mod severity;

pub use codec::{DecodeError, EncodeError, Encoded};
pub(crate) use outcome::MAX_DIAGNOSTICS;
pub use outcome::{
    Diagnostic, DiagnosticKind, Finish, HostedActivity, Outcome, ProviderError, ToolSearchActivity,
    TruncatedCall, Usage,
};
pub use provider::Provider;
pub use request::{
    AllowedMode, Caller, ChatRequest, Grounding, HostedTool, Message, PROGRAMMATIC, Phase,
    ResultPart, ServerContext, StrictPolicy, Tool, ToolCall, ToolChoice, empty_parameters,
};
pub use severity::Severity;

#[cfg(test)]
mod tests;
