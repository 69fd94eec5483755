//! What a trial did: its exchanges (request, answer, decoded outcome) and how it ended early;
//! the one exchange routine every request of every mode goes through, and the own-time clock.

use std::time::{Duration, Instant};

use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, DecodeError, EncodeError, Encoded, Outcome, Provider};
use crate::run::transport::{Endpoint, Timing, send_timed};

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

/// The far side of an exchange that tooltape watches while it is in flight: gateway mode's
/// recording upstream opens a slot for the trial's prompt before the request goes out and hands
/// back what it received once the answer is in. Direct trials watch nothing (`()`).
pub(crate) trait Watch {
    type Seen;
    fn open(&self);
    fn close(&self) -> Self::Seen;
}

impl Watch for () {
    type Seen = ();
    fn open(&self) {}
    fn close(&self) {}
}

/// A request's answer: the HTTP response, the decoded outcome and when it completed, or why the
/// transport failed.
pub type DecodedResponse = Result<(HttpResponse, Result<Outcome, DecodeError>, Timing), String>;

/// One exchange (or driver step), sent and answered.
pub struct WatchedStep<S, A = DecodedResponse> {
    pub answer: A,
    /// What the watch saw (gateway mode: the upstream exchanges the request caused).
    pub seen: S,
    /// Open → close: time spent waiting on the far side, not tooltape's own.
    pub waited: Duration,
}

/// The one exchange routine: every request a trial sends (the first and each round, direct,
/// through a gateway, or made by a client library) opens its watch, is sent and timed, and
/// closes the watch.
pub(crate) async fn exchange<W: Watch>(
    (client, endpoint): (&reqwest::Client, &Endpoint),
    provider: Provider,
    neutral: &ChatRequest,
    request: &HttpRequest,
    watch: &W,
) -> WatchedStep<W::Seen> {
    watched(
        watch,
        send_timed(client, endpoint, provider, neutral, request),
    )
    .await
}

/// The watch around one step that makes requests: an HTTP exchange (`exchange`), or a client
/// library's call made through its driver (client mode). The step's whole time is a wait.
pub(crate) async fn watched<W: Watch, T>(
    watch: &W,
    step: impl std::future::Future<Output = T>,
) -> WatchedStep<W::Seen, T> {
    watch.open();
    let t0 = Instant::now();
    let answer = step.await;
    let seen = watch.close();
    WatchedStep {
        answer,
        seen,
        waited: t0.elapsed(),
    }
}

/// tooltape's own time on a trial: the whole trial less every exchange's wait.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OwnTime {
    start: Instant,
    waited: Duration,
}

impl OwnTime {
    pub(crate) fn start() -> OwnTime {
        OwnTime {
            start: Instant::now(),
            waited: Duration::ZERO,
        }
    }

    /// Counts an exchange's wait as not tooltape's.
    pub(crate) fn waited(&mut self, wait: Duration) {
        self.waited += wait;
    }

    /// The own time so far.
    pub(crate) fn own(&self) -> Duration {
        own_time(self.start.elapsed(), self.waited)
    }
}

/// `total` less the waits (never negative).
fn own_time(total: Duration, waited: Duration) -> Duration {
    total.saturating_sub(waited)
}

#[cfg(test)]
mod tests;
