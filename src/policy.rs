//! Hosted-tool capability policy: which provider (and model family) can guarantee REQUIRED web
//! search and how, fail-closed checks run before anything is sent, the web_search →
//! web_search_preview fallback, the support cache, and grounding telemetry.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::model::{ChatRequest, Grounding, HostedTool, Message, Outcome, ToolChoice};
use crate::providers::{EncodeError, Provider};

/// How a provider can make web search mandatory, if at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequiredSearch {
    /// `tool_choice: {"type": "web_search_preview"}` with the `web_search_preview` tool.
    ForcedHostedChoice,
    /// `tool_choice: {"type": "tool", "name": "web_search"}` naming the server tool.
    ForcedServerTool,
    /// Cannot be guaranteed: encoding fails closed.
    Impossible,
}

/// One row of the capability table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Capability {
    pub required_search: RequiredSearch,
    /// Whether tool_choice values other than `auto` are accepted next to hosted tools.
    pub non_auto_choice_with_hosted: bool,
    /// Where the fact comes from.
    pub source: &'static str,
}

/// OpenAI models of the GPT-5 family (and o-series reasoning models) reject every tool_choice
/// other than `auto` when hosted tools are present.
pub fn openai_auto_only(model: &str) -> bool {
    model.starts_with("gpt-5")
        || model.starts_with("o1")
        || model.starts_with("o3")
        || model.starts_with("o4")
}

/// The capability table. Each fact names its source.
pub fn capability(provider: Provider, model: &str) -> Capability {
    match provider {
        // Source: the 400 recorded in the grounding incident and in providers.md §2.3 ("Tool choices
        // other than 'auto' are not supported with model 'gpt-5' and the following tool types:
        // 'web_search_preview'."; also for code_interpreter, file_search, image_generation and
        // allowed_tools: openai-python issue #2537).
        Provider::OpenaiResponses if openai_auto_only(model) => Capability {
            required_search: RequiredSearch::Impossible,
            non_auto_choice_with_hosted: false,
            source: "providers.md §2.3: GPT-5 family rejects tool_choice other than auto with hosted tools",
        },
        // Source: openapi.yaml ToolChoiceTypes lists `web_search_preview` (plain `web_search` is not
        // in the enum; providers.md §2.3). UNCONFIRMED live for non-GPT-5 models; covered by a trial.
        Provider::OpenaiResponses => Capability {
            required_search: RequiredSearch::ForcedHostedChoice,
            non_auto_choice_with_hosted: true,
            source: "openapi.yaml ToolChoiceTypes: {\"type\":\"web_search_preview\"} forces the hosted search",
        },
        // Source: Anthropic tool_choice `{"type":"tool","name"}` names any tool in `tools`, server
        // tools included (anthropic-sdk-python ToolChoiceToolParam; providers.md §3.2/§3.3). With
        // extended thinking a forced choice is refused (§3.3) and the encoder fails closed on that.
        Provider::Anthropic => Capability {
            required_search: RequiredSearch::ForcedServerTool,
            non_auto_choice_with_hosted: true,
            source: "providers.md §3.3: tool_choice {type: tool, name: web_search} forces the server tool",
        },
        // Source: providers.md §4.3: functionCallingConfig modes (ANY/VALIDATED) constrain function
        // declarations only; nothing forces the googleSearch built-in tool.
        Provider::Gemini => Capability {
            required_search: RequiredSearch::Impossible,
            non_auto_choice_with_hosted: true,
            source: "providers.md §4.3: functionCallingConfig cannot force googleSearch",
        },
        // Source: providers.md §1.2: Chat Completions has no hosted tools in `tools[]` (web search is
        // `web_search_options` on search models, which cannot be forced per request).
        Provider::OpenaiChat => Capability {
            required_search: RequiredSearch::Impossible,
            non_auto_choice_with_hosted: false,
            source: "providers.md §1.2: no hosted tools in Chat Completions tools[]",
        },
        // The text protocol tells the model never to call internal tools such as web_search.
        Provider::TextProtocol => Capability {
            required_search: RequiredSearch::Impossible,
            non_auto_choice_with_hosted: false,
            source: "text protocol instructions: internal tools (web_search) are never called",
        },
    }
}

/// Whether the request asks for REQUIRED web search.
pub fn grounding_required(req: &ChatRequest) -> bool {
    req.hosted.iter().any(|h| {
        matches!(
            h,
            HostedTool::WebSearch {
                grounding: Grounding::Required,
                ..
            }
        )
    })
}

/// The hosted search tool type a wire body declares (`web_search`, `web_search_preview`,
/// `web_search_20250305`, `googleSearch`), if any.
pub fn wire_tool_type(provider: Provider, body: &serde_json::Value) -> Option<String> {
    let tools = body.get("tools")?.as_array()?;
    tools.iter().find_map(|t| match provider {
        Provider::Gemini => t.get("googleSearch").map(|_| "googleSearch".to_string()),
        _ => t
            .get("type")
            .and_then(serde_json::Value::as_str)
            .filter(|ty| ty.starts_with("web_search"))
            .map(str::to_string),
    })
}

/// Whether a wire body forces the hosted search (the only acceptable form of REQUIRED).
pub fn forces_search(provider: Provider, body: &serde_json::Value) -> bool {
    let choice = body.get("tool_choice");
    match provider {
        Provider::OpenaiResponses => {
            choice
                .and_then(|c| c.get("type"))
                .and_then(serde_json::Value::as_str)
                == Some("web_search_preview")
                && wire_tool_type(provider, body).as_deref() == Some("web_search_preview")
        }
        Provider::Anthropic => {
            choice
                .and_then(|c| c.get("type"))
                .and_then(serde_json::Value::as_str)
                == Some("tool")
                && choice
                    .and_then(|c| c.get("name"))
                    .and_then(serde_json::Value::as_str)
                    == Some("web_search")
                && wire_tool_type(provider, body).is_some()
        }
        Provider::OpenaiChat | Provider::Gemini | Provider::TextProtocol => false,
    }
}

/// Fails closed before anything is sent when hosted tools are asked for in a way the provider
/// cannot honour: REQUIRED search it cannot guarantee, or a non-auto tool_choice it rejects.
pub fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    if req.hosted.is_empty() {
        return Ok(());
    }
    let cap = capability(provider, &req.model);
    let required = req.hosted.iter().any(|h| {
        matches!(
            h,
            HostedTool::WebSearch {
                grounding: Grounding::Required,
                ..
            }
        )
    });
    if required && cap.required_search == RequiredSearch::Impossible {
        return Err(EncodeError::new(
            "GROUNDING_NOT_SUPPORTED",
            format!(
                "Model {} with web_search tools cannot guarantee REQUIRED mode",
                req.model
            ),
        ));
    }
    if required && cap.required_search == RequiredSearch::ForcedServerTool && req.thinking.is_some()
    {
        // Source: providers.md §3.3: "Thinking may not be enabled when tool_choice forces tool use."
        return Err(EncodeError::new(
            "GROUNDING_NOT_SUPPORTED",
            format!(
                "Model {} with web_search tools cannot guarantee REQUIRED mode while extended thinking is on (a forced tool_choice is refused with thinking)",
                req.model
            ),
        ));
    }
    let choice_is_auto = matches!(req.tool_choice, None | Some(ToolChoice::Auto));
    if required && !choice_is_auto && !follow_up(req) {
        // Forcing the search takes the tool_choice; a function choice as well cannot be expressed.
        let slug = req
            .tool_choice
            .as_ref()
            .map(ToolChoice::slug)
            .unwrap_or_default();
        return Err(EncodeError::new(
            "GROUNDING_NOT_SUPPORTED",
            format!(
                "Model {} cannot force web_search (REQUIRED) and tool_choice {slug} in one request",
                req.model
            ),
        ));
    }
    // After the first exchange the choice is auto again (see run.rs), so only explicit ones matter.
    if !choice_is_auto && !cap.non_auto_choice_with_hosted && !follow_up(req) {
        let slug = req
            .tool_choice
            .as_ref()
            .map(ToolChoice::slug)
            .unwrap_or_default();
        return Err(EncodeError::new(
            "GROUNDING_NOT_SUPPORTED",
            format!(
                "Model {} rejects tool_choice {slug} next to hosted web_search tools; only auto is accepted",
                req.model
            ),
        ));
    }
    Ok(())
}

fn follow_up(req: &ChatRequest) -> bool {
    req.messages
        .iter()
        .any(|m| matches!(m, Message::Tool { .. }))
}

/// True when a 400 says the hosted tool type is not supported (the cue to try the other variant).
pub fn is_variant_rejection(status: u16, message: &str, variant: &str) -> bool {
    status == 400
        && message.contains(variant)
        && message.to_ascii_lowercase().contains("not supported")
}

/// The OpenAI Responses web search variants, in the order they are tried.
pub const VARIANTS: [&str; 2] = ["web_search", "web_search_preview"];

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
pub fn trial_telemetry(provider: Provider, run: &crate::run::TrialRun) -> Telemetry {
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
pub fn telemetry(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_forgets_unsupported_after_ttl() {
        let cache = SupportCache::new(Duration::from_secs(900));
        let t0 = Instant::now();
        let p = Provider::OpenaiResponses;
        assert_eq!(cache.first_variant(p, "gpt-4.1", t0), Some("web_search"));
        cache.mark_unsupported(p, "gpt-4.1", "web_search", t0);
        assert_eq!(
            cache.first_variant(p, "gpt-4.1", t0 + Duration::from_secs(899)),
            Some("web_search_preview")
        );
        assert_eq!(
            cache.first_variant(p, "other", t0),
            Some("web_search"),
            "per model"
        );
        assert_eq!(
            cache.first_variant(p, "gpt-4.1", t0 + Duration::from_secs(900)),
            Some("web_search"),
            "retried after 15 min"
        );
        cache.mark_unsupported(p, "m", "web_search", t0);
        cache.mark_unsupported(p, "m", "web_search_preview", t0);
        assert_eq!(
            cache.first_variant(p, "m", t0),
            None,
            "both variants unsupported: the model is"
        );
    }

    #[test]
    fn variant_rejection_needs_the_type_and_not_supported() {
        assert!(is_variant_rejection(
            400,
            "Tool type 'web_search' is not supported with this model.",
            "web_search"
        ));
        assert!(!is_variant_rejection(400, "Invalid schema", "web_search"));
        assert!(!is_variant_rejection(
            500,
            "web_search not supported",
            "web_search"
        ));
    }
}
