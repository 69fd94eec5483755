//! A route's settings in a body.

use serde_json::json;

use super::{Settings, with_settings};

#[test]
fn settings_fill_what_the_body_leaves_out_and_the_cap_only_lowers() {
    let settings = Settings {
        body: json!({"temperature": 0, "seed": 42})
            .as_object()
            .unwrap()
            .clone(),
        cap: Some((&["max_tokens", "max_completion_tokens"], 96)),
    };
    let mut body = json!({"temperature": 0.5, "max_tokens": 1024});
    with_settings(&mut body, &settings);
    assert_eq!(
        body,
        json!({"temperature": 0.5, "seed": 42, "max_tokens": 96})
    );
    let mut body = json!({"max_tokens": 20});
    with_settings(&mut body, &settings);
    assert_eq!(body["max_tokens"], 20, "a lower limit the case set stays");
    let mut body = json!({});
    with_settings(&mut body, &settings);
    assert_eq!(body["max_tokens"], 96, "set where the request had none");
    let mut body = json!({"max_completion_tokens": 4096});
    with_settings(&mut body, &settings);
    assert_eq!(
        body,
        json!({"temperature": 0, "seed": 42, "max_completion_tokens": 96}),
        "Chat's other limit"
    );
    // Messages with thinking: max_tokens must stay above budget_tokens, or the API refuses.
    let thinking = Settings {
        body: serde_json::Map::new(),
        cap: Some((&["max_tokens"], 96)),
    };
    let mut body =
        json!({"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 1024}});
    with_settings(&mut body, &thinking);
    assert_eq!(body["max_tokens"], 1025);
}
