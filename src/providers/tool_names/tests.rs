use serde_json::json;

use super::{check_gemini, check_plain};
use crate::model::Tool;

fn tool(name: &str) -> Tool {
    serde_json::from_value(json!({"name": name, "parameters": {"type": "object"}})).unwrap()
}

#[test]
fn plain_rule_accepts_64_and_refuses_dots_and_65() {
    let long = "a".repeat(64);
    assert!(check_plain("OpenAI", &[tool(&long), tool("get-x_1")]).is_ok());
    let e = check_plain("Anthropic", &[tool("get_x"), tool("weather.lookup")]).unwrap_err();
    assert_eq!(e.code, "TOOL_NAME");
    assert!(e.message.contains("tool `weather.lookup`"), "{}", e.message);
    assert!(e.message.contains("Anthropic"), "{}", e.message);
    assert!(check_plain("OpenAI", &[tool(&"a".repeat(65))]).is_err());
}

#[test]
fn gemini_rule_allows_dots_and_colons_not_a_leading_digit() {
    assert!(check_gemini(&[tool("weather.lookup"), tool("ns:get_x"), tool("_x")]).is_ok());
    assert!(check_gemini(&[tool(&"a".repeat(128))]).is_ok());
    for bad in ["1tool", "-x", "a b", &"a".repeat(129)] {
        let e = check_gemini(&[tool(bad)]).unwrap_err();
        assert_eq!(e.code, "TOOL_NAME", "{bad}");
        assert!(e.message.contains("Gemini"), "{}", e.message);
    }
}
