//! Reading a request JSON (Responses or Chat Completions shape): its function tools and its
//! effective tool choice. Shared by injection and by the parser's configuration, so both read
//! the request the same way.

use serde_json::Value;

/// A function tool as declared in `tools[]`, in either shape.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionTool<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// `None` when the tool declares no `parameters`.
    pub parameters: Option<&'a Value>,
    pub strict: bool,
}

/// The effective tool choice, once defaults are applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Also what an omitted, unknown or malformed `tool_choice` means when function tools exist.
    Auto,
    None,
    Required,
    Forced(String),
    /// `allowed_tools`: only these function tools may be called; `required`: one must be.
    Allowed {
        required: bool,
        tools: Vec<String>,
    },
}

impl Choice {
    /// The names the model may call, or `None` when every declared tool may be called.
    pub fn restricts_to(&self) -> Option<Vec<String>> {
        match self {
            Choice::Forced(name) => Some(vec![name.clone()]),
            Choice::Allowed { tools, .. } => Some(tools.clone()),
            _ => None,
        }
    }
}

/// Every `tools[]` entry with `type: "function"` and a non-empty name, in declaration order.
/// Responses shape: `{"type":"function","name",…}`; Chat shape: `{"type":"function","function":{"name",…}}`.
pub fn function_tools(request: &Value) -> Vec<FunctionTool<'_>> {
    let Some(tools) = request.get("tools").and_then(Value::as_array) else {
        return Vec::new();
    };
    tools
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
        .filter_map(|t| {
            // Chat shape nests the definition; Responses shape keeps it at the top level.
            let def = t.get("function").filter(|f| f.is_object()).unwrap_or(t);
            let name = def
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())?;
            Some(FunctionTool {
                name,
                description: def.get("description").and_then(Value::as_str),
                parameters: def.get("parameters").filter(|p| !p.is_null()),
                strict: def.get("strict").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

/// The effective `tool_choice`. Strings: `auto`, `none`, `required`. Objects: a function
/// selector in either shape, or `allowed_tools` in either shape (Responses:
/// `{"type":"allowed_tools","mode","tools"}`; Chat: `{"type":"allowed_tools","allowed_tools":{"mode","tools"}}`).
pub fn tool_choice(request: &Value) -> Choice {
    let Some(choice) = request.get("tool_choice") else {
        return Choice::Auto;
    };
    if let Some(s) = choice.as_str() {
        return match s {
            "none" => Choice::None,
            "required" => Choice::Required,
            _ => Choice::Auto,
        };
    }
    match choice.get("type").and_then(Value::as_str) {
        Some("function") => {
            selector_name(choice).map_or(Choice::Auto, |n| Choice::Forced(n.to_string()))
        }
        Some("allowed_tools") => {
            let spec = choice
                .get("allowed_tools")
                .filter(|a| a.is_object())
                .unwrap_or(choice);
            let required = spec.get("mode").and_then(Value::as_str) == Some("required");
            let tools = spec
                .get("tools")
                .and_then(Value::as_array)
                .map(|ts| {
                    ts.iter()
                        .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
                        .filter_map(selector_name)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            Choice::Allowed { required, tools }
        }
        _ => Choice::Auto,
    }
}

/// `name` of a function selector: `{"name"}` (Responses) or `{"function":{"name"}}` (Chat).
fn selector_name(sel: &Value) -> Option<&str> {
    sel.get("name")
        .or_else(|| sel.pointer("/function/name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
}

/// Text of a message `content`: a string, or the `text` of each part joined with `\n`.
pub(crate) fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}
