//! Constraints the caller set that a target cannot keep, refused before anything is encoded
//! (class 33: a constraint reaches the target in a form that keeps its meaning, or the request
//! is refused; never a 200 without it).
//!
//! `parallel_tool_calls: false` (Anthropic's `disable_parallel_tool_use`) asks for at most one
//! call. Gemini's `FunctionCallingConfig` has no such switch (`mode` and
//! `allowedFunctionNames` only: https://ai.google.dev/api/caching#FunctionCallingConfig), and
//! the text protocol's injected instructions are fixed by its specification; each would answer
//! several calls to a caller that asked for one. `true` is every API's default and is kept by
//! saying nothing.

use crate::model::{ChatRequest, EncodeError, Provider, ToolChoice};

/// The code of a refused parallel switch.
pub(crate) const PARALLEL: &str = "PARALLEL_NOT_EXPRESSIBLE";

/// Fails closed on a constraint `provider` cannot keep.
pub(crate) fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    let has_switch = matches!(
        provider,
        Provider::OpenaiChat | Provider::OpenaiResponses | Provider::Anthropic
    );
    // Without tools, or under `none`, there is no call to limit.
    let calls = !req.tools.is_empty() && req.tool_choice != Some(ToolChoice::None);
    if req.parallel_tool_calls == Some(false) && !has_switch && calls {
        return Err(EncodeError::new(
            PARALLEL,
            format!(
                "{} cannot keep parallel_tool_calls=false (it has no parallel switch: the model may \
                 answer several calls); send the request without it, or to a provider that has it",
                provider.slug()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tool;

    fn request(parallel: Option<bool>, tools: bool) -> ChatRequest {
        let mut r = ChatRequest::empty("m", false);
        r.parallel_tool_calls = parallel;
        if tools {
            r.tools
                .push(Tool::function("t", None, crate::model::empty_parameters()));
        }
        r
    }

    #[test]
    fn a_parallel_switch_off_is_refused_only_where_the_target_has_none() {
        for p in Provider::ALL {
            let got = check(p, &request(Some(false), true)).err().map(|e| e.code);
            let refuses = matches!(p, Provider::Gemini | Provider::TextProtocol);
            assert_eq!(got.as_deref(), refuses.then_some(PARALLEL), "{p:?}");
            // On, unset, or nothing to limit: every target keeps it.
            assert!(check(p, &request(Some(true), true)).is_ok());
            assert!(check(p, &request(None, true)).is_ok());
            assert!(check(p, &request(Some(false), false)).is_ok());
            let mut none = request(Some(false), true);
            none.tool_choice = Some(ToolChoice::None);
            assert!(check(p, &none).is_ok());
        }
    }
}
