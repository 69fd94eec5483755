//! Tests of the neutral types.

use super::*;

#[test]
fn choice_slugs_round_trip() {
    let choices = [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Forced("get_weather".into()),
        ToolChoice::Allowed {
            mode: AllowedMode::Required,
            tools: vec!["a".into(), "b_c".into()],
        },
    ];
    for c in choices {
        assert_eq!(
            ToolChoice::from_slug(&c.slug()),
            Some(c.clone()),
            "{}",
            c.slug()
        );
    }
    assert_eq!(ToolChoice::from_slug("forced-"), None);
    assert_eq!(ToolChoice::from_slug("allowed-maybe-a"), None);
    assert_eq!(ToolChoice::from_slug("allowed-auto-a++b"), None);
}
