//! The one route table: which wire format a request's method, path and query speak, with the
//! model and stream framing the path carries (Gemini). The simulator, the proxy, gateway mode's
//! recording upstream and the Gemini request decoder all read paths through it.

use std::collections::BTreeMap;

use crate::model::Provider;

/// What a request path says about the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRoute {
    /// The wire format: Chat, Responses, Anthropic or Gemini (the text protocol travels over
    /// the Chat path, and only its body tells it apart).
    pub provider: Provider,
    /// Gemini: the model named in the path (`models/MODEL:…`); `None` where the body names it.
    pub model: Option<String>,
    /// How the answer is framed.
    pub framing: Framing,
}

/// How an answer is framed, as far as the path tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// The body decides (`"stream": true` in OpenAI and Anthropic requests).
    Body,
    /// Gemini `:generateContent`: one JSON body.
    Buffered,
    /// Gemini `:streamGenerateContent` without `alt=sse`: a streamed JSON array.
    JsonArray,
    /// Gemini `:streamGenerateContent?alt=sse`: Server-Sent Events.
    Sse,
}

impl Framing {
    /// The path alone says the answer streams (Gemini's stream method).
    pub fn streams(self) -> bool {
        matches!(self, Framing::JsonArray | Framing::Sse)
    }
}

/// The Gemini API versions served under `/{version}/models/…` (the official SDKs default to
/// `v1beta`; `v1` is the stable surface; `v1alpha` carries preview features).
const GEMINI_VERSIONS: [&str; 3] = ["v1beta", "v1", "v1alpha"];

/// The route of `method path?query`, or `None` when no API serves it. Every path the real APIs
/// serve: OpenAI with and without the `/v1` prefix (clients whose base URL already ends in
/// `/v1` append only `/chat/completions`), Anthropic `/v1/messages`, Gemini under each API
/// version, buffered, streamed as a JSON array, or streamed with `alt=sse`.
pub fn route(method: &str, path: &str, query: &BTreeMap<String, String>) -> Option<WireRoute> {
    if !method.eq_ignore_ascii_case("POST") {
        return None;
    }
    let plain = |provider| {
        Some(WireRoute {
            provider,
            model: None,
            framing: Framing::Body,
        })
    };
    match path {
        "/v1/chat/completions" | "/chat/completions" => plain(Provider::OpenaiChat),
        "/v1/responses" | "/responses" => plain(Provider::OpenaiResponses),
        "/v1/messages" => plain(Provider::Anthropic),
        p => {
            let (version, rest) = p.strip_prefix('/')?.split_once('/')?;
            if !GEMINI_VERSIONS.contains(&version) {
                return None;
            }
            let (model, stream) = gemini_method(rest.strip_prefix("models/")?)?;
            if model.contains('/') {
                return None;
            }
            let sse = query.get("alt").map(String::as_str) == Some("sse");
            Some(WireRoute {
                provider: Provider::Gemini,
                model: Some(model.to_string()),
                framing: match (stream, sse) {
                    (false, _) => Framing::Buffered,
                    (true, false) => Framing::JsonArray,
                    (true, true) => Framing::Sse,
                },
            })
        }
    }
}

/// `MODEL:generateContent` → (model, false); `MODEL:streamGenerateContent` → (model, true).
/// Also the Gemini request decoder's reading of any `…/models/MODEL:method` path (Vertex paths
/// carry a project prefix the route table does not serve).
pub(crate) fn gemini_method(model_and_method: &str) -> Option<(&str, bool)> {
    let (model, method) = model_and_method.rsplit_once(':')?;
    let stream = match method.trim_end_matches('/') {
        "generateContent" => false,
        "streamGenerateContent" => true,
        _ => return None,
    };
    (!model.is_empty()).then_some((model, stream))
}

#[cfg(test)]
mod tests;
