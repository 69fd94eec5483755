//! Compaction (class 31): the server summarizes a long conversation and answers the summary as
//! an item the client must send back verbatim, for the item stands for the conversation before
//! it. OpenAI Responses answers `{"type":"compaction","encrypted_content":…}` output items under
//! the request setting `context_management: [{"type":"compaction",…}]`; Anthropic answers
//! `{"type":"compaction","content":…}` blocks under `context_management: {"edits":
//! [{"type":"compact_20260112",…}]}` with the beta header `compact-2026-01-12`.
//!
//! Both travel as a turn's opaque items; the setting as `ServerContext::context_management`, in
//! the form of the API it came from. A target that cannot take them refuses (class 23's rule):
//! dropping the setting changes what the server does, and dropping an item drops the
//! conversation it stands for.

use serde_json::Value;

use crate::model::{ChatRequest, EncodeError, Encoded, Message, Provider};

/// A compaction item or the setting sent to a target without compaction, or in another API's form.
pub(crate) const NOT_EXPRESSIBLE: &str = "COMPACTION_NOT_EXPRESSIBLE";

/// Anthropic's beta header value for compaction.
pub(crate) const ANTHROPIC_BETA: &str = "compact-2026-01-12";

/// Whether an opaque item is a compaction item.
pub(crate) fn is_compaction(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("compaction")
}

/// The API a compaction item is of: Responses' carries `encrypted_content`, Anthropic's a
/// `content` summary (a string, or null for a failed compaction).
pub(crate) fn owner(item: &Value) -> Provider {
    if item.get("encrypted_content").is_some() {
        Provider::OpenaiResponses
    } else {
        Provider::Anthropic
    }
}

/// The API a context-management setting is written for: Responses' is an array of entries,
/// Anthropic's an object of `edits`.
fn setting_owner(v: &Value) -> Provider {
    if v.is_array() {
        Provider::OpenaiResponses
    } else {
        Provider::Anthropic
    }
}

/// Fails closed on a setting or an item `provider` cannot take as it is.
pub(crate) fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    if let Some(v) = &req.server.context_management
        && setting_owner(v) != provider
    {
        return Err(EncodeError::new(
            NOT_EXPRESSIBLE,
            format!(
                "{} cannot take the context-management setting {v} (it is {}'s: server-side compaction has no form there); send the request without it, or to {}",
                provider.slug(),
                setting_owner(v).slug(),
                setting_owner(v).slug()
            ),
        ));
    }
    for (i, m) in req.messages.iter().enumerate() {
        let Message::Assistant { opaque, .. } = m else {
            continue;
        };
        if let Some(item) = (opaque.iter()).find(|o| is_compaction(o) && owner(o) != provider) {
            return Err(EncodeError::new(
                NOT_EXPRESSIBLE,
                format!(
                    "message {i}: a {} compaction item cannot be sent to {}: it stands for the conversation before it, which {} cannot read; dropping it would drop that conversation",
                    owner(item).slug(),
                    provider.slug(),
                    provider.slug()
                ),
            ));
        }
    }
    Ok(())
}

/// Writes the setting (checked) into the encoded request: `context_management` in the body,
/// and Anthropic's beta header beside any other.
pub(crate) fn write(provider: Provider, req: &ChatRequest, encoded: &mut Encoded) {
    let Some(v) = &req.server.context_management else {
        return;
    };
    encoded.request.body["context_management"] = v.clone();
    if provider == Provider::Anthropic {
        super::anthropic::add_beta(&mut encoded.request.headers, ANTHROPIC_BETA);
    }
}

#[cfg(test)]
mod tests;
