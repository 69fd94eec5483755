//! What the parser needs from the request: callable tool names, strict schemas (compiled once),
//! and whether parsing is on at all (`tool_choice: "none"` turns it off).

use std::fmt;

use jsonschema::Validator;
use serde_json::Value;

use super::suggest::Names;
use crate::inject::request::{Choice, function_tools, tool_choice};

#[derive(Clone)]
pub struct ParserConfig {
    /// `tool_choice: "none"`: tags stay text (with a `ParsingDisabled` diagnostic).
    pub disabled: bool,
    /// Every function tool the request declares.
    pub(super) declared: Vec<String>,
    /// The names a call may use: the declared ones, narrowed by a forced or `allowed_tools` choice.
    pub(super) allowed: Vec<String>,
    /// `allowed`, ready for suggestions.
    pub(super) names: Names,
    /// Strict tools and their compiled schema (or why it did not compile).
    pub(super) strict: Vec<(String, Result<Validator, String>)>,
}

impl fmt::Debug for ParserConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let strict: Vec<&str> = self.strict.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ParserConfig")
            .field("disabled", &self.disabled)
            .field("declared", &self.declared)
            .field("allowed", &self.allowed)
            .field("strict", &strict)
            .finish()
    }
}

impl ParserConfig {
    /// From a Responses- or Chat-shaped request JSON (the same reading as injection).
    pub fn from_request(request: &Value) -> ParserConfig {
        let tools = function_tools(request);
        let choice = tool_choice(request);
        let mut declared: Vec<String> = Vec::new();
        for t in &tools {
            if !declared.iter().any(|d| d == t.name) {
                declared.push(t.name.to_string());
            }
        }
        let allowed = match choice.restricts_to() {
            Some(only) => declared
                .iter()
                .filter(|d| only.contains(d))
                .cloned()
                .collect(),
            None => declared.clone(),
        };
        let empty = crate::model::empty_parameters();
        let strict = tools
            .iter()
            .filter(|t| t.strict)
            .map(|t| {
                let schema = t.parameters.unwrap_or(&empty);
                let compiled = crate::schema::validator(schema).map_err(|e| e.to_string());
                (t.name.to_string(), compiled)
            })
            .collect();
        ParserConfig {
            disabled: choice == Choice::None,
            declared,
            names: Names::new(&allowed),
            allowed,
            strict,
        }
    }

    pub(super) fn validator(&self, name: &str) -> Option<&Result<Validator, String>> {
        self.strict.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The names a call may use.
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }
}
