//! Hosted web search at run time: the support cache shared by a process's trials, the
//! `web_search` → `web_search_preview` fallback, and grounding telemetry. The pure capability
//! check (what can be guaranteed, failing closed) is `capability.rs`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::capability::{self, VARIANTS, wire_tool_type};
use crate::model::{ChatRequest, DecodeError, EncodeError, HostedTool, Outcome, Provider};
use crate::run::exchange::TrialRun;

/// Support status per (provider, model, variant). "Unsupported" is remembered for a while and
/// then retried; the clock is injectable so tests step through expiry.
pub struct SupportCache {
    ttl: Duration,
    entries: Mutex<HashMap<(Provider, String, String), Instant>>,
    clock: Box<dyn Fn() -> Instant + Send + Sync>,
}

impl SupportCache {
    pub const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

    pub fn new(ttl: Duration) -> SupportCache {
        SupportCache::with_clock(ttl, Instant::now)
    }

    /// A cache reading time from `clock` (tests step a manual clock through expiry).
    pub fn with_clock(
        ttl: Duration,
        clock: impl Fn() -> Instant + Send + Sync + 'static,
    ) -> SupportCache {
        SupportCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
            clock: Box::new(clock),
        }
    }

    /// The cache's current time.
    pub fn now(&self) -> Instant {
        (self.clock)()
    }

    pub fn mark_unsupported(&self, provider: Provider, model: &str, variant: &str, now: Instant) {
        let mut e = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        e.insert((provider, model.to_string(), variant.to_string()), now);
    }

    /// Whether `variant` is known unsupported at `now` (entries older than the TTL are dropped).
    pub fn is_unsupported(
        &self,
        provider: Provider,
        model: &str,
        variant: &str,
        now: Instant,
    ) -> bool {
        let mut e = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (provider, model.to_string(), variant.to_string());
        match e.get(&key) {
            Some(at) if now.saturating_duration_since(*at) < self.ttl => true,
            Some(_) => {
                e.remove(&key);
                false
            }
            None => false,
        }
    }

    /// The first variant to try: the first one not known unsupported.
    pub fn first_variant(
        &self,
        provider: Provider,
        model: &str,
        now: Instant,
    ) -> Option<&'static str> {
        VARIANTS
            .into_iter()
            .find(|v| !self.is_unsupported(provider, model, v, now))
    }
}

/// Grounding telemetry of one trial, snapshotted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Telemetry {
    /// The search tool was invoked.
    pub grounding_attempted: bool,
    /// Results with citations came back.
    pub grounded_effective: bool,
    pub tool_call_count: u32,
    pub tool_result_count: u32,
    /// Why there was no effective grounding, precisely; `None` when grounded.
    pub why_not_grounded: Option<String>,
    /// The hosted tool type the request used (`web_search`, `web_search_preview`, `web_search_20250305`, `googleSearch`).
    pub response_api_tool_type: Option<String>,
}

/// A trial's telemetry: from its last judged exchange, or from the encoder's refusal.
pub(crate) fn trial_telemetry(provider: Provider, run: &TrialRun) -> Telemetry {
    let last = run.judged().last();
    let tool_type = last
        .or(run.exchanges.last())
        .and_then(|e| wire_tool_type(provider, &e.encoded.request.body));
    telemetry(
        tool_type,
        last.and_then(|e| e.outcome.as_ref().ok()),
        run.encode_error.as_ref(),
    )
}

/// Telemetry from what was sent (`tool_type`) and what came back.
pub(crate) fn telemetry(
    tool_type: Option<String>,
    outcome: Option<&Outcome>,
    refused: Option<&EncodeError>,
) -> Telemetry {
    let mut t = Telemetry {
        response_api_tool_type: tool_type,
        ..Telemetry::default()
    };
    if let Some(e) = refused {
        t.why_not_grounded = Some(e.to_string());
        return t;
    }
    let Some(o) = outcome else {
        t.why_not_grounded = Some("NO_RESPONSE: nothing came back".into());
        return t;
    };
    if let Some(err) = &o.error {
        t.why_not_grounded = Some(format!("PROVIDER_ERROR: {} {}", err.status, err.message));
        return t;
    }
    let h = o.hosted.clone().unwrap_or_default();
    t.grounding_attempted = h.search_calls > 0;
    t.tool_call_count = h.search_calls;
    t.tool_result_count = h.search_results;
    t.grounded_effective = t.grounding_attempted && !h.citations.is_empty();
    t.why_not_grounded = if t.grounded_effective {
        None
    } else if !t.grounding_attempted {
        Some("GROUNDING_NOT_ATTEMPTED: the model answered without searching".into())
    } else if h.search_results == 0 {
        Some("GROUNDING_EMPTY_RESULTS: the search ran and returned no results".into())
    } else {
        Some("GROUNDING_NO_CITATIONS: results came back but the answer cites none".into())
    };
    t
}

pub(crate) fn variant_of(req: &ChatRequest) -> String {
    req.hosted
        .iter()
        .find_map(|h| match h {
            HostedTool::WebSearch { variant, .. } => variant.clone(),
            HostedTool::ToolSearch { .. } | HostedTool::Programmatic { .. } => None,
        })
        .unwrap_or_else(|| capability::VARIANTS[0].to_string())
}

pub(crate) fn set_variant(req: &mut ChatRequest, v: &str) {
    for h in &mut req.hosted {
        if let HostedTool::WebSearch { variant, .. } = h {
            *variant = Some(v.to_string());
        }
    }
}

/// When the answer rejects the current web search variant: marks it unsupported and returns
/// the variant to retry with (`None` when there is none left: the model is unsupported).
pub(crate) fn variant_rejected(
    req: &ChatRequest,
    outcome: &Result<Outcome, DecodeError>,
    cache: &SupportCache,
) -> Option<&'static str> {
    let err = outcome.as_ref().ok()?.error.as_ref()?;
    let current = variant_of(req);
    if !capability::is_variant_rejection(err.status, &err.message, &current) {
        return None;
    }
    let now = cache.now();
    cache.mark_unsupported(Provider::OpenaiResponses, &req.model, &current, now);
    cache.first_variant(Provider::OpenaiResponses, &req.model, now)
}

/// Whether a request to `provider` takes part in the hosted-search variant fallback: an OpenAI
/// Responses request with a hosted tool (the only API with two web search variants).
pub(crate) fn falls_back(provider: Provider, req: &ChatRequest) -> bool {
    provider == Provider::OpenaiResponses && !req.hosted.is_empty()
}

/// One step of the hosted-search variant fallback, the same for direct trials and the proxy:
/// when `outcome` says the variant `req` carried is not supported, it is marked so in `cache`,
/// `req` switches to the next variant, and the reason is returned (the caller sends again);
/// otherwise `None` and `req` is unchanged.
pub(crate) fn fallback_step(
    provider: Provider,
    req: &mut ChatRequest,
    outcome: &Result<Outcome, DecodeError>,
    cache: &SupportCache,
) -> Option<String> {
    if !falls_back(provider, req) {
        return None;
    }
    let next = variant_rejected(req, outcome, cache)?;
    let why = format!(
        "{} not supported by {}; retried with {next}",
        variant_of(req),
        req.model
    );
    set_variant(req, next);
    Some(why)
}

#[cfg(test)]
mod tests;
