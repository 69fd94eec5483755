//! The route's settings in a body, and the cases a model server cannot play.

use serde_json::json;

use super::{Settings, scripted, with_settings};

#[test]
fn settings_fill_what_the_body_leaves_out_and_the_cap_only_lowers() {
    let settings = Settings {
        body: json!({"temperature": 0, "seed": 42})
            .as_object()
            .unwrap()
            .clone(),
        cap: Some(("max_tokens", 96)),
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
}

#[test]
fn only_cases_scripted_for_the_simulator_are_left_out() {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let cases = crate::engine::cases_of(&discovery);
    let why = |name: &str| scripted(cases.iter().find(|c| c.name == name).unwrap());
    assert_eq!(why("weather"), None);
    assert_eq!(why("parallel"), None);
    assert_eq!(why("c13_stream_cut"), Some("its stream fails midway"));
    let left: Vec<_> = cases.iter().filter(|c| scripted(c).is_some()).collect();
    assert!(
        left.len() < cases.len() / 2,
        "{} of {}",
        left.len(),
        cases.len()
    );
}
