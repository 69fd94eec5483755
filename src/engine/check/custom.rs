//! The check of OpenAI `custom` tools (freeform text or a grammar `format`, class 23): the
//! neutral request cannot carry one, so a gateway must forward it as the same custom tool to a
//! target that has them, or refuse the request; never drop it or declare an ordinary function of
//! its name (a JSON-arguments call the client's freeform tool cannot take).

use super::finding::{Finding, FindingKind, Side};
use crate::model::Severity;
use crate::providers::{DecodedRequest, ExtraKind};

/// The names of the `custom` tools a decoded request declares (kept as not-carried extras at
/// `/tools/N`): Chat's `custom.name`, Responses' `name`.
pub(crate) fn custom_tools(decoded: &DecodedRequest) -> Vec<String> {
    decoded
        .extras_of(ExtraKind::NotCarried)
        .filter(|e| e.pointer.starts_with("/tools/"))
        .filter(|e| e.value.get("type").and_then(|t| t.as_str()) == Some("custom"))
        .filter_map(|e| {
            let name = e
                .value
                .pointer("/custom/name")
                .or_else(|| e.value.get("name"));
            name.and_then(|n| n.as_str()).map(str::to_string)
        })
        .collect()
}

/// Upstream: each custom tool the client declared (`client`) went upstream as a custom tool of
/// the same name; `sent` is the upstream request as its format's decoder reads it. Sent as a
/// function of its name, or dropped while the rest is forwarded, it is a finding (the request
/// reached upstream, so the client is answered as if its tool had been offered).
pub(crate) fn custom_kept(client: &[String], sent: &DecodedRequest) -> Vec<Finding> {
    let kept = custom_tools(sent);
    client
        .iter()
        .filter(|name| !kept.contains(name))
        .map(|name| {
            let message = if sent.request.tools.iter().any(|t| &t.name == name) {
                format!(
                    "custom tool `{name}` sent as an ordinary function (JSON arguments its freeform input cannot take; refuse instead)"
                )
            } else {
                format!(
                    "custom tool `{name}` dropped from the request (refuse it where the target has none)"
                )
            };
            Finding::new(
                FindingKind::Unexpressible,
                Severity::Breaking,
                Side::Upstream,
                message,
            )
        })
        .collect()
}
