use std::collections::BTreeMap;

use super::{Framing, WireRoute, route};
use crate::loopback::parse_query;
use crate::model::Provider;

fn post(path_and_query: &str) -> Option<WireRoute> {
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_and_query, None),
    };
    route("POST", path, &parse_query(query.unwrap_or("")))
}

fn gemini(model: &str, framing: Framing) -> Option<WireRoute> {
    Some(WireRoute {
        provider: Provider::Gemini,
        model: Some(model.to_string()),
        framing,
    })
}

#[test]
fn openai_paths_with_and_without_the_v1_prefix() {
    for (path, provider) in [
        ("/v1/chat/completions", Provider::OpenaiChat),
        ("/chat/completions", Provider::OpenaiChat),
        ("/v1/responses", Provider::OpenaiResponses),
        ("/responses", Provider::OpenaiResponses),
        ("/v1/messages", Provider::Anthropic),
    ] {
        let r = post(path).unwrap_or_else(|| panic!("{path}: no route"));
        assert_eq!(
            (r.provider, r.model, r.framing),
            (provider, None, Framing::Body),
            "{path}"
        );
    }
}

#[test]
fn gemini_under_every_api_version_and_framing() {
    for version in ["v1beta", "v1", "v1alpha"] {
        let base = format!("/{version}/models/gemini-3.8-flash");
        for (method, framing) in [
            (":generateContent", Framing::Buffered),
            (":streamGenerateContent", Framing::JsonArray),
            (":streamGenerateContent?alt=sse", Framing::Sse),
            // `alt=sse` frames only the stream method.
            (":generateContent?alt=sse&key=k", Framing::Buffered),
        ] {
            let path = format!("{base}{method}");
            assert_eq!(post(&path), gemini("gemini-3.8-flash", framing), "{path}");
        }
    }
    assert!(Framing::Sse.streams() && Framing::JsonArray.streams());
    assert!(!Framing::Buffered.streams() && !Framing::Body.streams());
}

#[test]
fn what_no_api_serves_has_no_route() {
    for path in [
        "/",
        "/v1",
        "/v1/chat",
        "/v2/chat/completions",
        "/v1/messages/count_tokens",
        "/v1/complete",
        "/v2beta/models/m:generateContent",
        "/v1beta/models/:generateContent",
        "/v1beta/models/m:countTokens",
        "/v1beta/models/m",
        "/v1beta/models/a/b:generateContent",
        "/v1beta/tunedModels/m:generateContent",
        "/models/m:generateContent",
    ] {
        assert_eq!(post(path), None, "{path}");
    }
    assert_eq!(route("GET", "/v1/chat/completions", &BTreeMap::new()), None);
    assert_eq!(
        route("get", "/v1beta/models/m:generateContent", &BTreeMap::new()),
        None
    );
    assert!(route("post", "/v1/messages", &BTreeMap::new()).is_some());
}
