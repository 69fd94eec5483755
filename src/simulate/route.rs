//! Routing and the common request pipeline: path → API, key header, JSON body, the API's own
//! checks, hosted-tool and schema rejections, the scenario's error, then the model's answer.

use serde_json::{Value, json};

use super::decide::{self, Ask};
use super::errors::{self, Family, Rejection};
use super::exchange::{Ctx, SCENARIO_HEADER, SimRequest, SimResponse};
use super::store::{self, Store};
use super::{anthropic, gemini, named, openai_chat, openai_responses};
use super::{text_protocol, wire};
use crate::fnv::fnv1a;
use crate::model::Provider;
use crate::providers::{self, Framing, WireRoute, tool_rejection, unlinked_result};
use crate::scenario::Scenario;

/// The error family of a wire format.
fn family(provider: Provider) -> Family {
    match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => Family::OpenAi,
        Provider::Anthropic => Family::Anthropic,
        Provider::Gemini => Family::Gemini,
    }
}

/// The error family a path belongs to (for 404s, scenario-header errors and faults): the
/// route's, or for a path no API serves, the vendor its prefix names.
pub(super) fn family_for_path(req: &SimRequest) -> Family {
    if let Some(api) = api_of(req) {
        return family(api.provider);
    }
    let p = req.path.as_str();
    if p.starts_with("/v1beta") || p.starts_with("/v1alpha") || p.starts_with("/v1/models/") {
        Family::Gemini
    } else if p.starts_with("/v1/messages") || p.starts_with("/v1/complete") {
        Family::Anthropic
    } else {
        Family::OpenAi
    }
}

/// `rej` in the envelope of the API `req` was addressed to.
pub(crate) fn reject(req: &SimRequest, rej: &Rejection) -> SimResponse {
    errors::response(family_for_path(req), rej, fnv1a(&req.body))
}

/// The simulated API of a request: the one route table's answer.
fn api_of(req: &SimRequest) -> Option<WireRoute> {
    providers::route(&req.method, &req.path, &req.query)
}

fn not_found(req: &SimRequest) -> Rejection {
    let family = family_for_path(req);
    let message = match family {
        Family::OpenAi => format!("Invalid URL ({} {})", req.method, req.path),
        Family::Anthropic => "Not Found".to_string(),
        Family::Gemini => format!(
            "The requested URL {} was not found on this server.",
            req.path
        ),
    };
    Rejection::new(404, message)
}

/// The pipeline; see the module doc. `kept`: the Responses conversations `previous_response_id`
/// continues, and where this answer is kept (none: every such id is unknown).
pub(crate) fn answer(req: &SimRequest, scenario: &Scenario, kept: Option<&Store>) -> SimResponse {
    let seed = fnv1a(&req.body);
    let Some(api) = api_of(req) else {
        return reject(req, &not_found(req));
    };
    match answer_api(&api, req, scenario, (seed, kept)) {
        Ok(resp) => resp,
        Err(rej) => errors::response(family(api.provider), &rej, seed),
    }
}

fn answer_api(
    api: &WireRoute,
    req: &SimRequest,
    scenario: &Scenario,
    (seed, kept): (u64, Option<&Store>),
) -> Result<SimResponse, Rejection> {
    check_key(api, req)?;
    let mut body = parse_body(api, &req.body)?;
    if api.provider == Provider::OpenaiResponses {
        store::continued(&mut body, kept)?;
        store::resolved(&mut body, kept)?;
    }
    let (provider, ask) = match api.provider {
        Provider::OpenaiChat if text_protocol::is_text_protocol(&body) => {
            (Provider::TextProtocol, text_protocol::parse(&body)?)
        }
        Provider::OpenaiChat | Provider::TextProtocol => {
            (Provider::OpenaiChat, openai_chat::parse(&body)?)
        }
        Provider::OpenaiResponses => (Provider::OpenaiResponses, openai_responses::parse(&body)?),
        Provider::Anthropic => (
            Provider::Anthropic,
            anthropic::parse(&body, header(req, "anthropic-beta"))?,
        ),
        Provider::Gemini => {
            let model = api.model.as_deref().unwrap_or_default();
            (
                Provider::Gemini,
                gemini::parse(&body, model, api.framing.streams())?,
            )
        }
    };
    // A scenario picked by name (header or model suffix) is laid over the one given.
    let named = named::select(header(req, SCENARIO_HEADER), &ask, scenario)
        .map_err(Rejection::bad_request)?;
    let scenario = named.as_ref().unwrap_or(scenario);
    check_hosted(api, &ask, scenario)?;
    if let Some(rej) = tool_rejection(provider, &body) {
        return Err(rej);
    }
    // A call or result id the API rejects (class 20): its own 400.
    if let Some(rej) = crate::providers::call_ids::rejection(provider, &body) {
        return Err(rej);
    }
    // A reasoning parameter to an OpenAI model that does not reason: OpenAI's 400.
    let model = ask
        .model
        .split(named::MODEL_SEPARATOR)
        .next()
        .unwrap_or_default();
    if let Some(rej) = providers::reasoning_rejection(provider, model, &body) {
        return Err(rej);
    }
    if provider == Provider::OpenaiResponses
        && let Some(rej) = openai_responses::phase_rejection(&body)
    {
        return Err(rej);
    }
    if let Some(message) = missing_reasoning(&provider, &body, scenario, &ask.model) {
        return Err(Rejection::bad_request(message));
    }
    if let Some(rej) = unlinked_result(provider, &store::whole(&body)) {
        return Err(rej);
    }
    if let Some(rej) = providers::result_part_rejection(provider, &body) {
        return Err(rej);
    }
    if let Some(err) = &scenario.error {
        return Err(scenario_error(
            family(api.provider),
            err.status,
            err.message.as_deref(),
            &ask,
        ));
    }
    let mut turn = decide::decide(&ask, scenario);
    // Only a reasoning model answers reasoning items.
    if provider == Provider::OpenaiResponses && !reasons(&ask.model) {
        turn.wire.reasoning = None;
    }
    // Anthropic with thinking on thinks before it calls (and requires that block back next
    // round): without a scenario's reasoning, a default one (server mode's reference model
    // gets no scenario).
    let thinking = body.pointer("/thinking/type").and_then(Value::as_str);
    if provider == Provider::Anthropic
        && matches!(thinking, Some("enabled" | "adaptive"))
        && turn.wire.reasoning.is_none()
        && ask.tool_results.is_none()
        && !turn.calls.is_empty()
    {
        turn.wire.reasoning = Some("The request needs a tool; I will call it.".into());
    }
    let ctx = Ctx {
        seed,
        body: &body,
        input_tokens: wire::tokens(req.body.len()),
    };
    Ok(match api.provider {
        _ if provider == Provider::TextProtocol => {
            text_protocol::render(&ctx, &ask, &turn, scenario.malformed)
        }
        Provider::OpenaiChat | Provider::TextProtocol => openai_chat::render(&ctx, &ask, &turn),
        Provider::OpenaiResponses => {
            if let Some(kept) = kept.filter(|_| store::stores(&body)) {
                let (id, output) = openai_responses::answered(&ctx, &ask, &turn);
                let mut items = store::input_items(&body);
                items.extend(output);
                kept.keep(&id, items);
            }
            openai_responses::render(&ctx, &ask, &turn)
        }
        Provider::Anthropic => anthropic::render(&ctx, &ask, &turn),
        Provider::Gemini => gemini::render(&ctx, &ask, &turn, api.framing == Framing::Sse),
    })
}

/// Whether the OpenAI model of a request (maybe with a `~scenario` suffix) reasons (the rule:
/// [`crate::providers::openai_reasons`]).
fn reasons(model: &str) -> bool {
    let model = model.split(named::MODEL_SEPARATOR).next();
    providers::openai_reasons(model.unwrap_or_default())
}

/// A follow-up that does not carry the model's reasoning back (Anthropic thinking blocks always
/// when thinking is on; Responses reasoning items when the scenario's model reasons and the
/// request's model is a reasoning one; Gemini
/// thought signatures on the models that validate them, Gemini 3 and later, whether or not the
/// scenario reasons: they sign every call): the provider's own 400.
fn missing_reasoning(
    provider: &Provider,
    body: &Value,
    scenario: &Scenario,
    model: &str,
) -> Option<String> {
    // Reasoning state the API did not make (class 20: a conversation from another provider).
    let foreign = match provider {
        Provider::Anthropic => super::foreign::anthropic_signature(body),
        Provider::Gemini => super::foreign::gemini_signature(body),
        _ => None,
    };
    if foreign.is_some() {
        return foreign;
    }
    match provider {
        Provider::Anthropic => anthropic::missing_thinking(body),
        Provider::OpenaiResponses if scenario.reasoning.is_some() && reasons(model) => {
            openai_responses::missing_reasoning(body)
        }
        Provider::Gemini if gemini::validates_signatures(model) => gemini::missing_signature(body),
        _ => None,
    }
}

fn header<'a>(req: &'a SimRequest, name: &str) -> Option<&'a str> {
    req.headers
        .get(name)
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
}

fn bearer(req: &SimRequest) -> Option<&str> {
    let v = header(req, "authorization")?;
    let key = v
        .strip_prefix("Bearer ")
        .or_else(|| v.strip_prefix("bearer "))?;
    (!key.trim().is_empty()).then_some(key)
}

/// Any non-empty key is accepted: the simulator checks that a key is sent the API's way.
fn check_key(api: &WireRoute, req: &SimRequest) -> Result<(), Rejection> {
    match api.provider {
        Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol
            if bearer(req).is_none() =>
        {
            Err(Rejection::new(
                401,
                "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
            ))
        }
        Provider::Anthropic if header(req, "x-api-key").is_none() && bearer(req).is_none() => {
            Err(Rejection::new(401, "x-api-key header is required"))
        }
        Provider::Gemini
            if header(req, "x-goog-api-key").is_none()
                && req.query.get("key").is_none_or(|k| k.is_empty()) =>
        {
            let mut rej = Rejection::bad_request("API key not valid. Please pass a valid API key.");
            rej.extra.details = vec![
                json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                       "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}),
                json!({"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
                       "message": "API key not valid. Please pass a valid API key."}),
            ];
            Err(rej)
        }
        _ => Ok(()),
    }
}

fn parse_body(api: &WireRoute, bytes: &[u8]) -> Result<Value, Rejection> {
    let parsed: Result<Value, _> = serde_json::from_slice(bytes);
    match (family(api.provider), parsed) {
        (_, Ok(v @ Value::Object(_))) => Ok(v),
        (Family::OpenAi, _) => Err(Rejection::bad_request(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
        )),
        (Family::Anthropic, Err(e)) => Err(Rejection::bad_request(format!(
            "There was an error parsing the body of your request: {e}"
        ))),
        (Family::Anthropic, Ok(_)) => {
            Err(Rejection::bad_request("Request body must be a JSON object"))
        }
        (Family::Gemini, Err(e)) => Err(Rejection::bad_request(format!(
            "Invalid JSON payload received. {e}"
        ))),
        (Family::Gemini, Ok(_)) => Err(Rejection::bad_request(
            "Invalid JSON payload received. Expected an object.",
        )),
    }
}

/// Hosted-tool rejections: Responses web search with a non-auto `tool_choice` (the exact
/// message OpenAI sends), and tool types the scenario says this model does not support.
fn check_hosted(api: &WireRoute, ask: &Ask, scenario: &Scenario) -> Result<(), Rejection> {
    if let Some(t) = ask
        .hosted_types
        .iter()
        .find(|t| scenario.unsupported_tool_types.contains(t))
    {
        let message = match family(api.provider) {
            Family::OpenAi => format!(
                "Hosted tool '{t}' is not supported with model '{}'.",
                ask.model
            ),
            Family::Anthropic => format!(
                "tools: tool type '{t}' is not supported with model '{}'",
                ask.model
            ),
            Family::Gemini => format!("Tool '{t}' is not supported with this model."),
        };
        let rej = Rejection::bad_request(message);
        return Err(if family(api.provider) == Family::OpenAi {
            rej.param("tools").code("unsupported_value")
        } else {
            rej
        });
    }
    // Only the GPT-5 family (and o-series) refuse non-auto choices next to hosted tools; the
    // same fact drives `capability::capability`.
    if api.provider == Provider::OpenaiResponses
        && ask.search.is_some()
        && crate::capability::openai_auto_only(&ask.model)
    {
        let choice = &ask.raw_choice;
        if !choice.is_null() && choice.as_str() != Some("auto") {
            return Err(Rejection::bad_request(format!(
                "Tool choices other than 'auto' are not supported with model '{}' and the following tool types: 'web_search_preview'.",
                ask.model
            ))
            .param("tool_choice"));
        }
    }
    Ok(())
}

fn scenario_error(family: Family, status: u16, message: Option<&str>, ask: &Ask) -> Rejection {
    let status = if (400..=599).contains(&status) {
        status
    } else {
        500
    };
    let message = message.map_or_else(
        || errors::default_message(family, status, &ask.model),
        str::to_string,
    );
    let mut rej = Rejection::new(status, message);
    if status == 429 && family != Family::Gemini {
        rej.extra.headers.push(("retry-after".into(), "1".into()));
    }
    rej
}
