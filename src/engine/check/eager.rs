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

/// Upstream: the eager switch of every tool `client` sent, as `sent` carries it to `target`.
/// A switch dropped is always a finding; a switch put on a tool the caller did not mark is one
/// only when `added` is judged: a gateway (`true`) keeps its client's switch both ways, a
/// library (client mode, `false`) may make other tools eager of its own accord (a choice of its
/// own, which its caller's stream handling must then take).
pub(crate) fn eager_kept(
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
