//! Tests of the `[simulate]` scenario table.

use super::*;

#[test]
fn header_value_is_ascii_and_round_trips() {
    let s = Scenario {
        final_text: Some("18 °C, 雨 🌧".into()),
        ..Scenario::default()
    };
    let h = s.header_value();
    assert!(h.is_ascii(), "{h}");
    assert_eq!(serde_json::from_str::<Scenario>(&h).unwrap(), s);
}
