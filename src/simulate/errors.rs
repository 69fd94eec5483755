//! Error answers of the simulated APIs: rejections, the usual message per status, and the whole
//! error response; the envelopes themselves are `respond`'s (shared with the proxy).

use serde_json::Value;

use super::exchange::SimResponse;
use super::wire;
pub(crate) use crate::providers::Rejection;
pub(crate) use crate::respond::Family;
use crate::respond::{Envelope, envelope};

/// The usual message for a status when the scenario or fault gives none.
pub(crate) fn default_message(family: Family, status: u16, model: &str) -> String {
    let s = match (family, status) {
        (Family::OpenAi, 401) => {
            "Incorrect API key provided: sk-simu*****ator. You can find your API key at https://platform.openai.com/account/api-keys."
        }
        (Family::OpenAi, 403) => "Country, region, or territory not supported",
        (Family::OpenAi, 404) => {
            return format!("The model `{model}` does not exist or you do not have access to it.");
        }
        (Family::OpenAi, 429) => "Rate limit reached for requests. Please try again in 1s.",
        (Family::OpenAi, 503) => "The engine is currently overloaded, please try again later",
        (Family::OpenAi, s) if s >= 500 => {
            "The server had an error while processing your request. Sorry about that!"
        }
        (Family::Anthropic, 401) => "invalid x-api-key",
        (Family::Anthropic, 403) => {
            "Your API key does not have permission to use the specified resource."
        }
        (Family::Anthropic, 404) => return format!("model: {model}"),
        (Family::Anthropic, 429) => {
            "Number of request tokens has exceeded your per-minute rate limit"
        }
        (Family::Anthropic, 529) => "Overloaded",
        (Family::Anthropic, s) if s >= 500 => "Internal server error",
        (Family::Gemini, 401) => "Request had invalid authentication credentials.",
        (Family::Gemini, 403) => "The caller does not have permission",
        (Family::Gemini, 404) => {
            return format!(
                "models/{model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."
            );
        }
        (Family::Gemini, 429) => "Resource has been exhausted (e.g. check quota).",
        (Family::Gemini, 503) => "The model is overloaded. Please try again later.",
        (Family::Gemini, 504) => "Deadline expired before operation could complete.",
        (Family::Gemini, s) if s >= 500 => "Internal error encountered.",
        _ => "The request could not be processed.",
    };
    s.to_string()
}

/// The error body of `rej` in `family`'s envelope. `seed` makes Anthropic's `request_id`.
pub(crate) fn body(family: Family, rej: &Rejection, seed: u64) -> Value {
    let request_id = wire::id("req_", seed, "request", 0, 24);
    envelope(
        family,
        &Envelope {
            status: rej.status,
            message: &rej.message,
            param: rej.extra.param.as_deref(),
            code: rej.extra.code.as_deref(),
            kind: rej.extra.kind.as_deref(),
            details: &rej.extra.details,
            request_id: Some(&request_id),
        },
    )
}

/// The whole error response: body, JSON content type and the rejection's extra headers.
pub(crate) fn response(family: Family, rej: &Rejection, seed: u64) -> SimResponse {
    // Google and OpenAI pretty-print error bodies; Anthropic sends compact JSON.
    let pretty = family != Family::Anthropic;
    let mut resp = wire::json_response(rej.status, &body(family, rej, seed), pretty);
    if family == Family::Gemini {
        resp.headers.insert(
            "content-type".to_string(),
            "application/json; charset=UTF-8".to_string(),
        );
    }
    for (k, v) in &rej.extra.headers {
        resp.headers.insert(k.clone(), v.clone());
    }
    resp
}
