use super::{CauseKey, normalize};

fn tools() -> Vec<String> {
    vec![
        "get_weather".into(),
        "get_time".into(),
        "store_record".into(),
    ]
}

#[test]
fn normalize_abstracts_tools_case_ids_numbers_quotes_and_json() {
    let t = tools();
    assert_eq!(
        normalize("tools dropped: get_weather, get_time", &t, "weather"),
        "tools dropped: TOOL, …"
    );
    // A case name inside a choice slug stays; a tool name inside a longer name stays.
    assert_eq!(
        normalize(
            "tool_choice allowed-auto-get_weather+get_time sent as omitted",
            &t,
            "allowed"
        ),
        "tool_choice allowed-auto-TOOL sent as omitted"
    );
    assert_eq!(
        normalize("description of get_weather_v2 changed", &t, "x"),
        "description of get_weather_vN changed"
    );
    // Statuses stay, other numbers and ids go; quoted text and JSON collapse, clipped too.
    assert_eq!(
        normalize(
            "upstream refused the gateway's request with 400: Unknown name \"const\" at 'tools[0]'",
            &t,
            "x"
        ),
        "upstream refused the gateway's request with 400: Unknown name \"…\" at '…'"
    );
    // Escaped quotes inside a quote (Debug-printed text) do not end it.
    assert_eq!(
        normalize(
            r#"round 1: tool result text for get_time changed: "a" → "\"a\" \\""#,
            &t,
            "x"
        ),
        "round N: tool result text for TOOL changed: \"…\" → \"…\""
    );
    assert_eq!(
        normalize("tool result call_8f2a (get_time) answers no call", &t, "x"),
        "tool result ID (TOOL) answers no call"
    );
    assert_eq!(
        normalize(
            "arguments of store_record changed: {\"a\":{\"b\":1.5… → {\"a\":{\"b\":1}}",
            &t,
            "x"
        ),
        "arguments of TOOL changed: {…} → {…}"
    );
    assert_eq!(
        normalize("usage changed: 114 output tokens answered as 200", &t, "x"),
        "usage changed: N output tokens answered as 200"
    );
    assert_eq!(
        normalize(
            "arguments held back: upstream sent 3 fragments, the gateway 1",
            &t,
            "x"
        ),
        "arguments held back: upstream sent N fragments, the gateway N"
    );
    assert_eq!(
        normalize(
            "schema of get_time lost /$defs, /properties/a/type, /x\nTraceback: …",
            &t,
            "x"
        ),
        "schema of TOOL lost …"
    );
    assert_eq!(
        normalize("calls [get_weather, get_time] answered as []", &t, "x"),
        "calls [TOOL, …] answered as []"
    );
    // Fewer calls and more calls are two causes; how many is not.
    assert_eq!(
        normalize(
            "calls [get_weather, get_time, get_time] answered as [get_time]",
            &t,
            "x"
        ),
        normalize(
            "calls [get_time, get_time] answered as [get_weather]",
            &t,
            "x"
        ),
    );
    assert_ne!(
        normalize("calls [get_time] answered as [get_time, get_time]", &t, "x"),
        normalize("calls [get_time, get_time] answered as [get_time]", &t, "x"),
    );
}

#[test]
fn ids_are_stable_and_tell_side_kind_and_detail_apart() {
    use super::{CauseKind, CauseSide};
    use crate::engine::{FindingKind, Side};
    let key = |side: Side, kind: FindingKind, detail: &str| CauseKey {
        side: CauseSide::Finding(side),
        kind: CauseKind::Finding(kind),
        detail: detail.into(),
    };
    let a = key(
        Side::Upstream,
        FindingKind::Refused,
        "max_tokens: Field required",
    );
    // The id is part of profiles: it must not change between runs or builds.
    assert_eq!(a.id(), a.clone().id());
    assert!(a.id().starts_with("refused-") && a.id().len() == "refused-".len() + 8);
    assert_ne!(
        a.id(),
        key(Side::Downstream, FindingKind::Refused, &a.detail).id()
    );
    assert_ne!(
        a.id(),
        key(Side::Upstream, FindingKind::Request, &a.detail).id()
    );
    assert_ne!(
        a.id(),
        key(Side::Upstream, FindingKind::Refused, "max_tokens: other").id()
    );
    // The id hashes the words, as it always did: ids in profiles stay valid.
    let h = crate::fnv::fnv1a(b"upstream|refused|max_tokens: Field required");
    assert_eq!(a.id(), format!("refused-{:08x}", h & 0xffff_ffff));
}

#[test]
fn made_up_ids_are_abstracted_and_what_they_sit_in_stays() {
    let t = tools();
    let flattened = |id: &str| {
        normalize(
            &format!(
                "round 1: tool result for `get_weather` ({id}): its 1 parts were not sent in the result (its text was), though gemini carries them"
            ),
            &t,
            "c21_result_image",
        )
    };
    let want = "round N: tool result for `TOOL` (ID): its N parts were not sent in the result (its text was), though gemini carries them";
    // LangChain's UUIDs for Gemini's id-less calls, made anew on every run; a UUID's hex
    // written without dashes; Anthropic's, OpenAI's and pydantic-ai's ids, one with a UUID.
    for id in [
        "45920e99-1ce1-48bb-9edf-614ef82d8408",
        "4112D49B-9552-4113-B8B2-C8411F1B8E38",
        "c9c99a13eae74935a074a98cfad1b2c3",
        "toolu_RfbKNcR5rPGzyYIaFZIFRVwc",
        "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
        "call_45920e99-1ce1-48bb-9edf-614ef82d8408",
        "fc_68af1c2d3e4f",
        "rs_68af1c2d3e4f",
        "pyd_ai_c9c99a13eae74935a074a98cfad1b2c3",
    ] {
        assert_eq!(flattened(id), want, "{id}");
    }
    // Ids in the text around them: the words before and after stay.
    assert_eq!(
        normalize(
            "call 0fc5ca04-1aad-4c9d-a301-bab7056cd225, answered by call_ab12-cd34: none",
            &t,
            "x"
        ),
        "call ID, answered by ID: none"
    );
    // Not ids: a hex-looking number (a float's digits), a short hex run, a group that is not
    // a UUID's, a prefix alone, a word after a dash.
    assert_eq!(
        normalize(
            "1.7976931348623157e+308 and deadbeef and 45920e99-1ce1-48bb and call_ and a-zA-Z0-9_",
            &t,
            "x"
        ),
        "N.Ne+N and deadbeef and NeN-NceN-Nbb and call_ and a-zA-ZN-N_"
    );
    // A UUID followed by more of the word is not one.
    assert_ne!(
        normalize("id 45920e99-1ce1-48bb-9edf-614ef82d8408-x", &t, "x"),
        "id ID"
    );
    // Different messages around the same kind of id stay different causes.
    assert_ne!(
        flattened("45920e99-1ce1-48bb-9edf-614ef82d8408"),
        normalize(
            "round 1: tool result for `get_weather` (45920e99-1ce1-48bb-9edf-614ef82d8408): an image (base64) was dropped or altered",
            &t,
            "x"
        )
    );
}
