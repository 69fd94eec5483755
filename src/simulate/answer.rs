//! The pure core's entry points: answer a request under a scenario, or under the scenario its
//! header carries.

use std::collections::BTreeMap;

use super::errors;
use super::exchange::{SCENARIO_HEADER, SIMULATOR_HEADER, SimRequest, SimResponse, VERSION};
use super::route;
use super::store::Store;
use crate::scenario::Scenario;

/// Answers one request under `scenario`: validation errors, the scenario's error, or the
/// simulated model's completion in the API's wire format. Pure and deterministic: no Responses
/// conversation is kept, so every `previous_response_id` is unknown (see [`answer_kept`]).
#[cfg(test)]
pub(crate) fn answer(req: &SimRequest, scenario: &Scenario) -> SimResponse {
    answer_kept(req, scenario, None)
}

/// Like [`answer`], continuing and keeping Responses conversations in `kept` (`store.rs`), the
/// core's one state.
pub(crate) fn answer_kept(
    req: &SimRequest,
    scenario: &Scenario,
    kept: Option<&Store>,
) -> SimResponse {
    let mut resp = route::answer(req, scenario, kept);
    resp.headers
        .insert(SIMULATOR_HEADER.to_string(), VERSION.to_string());
    resp
}

/// Like [`answer`], with the scenario read from the request's [`SCENARIO_HEADER`] (absent →
/// default; invalid → 400 in the API's error envelope naming the problem).
pub(crate) fn answer_request(req: &SimRequest, kept: Option<&Store>) -> SimResponse {
    match scenario_from_headers(&req.headers) {
        Ok(scenario) => answer_kept(req, &scenario, kept),
        Err(message) => {
            let mut resp = route::reject(req, &errors::Rejection::bad_request(message));
            resp.headers
                .insert(SIMULATOR_HEADER.to_string(), VERSION.to_string());
            resp
        }
    }
}

/// Reads the scenario header: absent, or scenario names (resolved against the request by
/// `named`) → default; JSON → that scenario; invalid JSON → a message naming the problem.
pub(crate) fn scenario_from_headers(
    headers: &BTreeMap<String, String>,
) -> Result<Scenario, String> {
    match headers.get(SCENARIO_HEADER) {
        None => Ok(Scenario::default()),
        Some(raw) if !raw.trim_start().starts_with('{') => Ok(Scenario::default()),
        Some(raw) => {
            serde_json::from_str(raw).map_err(|e| format!("invalid {SCENARIO_HEADER} header: {e}"))
        }
    }
}
