//! What a trial did: its exchanges (request, answer, decoded outcome) and how it ended early.

use crate::http::HttpResponse;
use crate::model::{ChatRequest, DecodeError, EncodeError, Encoded, Outcome};

/// One request/response of a trial.
#[derive(Debug)]
pub struct ExchangeRun {
    pub neutral: ChatRequest,
    pub encoded: Encoded,
    pub response: HttpResponse,
    pub outcome: Result<Outcome, DecodeError>,
    /// This attempt was answered "tool type not supported" and retried with another hosted
    /// tool variant: it is kept (and recorded) but judged by the retry.
    pub superseded: Option<String>,
}

impl TrialRun {
    /// The exchanges that count: attempts replaced by a variant fallback are left out.
    pub fn judged(&self) -> impl Iterator<Item = &ExchangeRun> {
        self.exchanges.iter().filter(|e| e.superseded.is_none())
    }
}

/// Everything a trial did. At most one of `encode_error` / `transport_error` ends it early.
#[derive(Debug, Default)]
pub struct TrialRun {
    pub exchanges: Vec<ExchangeRun>,
    /// Encoding failed closed: nothing was sent for that exchange.
    pub encode_error: Option<EncodeError>,
    /// The connection failed (refused, dropped mid-stream, timed out).
    pub transport_error: Option<String>,
}
