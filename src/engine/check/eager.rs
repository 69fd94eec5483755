//! The check of Anthropic's fine-grained tool streaming switch on the way up: a caller's tool
//! marked `eager_input_streaming: true` reaches an Anthropic upstream marked so, and a tool the
//! caller did not mark is not made eager (its arguments could then end as invalid JSON the
//! caller never agreed to take). Other upstreams have no such switch: the project's encoder
//! drops it with a note, and nothing is judged there. Downstream, an eager call cut by
//! `max_tokens` is the answer check's (`downstream`: the format's length finish, the cut call
//! never a call).

use super::finding::{Finding, FindingKind, Side};
use super::view::RequestView;
use crate::model::{Provider, Severity};

/// Upstream, gateway mode: the eager switch of every tool `client` sent, as `sent` carries it
/// to `target`.
pub(crate) fn eager_kept(
    client: &RequestView,
    sent: &RequestView,
    target: Provider,
) -> Vec<Finding> {
    eager_judged(client, sent, target, true)
}

/// Upstream, client mode: every tool the caller asked to stream eagerly reaches `target` so
/// marked. A library may make other tools eager of its own accord (a choice of its own, which
/// its caller's stream handling must then take), so only the switch dropped is judged.
pub(crate) fn eager_asked_kept(
    client: &RequestView,
    sent: &RequestView,
    target: Provider,
) -> Vec<Finding> {
    eager_judged(client, sent, target, false)
}

/// The switches judged; `added`: a tool made eager that the caller did not mark is a finding.
fn eager_judged(
    client: &RequestView,
    sent: &RequestView,
    target: Provider,
    added: bool,
) -> Vec<Finding> {
    if target != Provider::Anthropic {
        return Vec::new();
    }
    let mut out = Vec::new();
    for s in &sent.tools {
        let Some(c) = client.tools.iter().find(|c| c.name == s.name) else {
            continue;
        };
        let message = match (c.eager_input_streaming, s.eager_input_streaming) {
            (true, false) => format!(
                "eager_input_streaming dropped for {}: its arguments stream buffered, not as the client asked",
                s.name
            ),
            (false, true) if added => format!(
                "eager_input_streaming added to {}, which the client did not ask to stream eagerly (its arguments may end as invalid JSON)",
                s.name
            ),
            _ => continue,
        };
        out.push(Finding::new(
            FindingKind::Request,
            Severity::Behaviour,
            Side::Upstream,
            message,
        ));
    }
    out
}
