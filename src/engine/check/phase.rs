//! The phase check (class 32): the `phase` upstream answered its assistant message with
//! (OpenAI Responses' `commentary` while it works, `final_answer`) comes back with that message
//! on the next round to a Responses upstream, as OpenAI asks ("preserve and resend phase on all
//! assistant messages": dropping it degrades the model's answers, so OpenAI accepts the request
//! and a layer that loses it passes unnoticed but for this check). To another API the phase
//! has no field: nothing to carry (docs/wire-formats.md, "Assistant phase").

use super::finding::{Finding, FindingKind, Side};
use crate::model::{ChatRequest, Message, Outcome, Provider, Severity};

/// Upstream check of a follow-up round to `target`: the assistant turn of `sent` (the round's
/// upstream request, decoded) that sends back the turn upstream `answered` (by its calls'
/// ids, else by its text) carries the answer's phase. Silent when the answer had none, when
/// the target is not Responses, and when no turn sends the answer back (the result and
/// context checks judge a lost turn).
pub(crate) fn phase_kept(answered: &Outcome, sent: &ChatRequest, target: Provider) -> Vec<Finding> {
    let Some(want) = answered.phase else {
        return Vec::new();
    };
    if target != Provider::OpenaiResponses {
        return Vec::new();
    }
    let ids: Vec<&str> = answered.tool_calls.iter().map(|c| c.id.as_str()).collect();
    let turn = sent.messages.iter().find_map(|m| match m {
        Message::Assistant {
            text,
            tool_calls,
            phase,
            ..
        } => {
            let same_calls = !ids.is_empty()
                && tool_calls.len() == ids.len()
                && tool_calls.iter().all(|c| ids.contains(&c.id.as_str()));
            // A client format without call ids on the wire (Gemini) sends other ids back.
            let same_text = text.is_some() && *text == answered.text;
            (same_calls || same_text).then_some(*phase)
        }
        _ => None,
    });
    match turn {
        Some(got) if got != Some(want) => {
            let instead = got.map_or("without it".to_string(), |p| {
                format!("with `{}` instead", p.wire())
            });
            vec![Finding::new(
                FindingKind::Phase,
                Severity::Behaviour,
                Side::Upstream,
                format!(
                    "phase not carried back: upstream answered its message with phase `{}`, and the follow-up sends that message back {instead} (OpenAI: resend phase on all assistant messages)",
                    want.wire()
                ),
            )]
        }
        _ => Vec::new(),
    }
}
