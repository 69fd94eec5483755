//! Hosted web search, the pure part: which provider (and model family) can guarantee REQUIRED
//! search and how, the fail-closed check run before anything is encoded, and the wire facts the
//! run layer's fallback uses (variants, what a rejection looks like). Run-time state (the
//! support cache, the variant fallback, telemetry) lives in `run/hosted.rs`.

use serde::Serialize;

use crate::model::{
    ChatRequest, EncodeError, Grounding, HostedTool, Message, Provider, ToolChoice,
};

/// How a provider can make web search mandatory, if at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RequiredSearch {
    /// `tool_choice: {"type": "web_search_preview"}` with the `web_search_preview` tool.
    ForcedHostedChoice,
    /// `tool_choice: {"type": "tool", "name": "web_search"}` naming the server tool.
    ForcedServerTool,
    /// Cannot be guaranteed: encoding fails closed.
    Impossible,
}

/// One row of the capability table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Capability {
    pub required_search: RequiredSearch,
    /// Whether tool_choice values other than `auto` are accepted next to hosted tools.
    pub non_auto_choice_with_hosted: bool,
    /// Where the fact comes from.
    pub source: &'static str,
}

/// OpenAI models of the GPT-5 family (and o-series reasoning models) reject every tool_choice
/// other than `auto` when hosted tools are present.
pub(crate) fn openai_auto_only(model: &str) -> bool {
    model.starts_with("gpt-5")
        || model.starts_with("o1")
        || model.starts_with("o3")
        || model.starts_with("o4")
}

/// The capability table. Each fact names its source.
pub(crate) fn capability(provider: Provider, model: &str) -> Capability {
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
pub(crate) fn grounding_required(req: &ChatRequest) -> bool {
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
pub(crate) fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    // The facts below are web search's; a tool search is checked by `providers::tool_search`.
    if !req.hosted.iter().any(HostedTool::is_web_search) {
        return Ok(());
    }
    let cap = capability(provider, &req.model);
    let required = grounding_required(req);
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
pub(crate) fn is_variant_rejection(status: u16, message: &str, variant: &str) -> bool {
    status == 400
        && message.contains(variant)
        && message.to_ascii_lowercase().contains("not supported")
}

/// The OpenAI Responses web search variants, in the order they are tried.
pub(crate) const VARIANTS: [&str; 2] = ["web_search", "web_search_preview"];

#[cfg(test)]
mod tests;
