//! Reasoning state an API did not make, sent back to it as its own: each API verifies the
//! signatures in a conversation and answers 400 for one it did not sign (after a conversation
//! changed provider, a gateway copying one API's signature into another's field). The simulator
//! knows its own by their prefix (`Eq` for Anthropic thinking signatures, `CiQB` for Gemini
//! thought signatures, as it makes them); Gemini also takes its documented skip value.

use serde_json::Value;

/// The value Gemini documents for a thought signature it did not make (history from another
/// model): the signature check is skipped.
pub(crate) const GEMINI_SKIP: &str = "skip_thought_signature_validator";
/// The skip value as an SDK whose `thought_signature` is bytes writes it: base64 of its text
/// (`thoughtSignature` is a `bytes` field, base64 in the API's JSON).
const GEMINI_SKIP_BASE64: &str = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=";

/// An assistant `thinking` block whose signature Anthropic did not make: its 400.
pub(crate) fn anthropic_signature(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    for (i, m) in messages.iter().enumerate() {
        let blocks = m.get("content").and_then(Value::as_array);
        for (j, b) in blocks.into_iter().flatten().enumerate() {
            if b["type"] != "thinking" {
                continue;
            }
            let sig = b.get("signature").and_then(Value::as_str).unwrap_or("");
            if !sig.starts_with("Eq") {
                return Some(format!(
                    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                ));
            }
        }
    }
    None
}

/// A part whose thought signature Gemini did not make (nor the skip value): its 400.
pub(crate) fn gemini_signature(body: &Value) -> Option<String> {
    let contents = body.get("contents")?.as_array()?;
    for c in contents {
        let parts = c.get("parts").and_then(Value::as_array);
        for p in parts.into_iter().flatten() {
            let sig = (p
                .get("thoughtSignature")
                .or_else(|| p.get("thought_signature")))
            .and_then(Value::as_str);
            if let Some(sig) = sig
                && !sig.starts_with("CiQB")
                && sig != GEMINI_SKIP
                && sig != GEMINI_SKIP_BASE64
            {
                return Some(
                    "Unable to submit request because Thought signature is not valid.".into(),
                );
            }
        }
    }
    None
}
