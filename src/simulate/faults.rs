//! Faults the server injects into chosen requests (rate limits, server errors, dropped streams,
//! truncated JSON, slow answers), and the pure answers they produce.

use std::time::Duration;

use serde_json::json;

use super::errors::{self, Family, Rejection};
use super::exchange::{SimBody, SimRequest, SimResponse};
use crate::fnv::fnv1a;

/// Which requests (0-based, in arrival order) a fault applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Exactly the request with this index.
    Nth(usize),
    /// The first `n` requests ("first two get 429, then succeed": `FirstN(2)`).
    FirstN(usize),
    /// Every `n`-th request: indices `n-1`, `2n-1`, ...
    EveryNth(usize),
    /// Every request from this index on.
    From(usize),
    Always,
}

impl When {
    pub fn matches(self, index: usize) -> bool {
        match self {
            When::Nth(n) => index == n,
            When::FirstN(n) => index < n,
            When::EveryNth(n) => n > 0 && (index + 1).is_multiple_of(n),
            When::From(n) => index >= n,
            When::Always => true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// 429 with `retry-after` (and `retry-after-ms`) headers; Gemini paths get a `RetryInfo` body instead.
    RateLimited {
        retry_after_secs: u64,
        retry_after_ms: Option<u64>,
    },
    /// A 5xx (500, 503, 529, ...) with the provider's error body.
    ServerError { status: u16 },
    /// Send about half of the answer, then abort the connection.
    DropMidStream,
    /// 200 with the answer's body cut in half (invalid JSON).
    MalformedJson,
    /// Wait this long (on top of the configured latency) before answering.
    Slow(Duration),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub when: When,
    pub kind: FaultKind,
}

impl Fault {
    pub fn nth(index: usize, kind: FaultKind) -> Fault {
        Fault {
            when: When::Nth(index),
            kind,
        }
    }

    pub fn first(n: usize, kind: FaultKind) -> Fault {
        Fault {
            when: When::FirstN(n),
            kind,
        }
    }

    pub fn always(kind: FaultKind) -> Fault {
        Fault {
            when: When::Always,
            kind,
        }
    }
}

/// The first fault that applies to request `index`.
pub(super) fn select(faults: &[Fault], index: usize) -> Option<&FaultKind> {
    faults
        .iter()
        .find(|f| f.when.matches(index))
        .map(|f| &f.kind)
}

/// The error answer of a rate-limit or server-error fault (`None` for the other kinds).
pub(crate) fn error_response(kind: &FaultKind, req: &SimRequest) -> Option<SimResponse> {
    let family = super::route::family_for_path(req);
    let seed = fnv1a(&req.body);
    let rej = match kind {
        FaultKind::RateLimited {
            retry_after_secs,
            retry_after_ms,
        } => rate_limited(family, *retry_after_secs, *retry_after_ms),
        FaultKind::ServerError { status } => {
            let status = if (500..=599).contains(status) {
                *status
            } else {
                500
            };
            Rejection::new(status, errors::default_message(family, status, "model"))
        }
        _ => return None,
    };
    Some(errors::response(family, &rej, seed))
}

fn rate_limited(family: Family, secs: u64, ms: Option<u64>) -> Rejection {
    let mut rej = Rejection::new(429, errors::default_message(family, 429, "model"));
    if family == Family::Gemini {
        // Google sends the delay in the body only (google.rpc.RetryInfo).
        let delay = match ms {
            Some(ms) if ms % 1000 != 0 => format!("{}s", ms as f64 / 1000.0),
            Some(ms) => format!("{}s", ms / 1000),
            None => format!("{secs}s"),
        };
        rej.extra.details = vec![
            json!({"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}),
            json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}),
        ];
        return rej;
    }
    rej.extra
        .headers
        .push(("retry-after".into(), secs.to_string()));
    if let Some(ms) = ms {
        rej.extra
            .headers
            .push(("retry-after-ms".into(), ms.to_string()));
    }
    rej
}

/// The answer with its body cut in half: a 200 whose JSON does not parse.
pub(crate) fn malformed_json(resp: SimResponse) -> SimResponse {
    let bytes = resp.body.bytes();
    let cut = (bytes.len() / 2).max(1).min(bytes.len().saturating_sub(1));
    SimResponse {
        status: 200,
        headers: resp.headers,
        body: SimBody::Full(bytes[..cut].to_vec()),
    }
}

/// For a dropped connection: the pieces to send before the abort (about half of the answer).
pub(crate) fn before_drop(body: &SimBody) -> Vec<Vec<u8>> {
    match body {
        SimBody::Chunks(c) => c[..c.len() / 2].to_vec(),
        SimBody::Full(b) => vec![b[..b.len() / 2].to_vec()],
    }
}
