//! Deferred tools, tool search and namespaces, the fail-closed part: which wire formats can
//! declare a deferred tool (`defer_loading`), a tool-search tool of which variant, and a
//! namespaced function; a request asking for one its target cannot express is refused with a
//! coded error before anything is encoded, never sent with the deferral dropped.
//!
//! Sources (docs/wire-formats.md, "Deferred tools and tool search"): Anthropic Messages declares
//! `tool_search_tool_regex_20251119` / `tool_search_tool_bm25_20251119` server tools beside
//! client tools marked `defer_loading: true`; OpenAI Responses declares a hosted
//! `{"type":"tool_search"}` beside functions (or namespaces' functions) marked so. Chat
//! Completions, Gemini and the text protocol have neither.

use crate::model::{ChatRequest, EncodeError, HostedTool, Message, Provider};

/// The code of every refusal here but a deferred tool with no search to find it.
pub(crate) const NOT_SUPPORTED: &str = "TOOL_SEARCH_NOT_SUPPORTED";

/// The prefix of Anthropic's tool-search server tool types.
pub(crate) const ANTHROPIC_PREFIX: &str = "tool_search_tool_";

/// OpenAI Responses' hosted tool-search type.
pub(crate) const RESPONSES_TYPE: &str = "tool_search";

/// Whether `provider`'s wire has the tool-search `variant`.
pub(crate) fn has_variant(provider: Provider, variant: &str) -> bool {
    match provider {
        Provider::Anthropic => variant.starts_with(ANTHROPIC_PREFIX),
        Provider::OpenaiResponses => variant == RESPONSES_TYPE,
        Provider::OpenaiChat | Provider::Gemini | Provider::TextProtocol => false,
    }
}

/// The refusal of a tool-search `variant` that `provider` does not have.
pub(crate) fn refused(provider: Provider, variant: &str) -> EncodeError {
    let has = match provider {
        Provider::Anthropic => "tool_search_tool_regex_* or tool_search_tool_bm25_*",
        Provider::OpenaiResponses => "tool_search",
        Provider::OpenaiChat | Provider::Gemini | Provider::TextProtocol => "no tool search",
    };
    EncodeError::new(
        NOT_SUPPORTED,
        format!(
            "{} cannot express the tool search {variant:?} (it has {has})",
            provider.slug()
        ),
    )
}

/// Anthropic's fixed name of a tool-search server tool: its type without the date
/// (`tool_search_tool_regex_20251119` → `tool_search_tool_regex`).
pub(crate) fn anthropic_name(variant: &str) -> &str {
    match variant.rsplit_once('_') {
        Some((name, date)) if date.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => variant,
    }
}

/// Fails closed on a tool search, a deferred tool or a namespace (a tool's, or an earlier call's)
/// that `provider` cannot express, and on deferred tools with no tool search to load them.
pub(crate) fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    for h in &req.hosted {
        if let HostedTool::ToolSearch { variant } = h
            && !has_variant(provider, variant)
        {
            return Err(refused(provider, variant));
        }
    }
    let deferred: Vec<&str> = (req.tools.iter())
        .filter(|t| t.defer_loading)
        .map(|t| t.name.as_str())
        .collect();
    if !deferred.is_empty() {
        if !matches!(provider, Provider::Anthropic | Provider::OpenaiResponses) {
            return Err(EncodeError::new(
                NOT_SUPPORTED,
                format!(
                    "{} cannot defer loading a tool ({}): it has no tool search",
                    provider.slug(),
                    deferred.join(", ")
                ),
            ));
        }
        if req.tool_search().is_none() {
            return Err(EncodeError::new(
                "DEFERRED_WITHOUT_SEARCH",
                format!(
                    "deferred tools ({}) with no tool search to load them: they could never be called",
                    deferred.join(", ")
                ),
            ));
        }
    }
    if provider == Provider::OpenaiResponses {
        return Ok(());
    }
    let tools = (req.tools.iter()).filter_map(|t| Some(("tool", &t.name, t.namespace.as_ref()?)));
    let calls = (req.messages.iter())
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .filter_map(|c| Some(("call of", &c.name, c.namespace.as_ref()?)));
    match tools.chain(calls).next() {
        Some((what, name, space)) => Err(EncodeError::new(
            "TOOL_NAMESPACE_NOT_SUPPORTED",
            format!(
                "{} has no tool namespaces ({what} {name} is in {space:?})",
                provider.slug()
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
