//! `tooltape init gateway`: a commented profile skeleton for a team's own gateway, and the base
//! URLs its config gives each provider to reach the recording upstream at a fixed address.

use std::net::SocketAddr;

use crate::model::Provider;

/// The suggested `--upstream-listen` address when none is given.
pub const DEFAULT_UPSTREAM: &str = "127.0.0.1:8790";

/// The profile skeleton for gateway `name` (run as `tooltape gateway PROFILE`), its recording
/// upstream at `upstream`. It loads as it is (routes for the four client formats, each to its own
/// provider); every key is explained.
pub fn skeleton(name: &str, profile: &str, upstream: SocketAddr) -> String {
    let urls: String = base_urls(upstream)
        .iter()
        .map(|(p, url)| format!("#                          {:<17} {url}\n", p.slug()))
        .collect();
    TEMPLATE
        .replace("@NAME@", name)
        .replace("@PROFILE@", profile)
        .replace("@UPSTREAM@", &upstream.to_string())
        .replace("@URLS@", &urls)
}

/// The base URL each provider's client in a gateway is given to reach the recording upstream at
/// `addr` (OpenAI-style base URLs end in `/v1`; the Anthropic and Gemini SDKs add their paths to
/// the bare host; the upstream also answers Gemini under `/v1beta` and OpenAI without `/v1`).
pub fn base_urls(addr: SocketAddr) -> Vec<(Provider, String)> {
    Provider::ALL
        .iter()
        .map(|&p| {
            let suffix = match p {
                Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => "/v1",
                Provider::Anthropic | Provider::Gemini => "",
            };
            (p, format!("http://{addr}{suffix}"))
        })
        .collect()
}

const TEMPLATE: &str = r#"# Gateway profile for `@NAME@`: how tooltape tests your gateway as a black box. tooltape is both
# ends: the client (sending each case in a client wire format) and the providers behind your
# gateway (a recording upstream that answers like each provider's API, with any key).
#
# Run it against your running gateway:
#   tooltape gateway @PROFILE@ --url http://127.0.0.1:4000 --upstream-listen @UPSTREAM@
#     --url              where your gateway listens (leave it out when [start] below starts it)
#     --upstream-listen  where the recording upstream listens; point your gateway's provider
#                        base URLs at it (any API key is accepted):
@URLS@#     --format junit     JUnit XML for CI (also json, md, html); exit 0 pass, 1 findings
#                        beyond the known failures, 2 a broken run
#     --cases DIR        your own cases beside the built-in ones (`tooltape cases export DIR`)

# One sentence: which gateway, which version.
description = "@NAME@: our gateway (say which version)"

# Headers every client request to your gateway carries: its own key, tenant headers.
headers = { authorization = "Bearer CHANGE-ME" }

# Trials in flight at once (each prompt is attributed to its trial at the upstream).
concurrency = 4

# Optional: let tooltape install and start the gateway itself (then run without --url).
# `{{dir}}` is the install folder (~/.cache/tooltape/gateways/NAME-VERSION), `{{port}}` a free
# port, `{{config}}` the file written from `config`, `{{upstream}}` the recording upstream's URL,
# `{{key}}` the key it is sent. See gateways/litellm.toml in the tooltape repository.
# version = "1.2.3"
# [install]
# check = "venv/bin/my-gateway"
# command = "python3 -m venv venv && venv/bin/pip install 'my-gateway==1.2.3'"
# [start]
# command = ["{{dir}}/venv/bin/my-gateway", "--config", "{{config}}", "--port", "{{port}}"]
# config_name = "config.yaml"
# ready = "/health"
# config = """
# providers:
#   openai: { base_url: "{{upstream}}/v1", api_key: "{{key}}" }
# """

# Routes: one per (client wire format, upstream provider) your gateway serves. The cases run
# through every route; delete the ones your gateway does not serve.
#   inbound   the client's wire format: chat (OpenAI Chat Completions), responses (OpenAI
#             Responses), messages (Anthropic Messages), generate-content (Gemini)
#   upstream  the provider the gateway forwards to: openai-chat, openai-responses, anthropic,
#             gemini, text-protocol
#   model     the model name the client sends, which your gateway maps to that upstream
#   headers   extra headers for this route only (optional)

[[routes]]
inbound = "chat"
upstream = "openai-chat"
model = "gpt-4.1-mini"

[[routes]]
inbound = "responses"
upstream = "openai-responses"
model = "gpt-5-mini"

[[routes]]
inbound = "messages"
upstream = "anthropic"
model = "claude-haiku-4-5"

[[routes]]
inbound = "generate-content"
upstream = "gemini"
model = "gemini-3.8-flash"

# Known failures: what your gateway gets wrong on purpose or for now. `trials` is a pattern over
# `case::route::choice::mode` (`*` matches any part); the trial then counts as known, not as a
# finding, and one that starts passing fails until its entry is removed. `flaky = true`: it
# fails only sometimes (a pass is then not an error).
# [[known_failure]]
# trials = "parallel_off::chat→gemini::*"
# reason = "Gemini has no parallel switch: `parallel_tool_calls: false` cannot be sent"
"#;
