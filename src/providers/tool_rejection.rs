//! The provider's own 400 for a request body's tools, as text: what the simulator answers for
//! invalid-by-design requests. Shapes follow recorded errors (providers.md §1.4, §3.4, §4.4);
//! reasons without a recorded wording use our message in the same frame (marked below). The
//! rules themselves are the schema checker's; only the wording is the simulator's.

use serde_json::Value;

use crate::model::Provider;
use crate::pointer::tokens;
use crate::schema::{self, Violation, anthropic_budget};
use crate::schema::{MAX_OPTIONAL_PARAMS, MAX_STRICT_TOOLS, MAX_UNION_PARAMS};

/// What the real provider would answer with a 400 for this request body as sent (wire JSON):
/// the error message, or `None` when it would accept the tools.
pub(crate) fn wire_rejection(provider: Provider, body: &Value) -> Option<String> {
    let tools = body.get("tools")?.as_array()?;
    match provider {
        Provider::OpenaiChat | Provider::TextProtocol => tools.iter().find_map(|t| {
            let f = t.get("function")?;
            openai_tool(f.get("name"), f.get("parameters"), f.get("strict"))
        }),
        Provider::OpenaiResponses => tools
            .iter()
            .find_map(|t| openai_tool(t.get("name"), t.get("parameters"), t.get("strict"))),
        Provider::Anthropic => anthropic_tools(tools),
        Provider::Gemini => gemini_tools(tools),
    }
}

/// Every function's parameters must be an object schema, strict or not (the recorded
/// `type: "object"` message). The other rules only under `strict: true`: Chat is lenient
/// otherwise, and Responses falls back to non-strict when it cannot normalize an omitted `strict`.
fn openai_tool(
    name: Option<&Value>,
    params: Option<&Value>,
    strict: Option<&Value>,
) -> Option<String> {
    let name = name.and_then(Value::as_str).unwrap_or_default();
    let params = params.filter(|p| !p.is_null())?;
    if strict != Some(&Value::Bool(true)) {
        let root = Violation {
            pointer: String::new(),
            rule: "root-object",
            message: String::new(),
        };
        let is_object = match params.get("type") {
            None => params.is_object(),
            Some(t) => t.as_str() == Some("object"),
        };
        return (!is_object).then(|| openai_message(name, &root, params));
    }
    let v = schema::check(Provider::OpenaiChat, params)
        .into_iter()
        .next()?;
    Some(openai_message(name, &v, params))
}

fn openai_message(name: &str, v: &Violation, params: &Value) -> String {
    let head = format!("Invalid schema for function '{name}':");
    let ctx = python_tuple(&v.pointer);
    let quoted = |m: &str| m.split('\'').nth(1).unwrap_or_default().to_string();
    match v.rule {
        "root-object" => {
            let got = match params.get("type") {
                Some(Value::String(t)) => format!("\"{t}\""),
                Some(other) => other.to_string(),
                None => "null".into(),
            };
            format!("{head} schema must be a JSON Schema of 'type: \"object\"', got 'type: {got}'.")
        }
        "additional-properties-false" => format!(
            "{head} In context={ctx}, 'additionalProperties' is required to be supplied and to be false."
        ),
        "required-all" => {
            let missing = v
                .message
                .rsplit("missing '")
                .next()
                .unwrap_or_default()
                .trim_end_matches('\'');
            format!(
                "{head} In context={ctx}, 'required' is required to be supplied and to be an array including \
                 every key in properties. Missing '{missing}'."
            )
        }
        "unsupported-keyword" => {
            let kw = v.message.split_whitespace().next().unwrap_or_default();
            format!("{head} In context={ctx}, '{kw}' is not permitted.")
        }
        // Not recorded: our wording in the recorded frame.
        "unsupported-format" => format!(
            "{head} In context={ctx}, '{}' is not a valid format.",
            quoted(&v.message)
        ),
        "missing-type" => format!("{head} In context={ctx}, schema must have a 'type' key."),
        _ => format!("{head} In context={ctx}, {}.", v.message),
    }
}

/// `('properties', 'x', 'anyOf', 0)`: the context tuple of the OpenAI messages (Python repr).
fn python_tuple(ptr: &str) -> String {
    let toks = tokens(ptr);
    let parts: Vec<String> = toks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let index_slot = i > 0
                && matches!(
                    toks[i - 1].as_str(),
                    "anyOf" | "allOf" | "oneOf" | "prefixItems"
                );
            if index_slot && t.parse::<usize>().is_ok() {
                t.clone()
            } else if t.contains('\'') && !t.contains('"') {
                format!("\"{t}\"")
            } else {
                format!("'{}'", t.replace('\'', "\\'"))
            }
        })
        .collect();
    match parts.len() {
        1 => format!("({},)", parts[0]),
        _ => format!("({})", parts.join(", ")),
    }
}

fn anthropic_tools(tools: &[Value]) -> Option<String> {
    const TOO_COMPLEX: &str = "Schema is too complex for compilation.";
    let (mut strict_tools, mut optional, mut unions) = (0usize, 0usize, 0usize);
    for (i, t) in tools.iter().enumerate() {
        let Some(schema) = t.get("input_schema") else {
            continue;
        };
        let Some(obj) = schema.as_object() else {
            return Some(format!(
                "tools.{i}.custom.input_schema: Input should be a valid dictionary"
            ));
        };
        if ["oneOf", "allOf", "anyOf"]
            .iter()
            .any(|k| obj.contains_key(*k))
        {
            return Some(format!(
                "tools.{i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
            ));
        }
        if t.get("strict") != Some(&Value::Bool(true)) {
            continue;
        }
        strict_tools += 1;
        let budget = anthropic_budget(schema);
        optional += budget.optional;
        unions += budget.unions;
        let violations = schema::check(Provider::Anthropic, schema);
        // An absent `additionalProperties` is ambiguous in the docs (the SDK always adds
        // false): we add it before sending, but do not claim the API rejects its absence.
        let absent = |v: &Violation| {
            v.rule == "additional-properties-false"
                && schema
                    .pointer(&v.pointer)
                    .is_some_and(|n| n.get("additionalProperties").is_none())
        };
        if let Some(v) = violations
            .iter()
            .find(|v| !v.rule.starts_with("max-") && !absent(v))
        {
            if v.rule == "recursive-ref" {
                return Some(TOO_COMPLEX.into());
            }
            // Not recorded: our wording, with the field path in Anthropic's dotted style.
            let path: String = tokens(&v.pointer).iter().map(|t| format!(".{t}")).collect();
            return Some(format!(
                "tools.{i}.custom.input_schema{path}: {}",
                v.message
            ));
        }
    }
    let over = strict_tools > MAX_STRICT_TOOLS
        || optional > MAX_OPTIONAL_PARAMS
        || unions > MAX_UNION_PARAMS;
    over.then(|| TOO_COMPLEX.to_string())
}

fn gemini_tools(tools: &[Value]) -> Option<String> {
    for (i, t) in tools.iter().enumerate() {
        let Some(decls) = t.get("functionDeclarations").and_then(Value::as_array) else {
            continue;
        };
        for (j, d) in decls.iter().enumerate() {
            let at = format!("tools[{i}].function_declarations[{j}]");
            if d.get("parameters").is_some() && d.get("parametersJsonSchema").is_some() {
                // Not recorded: our wording (the fields are documented as mutually exclusive).
                return Some(format!(
                    "{at}: parameters and parameters_json_schema are mutually exclusive"
                ));
            }
            if let Some(s) = d.get("parametersJsonSchema")
                && s.get("type").is_some_and(|t| t.as_str() != Some("object"))
            {
                // Not recorded: our wording in Google's field frame; the field is documented
                // as "must describe an object where the properties are the parameters".
                return Some(format!(
                    "* GenerateContentRequest.{at}.parameters_json_schema: the schema must describe an object (type \"object\"), got type {}\n",
                    s["type"]
                ));
            }
            let Some(p) = d.get("parameters") else {
                continue;
            };
            if let Some(v) = schema::check(Provider::Gemini, p).into_iter().next() {
                return Some(gemini_message(&at, &v, p));
            }
        }
    }
    None
}

fn gemini_message(at: &str, v: &Violation, params: &Value) -> String {
    let path = format!("{at}.parameters{}", google_path(params, &v.pointer));
    match v.rule {
        "unknown-field" => {
            let name = v.message.split('"').nth(1).unwrap_or_default();
            format!(
                "Invalid JSON payload received. Unknown name \"{name}\" at '{path}': Cannot find field."
            )
        }
        "enum-not-string" => {
            let value = params
                .pointer(&v.pointer)
                .map(Value::to_string)
                .unwrap_or_default();
            format!("Invalid value at '{path}' (TYPE_STRING), {value}")
        }
        "type-array" => format!(
            "Invalid JSON payload received. Unknown name \"type\" at '{}': Proto field is not repeating, cannot start list.",
            path.trim_end_matches(".type")
        ),
        "empty-properties" => {
            format!("* GenerateContentRequest.{path}: should be non-empty for OBJECT type")
        }
        "root-object" => {
            "functionDeclaration parameters schema should be of type OBJECT.".to_string()
        }
        _ => format!("* GenerateContentRequest.{path}: {}", v.message),
    }
}

/// `/properties/b/items` → `.properties[1].value.items`: Google paths index map entries.
fn google_path(schema: &Value, ptr: &str) -> String {
    let mut out = String::new();
    let mut node = Some(schema);
    let toks = tokens(ptr);
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].as_str();
        let next = toks.get(i + 1);
        match (t, next) {
            ("properties", Some(name)) => {
                let map = node
                    .and_then(|n| n.get("properties"))
                    .and_then(Value::as_object);
                let idx = map
                    .and_then(|m| m.keys().position(|k| k == name))
                    .unwrap_or(0);
                out.push_str(&format!(".properties[{idx}].value"));
                node = map.and_then(|m| m.get(name.as_str()));
                i += 2;
            }
            ("anyOf", Some(n)) | ("enum", Some(n)) => {
                let field = if t == "anyOf" { "any_of" } else { "enum" };
                out.push_str(&format!(".{field}[{n}]"));
                node = node
                    .and_then(|x| x.get(t))
                    .and_then(|a| a.get(n.parse::<usize>().ok()?));
                i += 2;
            }
            _ => {
                out.push('.');
                out.push_str(t);
                node = node.and_then(|x| x.get(t));
                i += 1;
            }
        }
    }
    out
}
