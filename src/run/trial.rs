//! One trial, exchange after exchange: the first request, then one follow-up per `[[rounds]]`
//! entry while the model calls tools, with the hosted-search variant fallback.

use crate::case::{ChoiceSpec, ContinueWith, Round, Trial};
use crate::model::{ChatRequest, EncodeError, Message, Outcome, Provider, ToolChoice};
use crate::providers;
use crate::run::exchange::{ExchangeRun, TrialRun, exchange};
use crate::run::hosted::{SupportCache, fallback_step, falls_back, set_variant};
use crate::run::transport::Endpoint;

/// Runs the trial's exchanges: the first request, then one more per `[[rounds]]` entry while
/// the model keeps calling tools. Follow-up exchanges use `tool_choice: auto` (agent loops do:
/// a forced or required choice would never let the model answer); an omitted choice stays omitted.
///
/// Hosted web search on OpenAI Responses: the first variant not known unsupported in `cache` is
/// tried; a 400 saying that tool type is not supported marks it in the cache and the exchange is
/// retried once with the next variant (both attempts are interactions of the trial).
pub async fn run_trial(
    client: &reqwest::Client,
    trial: &Trial,
    endpoint: &Endpoint,
    cache: &SupportCache,
) -> TrialRun {
    let mut run = TrialRun::default();
    let mut req = trial.first_request();
    if !trial.case.file.caller_tools.is_empty() {
        // The neutral request the project's encoders work from cannot carry them.
        run.encode_error = Some(EncodeError::new(
            "CALLER_TOOLS_NOT_CARRIED",
            "the case's caller tools (`caller_tools`) are not in the neutral request; only a gateway's caller sends them",
        ));
        return run;
    }
    let fallback = falls_back(trial.provider, &req);
    if fallback {
        match cache.first_variant(trial.provider, &req.model, cache.now()) {
            Some(v) => set_variant(&mut req, v),
            None => {
                run.encode_error = Some(EncodeError::new(
                    "GROUNDING_NOT_SUPPORTED",
                    format!(
                        "Model {} supports no web_search variant (cached)",
                        req.model
                    ),
                ));
                return run;
            }
        }
    }
    let rounds = &trial.case.file.rounds;
    let mut i = 0;
    // The last answer's response id, when the trial continues rounds by it (class 22).
    let mut continued_from: Option<String> = None;
    while i <= rounds.len() {
        let mut encoded = match providers::encode(trial.provider, &req) {
            Ok(e) => e,
            Err(e) => {
                run.encode_error = Some(e);
                break;
            }
        };
        if let Some(id) = continued_from.as_deref().filter(|_| i > 0) {
            providers::openai_responses::continue_from(&mut encoded.request.body, id);
        }
        if refers_to_reasoning(trial.provider, trial.case.file.continue_with) {
            providers::openai_responses::refer_to_reasoning(&mut encoded.request.body);
        }
        let sent = exchange(
            (client, endpoint),
            trial.provider,
            &req,
            &encoded.request,
            &(),
        )
        .await;
        let (response, outcome) = match sent.answer {
            Ok((response, outcome, _)) => (response, outcome),
            Err(e) => {
                run.transport_error = Some(e);
                break;
            }
        };
        let asked = fallback.then(|| req.clone());
        if let Some(why) = fallback_step(trial.provider, &mut req, &outcome, cache) {
            run.exchanges.push(ExchangeRun {
                neutral: asked.unwrap_or_else(|| req.clone()),
                encoded,
                response,
                outcome,
                superseded: Some(why),
            });
            continue;
        }
        let calls = match &outcome {
            Ok(o) if o.error.is_none() => o.clone(),
            _ => Outcome::default(),
        };
        if continues_by_id(trial.provider, trial.case.file.continue_with) {
            continued_from = providers::openai_responses::response_id(&response.body);
        }
        run.exchanges.push(ExchangeRun {
            neutral: req.clone(),
            encoded,
            response,
            outcome,
            superseded: None,
        });
        if i == rounds.len() || calls.tool_calls.is_empty() {
            break;
        }
        req = follow_up(req, &calls, &rounds[i], &trial.choice);
        i += 1;
    }
    run
}

/// Whether a client of `format` continues rounds by `previous_response_id` in a case asking
/// `continue_with`: Responses clients only.
pub(crate) fn continues_by_id(format: Provider, continue_with: Option<ContinueWith>) -> bool {
    format == Provider::OpenaiResponses && continue_with == Some(ContinueWith::PreviousResponseId)
}

/// Whether a client of `format` sends reasoning items back as `item_reference`s, in a case
/// asking `continue_with = "item_reference"`: Responses clients only.
pub(crate) fn refers_to_reasoning(format: Provider, continue_with: Option<ContinueWith>) -> bool {
    format == Provider::OpenaiResponses && continue_with == Some(ContinueWith::ItemReference)
}

/// The next exchange's request: the model's turn echoed back, then one result per call.
pub(crate) fn follow_up(
    mut req: ChatRequest,
    outcome: &Outcome,
    round: &Round,
    choice: &ChoiceSpec,
) -> ChatRequest {
    req.messages.push(Message::Assistant {
        phase: outcome.phase,
        text: outcome.text.clone(),
        tool_calls: outcome.tool_calls.clone(),
        opaque: outcome.opaque.clone(),
    });
    let mut used = vec![false; round.results.len()];
    for call in &outcome.tool_calls {
        // The first unused result for this tool; when they run out, the last one for it again.
        let idx = round
            .results
            .iter()
            .enumerate()
            .position(|(k, r)| !used[k] && r.tool.get_ref() == &call.name)
            .or_else(|| {
                round
                    .results
                    .iter()
                    .rposition(|r| r.tool.get_ref() == &call.name)
            });
        let ((content, parts), is_error, id) = match idx {
            Some(k) => {
                used[k] = true;
                let r = &round.results[k];
                let id = r.unknown_call_id.as_ref().map(|i| i.get_ref().clone());
                (r.content.neutral(), r.is_error, id)
            }
            None => (
                (
                    format!("no result configured for tool `{}`", call.name),
                    Vec::new(),
                ),
                true,
                None,
            ),
        };
        req.messages.push(Message::Tool {
            // A result may be sent under an id no call had (`unknown_call_id`).
            call_id: id.unwrap_or_else(|| call.id.clone()),
            name: call.name.clone(),
            content,
            parts,
            is_error,
        });
    }
    if matches!(choice, ChoiceSpec::Choice(_)) {
        req.tool_choice = Some(ToolChoice::Auto);
    }
    // The container the answer's programmatic calls ran in is named again (class 30).
    if outcome.container.is_some() {
        req.server.container = outcome.container.clone();
    }
    round.apply_tools(&mut req.tools);
    req
}
