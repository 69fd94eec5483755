//! Call ids: each API's rule, and the rewrite that makes any id valid, stable and distinct.

use super::{fit, invalid};
use crate::model::Provider;

#[test]
fn each_api_says_which_ids_it_takes() {
    let kimi = "functions.get_weather:0";
    assert!(invalid(Provider::Anthropic, kimi).is_some());
    assert!(invalid(Provider::Anthropic, "toolu_01A-b").is_none());
    assert!(invalid(Provider::OpenaiChat, kimi).is_none());
    assert!(invalid(Provider::OpenaiChat, &"c".repeat(41)).is_some());
    assert!(invalid(Provider::OpenaiResponses, &"c".repeat(64)).is_none());
    assert!(invalid(Provider::OpenaiResponses, &"c".repeat(65)).is_some());
    assert!(invalid(Provider::Gemini, kimi).is_none());
}

#[test]
fn an_id_the_api_rejects_is_rewritten_the_same_way_every_time_and_kept_distinct() {
    assert_eq!(fit(Provider::Anthropic, "toolu_1"), "toolu_1");
    let a = fit(Provider::Anthropic, "functions.get_weather:0");
    assert_eq!(a, fit(Provider::Anthropic, "functions.get_weather:0"));
    assert_ne!(a, fit(Provider::Anthropic, "functions.get_weather:1"));
    assert!(invalid(Provider::Anthropic, &a).is_none(), "{a}");
    let long = format!("call_{}", "x".repeat(60));
    for api in [
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Anthropic,
    ] {
        let f = fit(api, &long);
        assert!(invalid(api, &f).is_none(), "{api:?}: {f}");
    }
}
