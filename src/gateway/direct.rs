//! The HTTP way to a model server directly (server mode): the settings each route's bodies
//! carry (the profile's determinism fields, filled where the case left them out, and the output
//! limit, lowered to its cap), by route name.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// What every body of one route carries.
pub(crate) struct Settings {
    /// Fields added unless the body sets them.
    pub body: Map<String, Value>,
    /// The API's output-limit fields and their cap: each present lowered to it, the first set
    /// when none is (Chat has two: `max_tokens` and `max_completion_tokens`).
    pub cap: Option<(&'static [&'static str], u64)>,
}

/// Each route's settings, by route name, and the tape the server's exchanges are recorded on or
/// replayed from (`--record`, `--replay`).
pub(crate) struct Direct {
    pub routes: BTreeMap<String, Settings>,
    pub tape: Option<std::sync::Arc<crate::record::Tape>>,
}

impl Direct {
    /// `body` with route `route`'s settings.
    pub(crate) fn settle(&self, route: &str, body: &mut Value) {
        if let Some(s) = self.routes.get(route) {
            with_settings(body, s);
        }
    }
}

/// Adds the settings to a JSON object body: each field unless the body sets it; the output
/// limit set, or lowered, to the cap (never below a thinking budget's room).
fn with_settings(body: &mut Value, settings: &Settings) {
    let Some(b) = body.as_object_mut() else {
        return;
    };
    for (k, v) in &settings.body {
        b.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if let Some((fields, cap)) = settings.cap {
        // Messages' thinking budget must stay under `max_tokens` (the API refuses it otherwise):
        // a request that thinks keeps room for its budget and one token more.
        let budget = (b.get("thinking"))
            .and_then(|t| t.get("budget_tokens"))
            .and_then(Value::as_u64);
        let cap = budget.map_or(cap, |budget| cap.max(budget + 1));
        let mut any = false;
        for field in fields {
            if let Some(now) = b.get(*field).and_then(Value::as_u64) {
                b.insert((*field).to_string(), json!(now.min(cap)));
                any = true;
            }
        }
        if let (false, Some(first)) = (any, fields.first()) {
            b.insert((*first).to_string(), json!(cap));
        }
    }
}

#[cfg(test)]
mod tests;
