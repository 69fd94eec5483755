//! One exchange upstream, read once: the provider it went to (by the one route table), its
//! request as a plain request and decoded by that provider's request decoder, and its answer
//! decoded in the context of the request that caused it. Every judgement of the exchange takes
//! this reading; none decodes the exchange again.

use serde_json::Value;

use super::super::upstream::Exchange;
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, Outcome, Provider};
use crate::providers::DecodedRequest;

/// An exchange the system had with upstream, read once.
pub struct ReadExchange<'a> {
    pub ex: &'a Exchange,
    /// The provider the request went to (the path's API; a chat request on a text-protocol route
    /// is the text protocol).
    pub target: Provider,
    /// The request as sent (headers are not judged).
    pub sent: HttpRequest,
    /// `sent` read by `target`'s request decoder.
    pub decoded: Result<DecodedRequest, DecodeError>,
    /// What upstream answered, decoded in the context of the request (its stream flag the
    /// exchange's); `None` when it does not decode.
    pub answer: Option<Outcome>,
}

impl<'a> ReadExchange<'a> {
    /// `ex` read once: sent on a route to `route_target`, caused by the caller's `req`.
    pub fn read(ex: &'a Exchange, route_target: Provider, req: &ChatRequest) -> ReadExchange<'a> {
        let target = target_of_path(&ex.request.path, route_target);
        let sent = HttpRequest {
            method: ex.request.method.clone(),
            path: ex.request.path.clone(),
            query: ex.request.query.clone(),
            headers: Default::default(),
            body: serde_json::from_slice(&ex.request.body).unwrap_or(Value::Null),
        };
        let decoded = crate::providers::decode_request(target, &sent);
        let answer = answer_of(target, req, ex);
        ReadExchange {
            ex,
            target,
            sent,
            decoded,
            answer,
        }
    }

    /// The request as sent, decoded, when it decodes.
    pub fn request(&self) -> Option<&ChatRequest> {
        self.decoded.as_ref().ok().map(|d| &d.request)
    }

    /// What upstream answered as a client reading `inbound` sees it: its decoder drops a null
    /// the strict rewrite of its own request `req` added for an optional property, so the
    /// expected outcome gets the same reading (a transparent system's answer).
    pub fn expected(&self, inbound: Provider, req: &ChatRequest) -> Option<Outcome> {
        let mut outcome = self.answer.clone()?;
        crate::schema::restore_optional(inbound, req, &mut outcome);
        Some(outcome)
    }

    /// Upstream's answer decoded in the context of another request than the one it was read
    /// with (the caller's without its strict rewrite, say).
    pub fn answer_for(&self, req: &ChatRequest) -> Option<Outcome> {
        answer_of(self.target, req, self.ex)
    }

    /// The message of upstream's error envelope, else its body.
    pub fn error_message(&self) -> String {
        error_message(&self.ex.body())
    }
}

/// What upstream answered in `ex`, decoded as `target`'s answer to `req` (its stream flag the
/// exchange's).
fn answer_of(target: Provider, req: &ChatRequest, ex: &Exchange) -> Option<Outcome> {
    let mut neutral = req.clone();
    neutral.stream = ex.streamed;
    let resp = HttpResponse {
        status: ex.status,
        headers: ex.headers.clone(),
        body: ex.body(),
    };
    crate::providers::decode(target, &neutral, &resp).ok()
}

/// The provider a request to `path` was sent to, by the one route table (a system may bridge
/// to another API of the same vendor). The text protocol travels over a Chat Completions path:
/// a chat request to a text-protocol route is judged as the text protocol.
pub(crate) fn target_of_path(path: &str, target: Provider) -> Provider {
    let routed = crate::providers::route("POST", path, &Default::default()).map(|r| r.provider);
    match routed {
        Some(Provider::OpenaiChat) if target == Provider::TextProtocol => target,
        p => p.unwrap_or(target),
    }
}

/// The message of an error envelope (`error.message`, `message`, `error` as a string), else the
/// body; without request ids, so that a known failure's reason stays the same between runs.
pub(crate) fn error_message(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let v = v.as_array().and_then(|a| a.first()).unwrap_or(&v);
    ["/error/message", "/message", "/error"]
        .iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_str))
        .map_or_else(
            || String::from_utf8_lossy(body).into_owned(),
            str::to_string,
        )
}
