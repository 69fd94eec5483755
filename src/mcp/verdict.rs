//! What each target does with one tool: the project's own encoder builds the request (strict
//! transform, per-provider sanitizer, name rules), the API's documented rules judge what it
//! would send (`providers::wire_rejection`, OpenAI's description limit), and a keyword count
//! of the schema as listed against the schema as sent tells a lossless rewrite from a lossy one.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::{ChatRequest, Provider, StrictPolicy, Tool};
use crate::pointer::push;
use crate::providers::{encode, wire_rejection};

/// OpenAI's limit on a function's description, in characters (Chat and Responses).
pub const OPENAI_DESCRIPTION_MAX: usize = 1024;

/// Where a tool may be sent: a provider's wire format, strict or not where it has the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    OpenaiChat,
    OpenaiChatStrict,
    OpenaiResponses,
    OpenaiResponsesStrict,
    Anthropic,
    AnthropicStrict,
    Gemini,
    TextProtocol,
}

impl Target {
    pub const ALL: [Target; 8] = [
        Target::OpenaiChat,
        Target::OpenaiChatStrict,
        Target::OpenaiResponses,
        Target::OpenaiResponsesStrict,
        Target::Anthropic,
        Target::AnthropicStrict,
        Target::Gemini,
        Target::TextProtocol,
    ];

    /// The provider's slug, with `-strict` for strict targets (`openai-responses-strict`).
    pub fn slug(self) -> &'static str {
        match self {
            Target::OpenaiChat => "openai-chat",
            Target::OpenaiChatStrict => "openai-chat-strict",
            Target::OpenaiResponses => "openai-responses",
            Target::OpenaiResponsesStrict => "openai-responses-strict",
            Target::Anthropic => "anthropic",
            Target::AnthropicStrict => "anthropic-strict",
            Target::Gemini => "gemini",
            Target::TextProtocol => "text-protocol",
        }
    }

    pub fn provider(self) -> Provider {
        match self {
            Target::OpenaiChat | Target::OpenaiChatStrict => Provider::OpenaiChat,
            Target::OpenaiResponses | Target::OpenaiResponsesStrict => Provider::OpenaiResponses,
            Target::Anthropic | Target::AnthropicStrict => Provider::Anthropic,
            Target::Gemini => Provider::Gemini,
            Target::TextProtocol => Provider::TextProtocol,
        }
    }

    /// Strict targets require strict (`Require`); the others never ask for it (`Off`); Gemini and
    /// the text protocol have no strict flag (`Auto`).
    pub fn policy(self) -> StrictPolicy {
        match self {
            Target::OpenaiChatStrict | Target::OpenaiResponsesStrict | Target::AnthropicStrict => {
                StrictPolicy::Require
            }
            Target::OpenaiChat | Target::OpenaiResponses | Target::Anthropic => StrictPolicy::Off,
            Target::Gemini | Target::TextProtocol => StrictPolicy::Auto,
        }
    }

    /// The target of a slug (`openai-responses-strict`, `gemini`).
    pub fn from_slug(slug: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.slug() == slug)
    }
}

/// What a target does with a tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum ToolVerdict {
    /// Sent exactly as the server listed it.
    AsWritten,
    /// Sent after a rewrite that keeps what the schema accepts and says (e.g. optional
    /// properties made required and nullable, undone on the way back).
    Lossless { changes: Vec<String> },
    /// Sent after a rewrite that loses something: each entry names a keyword and where it was.
    Lossy {
        lost: Vec<String>,
        changes: Vec<String>,
    },
    /// Not sent: the encoder refuses, or the API would answer 400 (its wording where known).
    Refused { reason: String },
}

impl ToolVerdict {
    /// `as-written`, `lossless`, `lossy` or `refused`.
    pub fn word(&self) -> &'static str {
        match self {
            ToolVerdict::AsWritten => "as-written",
            ToolVerdict::Lossless { .. } => "lossless",
            ToolVerdict::Lossy { .. } => "lossy",
            ToolVerdict::Refused { .. } => "refused",
        }
    }
}

/// The verdict of every target for `tool`, in [`Target::ALL`] order.
pub fn judge_all(tool: &Tool) -> Vec<(Target, ToolVerdict)> {
    Target::ALL
        .into_iter()
        .map(|t| (t, judge(tool, t)))
        .collect()
}

/// What `target` does with `tool`.
pub fn judge(tool: &Tool, target: Target) -> ToolVerdict {
    let provider = target.provider();
    if let Some(reason) = description_refusal(tool, provider) {
        return ToolVerdict::Refused { reason };
    }
    let mut req = ChatRequest::new("model")
        .with_user("hi")
        .with_tool(tool.clone());
    req.strict = target.policy();
    let encoded = match encode(provider, &req) {
        Ok(e) => e,
        Err(e) => {
            return ToolVerdict::Refused {
                reason: format!("{}: {}", e.code, e.message),
            };
        }
    };
    let body = &encoded.request.body;
    if let Some(reason) = wire_rejection(provider, body) {
        return ToolVerdict::Refused { reason };
    }
    if provider == Provider::TextProtocol {
        // The schema is written into the injected instructions as it is.
        return ToolVerdict::AsWritten;
    }
    let Some(sent) = sent_tool(provider, body) else {
        return ToolVerdict::Refused {
            reason: "the encoder sent no function declaration for the tool".into(),
        };
    };
    if let (Provider::Gemini, "parameters", Some(schema)) = (provider, sent.field, &sent.schema)
        && let Some(reason) = gemini_empty_object(schema, "parameters", 0)
    {
        return ToolVerdict::Refused { reason };
    }
    compare(tool, &sent)
}

/// Gemini's `parameters` answers 400 for an object schema without properties, at any depth
/// (its wording, with its field path); a second look at what the encoder sent (the sanitizer
/// sends such a tool as `parametersJsonSchema` since issue 31).
fn gemini_empty_object(schema: &Value, at: &str, depth: usize) -> Option<String> {
    let obj = schema.as_object()?;
    if depth > MAX_DEPTH {
        return None;
    }
    let is_object = obj
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("object"));
    let props = obj.get("properties").and_then(Value::as_object);
    if is_object && props.is_none_or(serde_json::Map::is_empty) {
        return Some(format!(
            "* GenerateContentRequest.tools[0].function_declarations[0].{at}.properties: should be non-empty for OBJECT type"
        ));
    }
    let nested = props
        .into_iter()
        .flatten()
        .map(|(k, v)| (format!("{at}.properties[{k}]"), v));
    let items = obj.get("items").map(|v| (format!("{at}.items"), v));
    let any_of = obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, v)| (format!("{at}.any_of[{i}]"), v));
    nested
        .chain(items)
        .chain(any_of)
        .find_map(|(p, v)| gemini_empty_object(v, &p, depth + 1))
}

/// OpenAI refuses a description over 1,024 characters (the API's 400 wording).
fn description_refusal(tool: &Tool, provider: Provider) -> Option<String> {
    let field = match provider {
        Provider::OpenaiChat => "tools[0].function.description",
        Provider::OpenaiResponses => "tools[0].description",
        _ => return None,
    };
    let len = tool.description.as_deref()?.chars().count();
    (len > OPENAI_DESCRIPTION_MAX).then(|| {
        format!(
            "Invalid '{field}': string too long. Expected a string with maximum length {OPENAI_DESCRIPTION_MAX}, but got a string with length {len} instead."
        )
    })
}

/// The first tool as the encoder put it on the wire: name, description, and the schema under
/// the field it went in (`None` when the field is omitted).
#[derive(Debug)]
struct Sent {
    name: Option<String>,
    description: Option<String>,
    field: &'static str,
    schema: Option<Value>,
}

fn sent_tool(provider: Provider, body: &Value) -> Option<Sent> {
    let first = body.get("tools")?.get(0)?;
    let (decl, fields): (&Value, &[&'static str]) = match provider {
        Provider::OpenaiChat => (first.get("function")?, &["parameters"]),
        Provider::OpenaiResponses => (first, &["parameters"]),
        Provider::Anthropic => (first, &["input_schema"]),
        Provider::Gemini => (
            first.get("functionDeclarations")?.get(0)?,
            &["parameters", "parametersJsonSchema"],
        ),
        Provider::TextProtocol => return None,
    };
    let text = |k: &str| decl.get(k).and_then(Value::as_str).map(str::to_string);
    let field = fields
        .iter()
        .copied()
        .find(|f| decl.get(*f).is_some())
        .unwrap_or(fields[0]);
    Some(Sent {
        name: text("name"),
        description: text("description"),
        field,
        schema: decl.get(field).cloned(),
    })
}

fn compare(tool: &Tool, sent: &Sent) -> ToolVerdict {
    let mut changes = Vec::new();
    if sent.name.as_deref() != Some(tool.name.as_str()) {
        changes.push(format!(
            "name sent as {:?}",
            sent.name.as_deref().unwrap_or("")
        ));
    }
    let mut lost = Vec::new();
    if sent.description != tool.description {
        match (&tool.description, &sent.description) {
            (Some(_), None) => lost.push("the description".to_string()),
            _ => changes.push("description rewritten".into()),
        }
    }
    if sent.field != "parameters" && sent.field != "input_schema" {
        changes.push(format!("sent as {}", sent.field));
    }
    match &sent.schema {
        None if is_empty_object(&tool.parameters) => {
            changes.push("parameters omitted (the tool takes no arguments)".into());
        }
        None => lost.push("the whole parameters schema".into()),
        Some(s) if *s == tool.parameters => {}
        Some(s) => diff(&tool.parameters, s, &mut lost, &mut changes),
    }
    match (lost.is_empty(), changes.is_empty()) {
        (true, true) => ToolVerdict::AsWritten,
        (true, false) => ToolVerdict::Lossless { changes },
        (false, _) => ToolVerdict::Lossy { lost, changes },
    }
}

/// `{}` or an object schema without properties and nothing else that constrains.
fn is_empty_object(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| {
        o.iter().all(|(k, v)| match k.as_str() {
            "type" => v == "object",
            "properties" => v.as_object().is_some_and(serde_json::Map::is_empty),
            "$schema" | "title" | "description" | "additionalProperties" => true,
            _ => false,
        })
    })
}

/// Keywords whose disappearance loses a constraint or what the model is told. `const` and
/// `enum` count together (`const: x` → `enum: [x]` keeps the meaning); `oneOf`, `allOf` and
/// `$ref` are not counted: the strict transform rewrites them only when the meaning is kept.
const MEANINGFUL: &[&str] = &[
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "title",
    "description",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "patternProperties",
    "not",
    "if",
    "dependentRequired",
    "dependentSchemas",
    "contains",
    "prefixItems",
    "enum",
    "open additionalProperties",
];

/// Counts keywords of `listed` and `sent`: meaningful ones that decrease are losses (with the
/// first place they were), every other count that moves is a change.
fn diff(listed: &Value, sent: &Value, lost: &mut Vec<String>, changes: &mut Vec<String>) {
    let before = census(listed);
    let after = census(sent);
    let names: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for k in names {
        let (n0, at) = before.get(k).map_or((0, ""), |(n, p)| (*n, p.as_str()));
        let n1 = after.get(k).map_or(0, |(n, _)| *n);
        if n1 < n0 && MEANINGFUL.contains(&k.as_str()) {
            let gone = if n1 == 0 {
                "dropped".to_string()
            } else {
                format!("{} of {n0} dropped", n0 - n1)
            };
            lost.push(format!("{k} ({gone}; first at {})", shown(at)));
        } else if n1 != n0 {
            changes.push(change(k, n1 > n0, n0.abs_diff(n1)));
        }
    }
    if changes.is_empty() && lost.is_empty() {
        changes.push("keywords reordered or values rewritten".into());
    }
}

/// A keyword count that moved, said the way a reader knows the rewrite: `additionalProperties:
/// false added ×2`, `$schema removed ×1`.
fn change(k: &str, added: bool, n: usize) -> String {
    let what = match (k, added) {
        ("additionalProperties", true) => "additionalProperties: false added (objects closed)",
        ("required", true) => "required lists added (every property listed)",
        ("type list", true) => "type lists with null added (optional made nullable)",
        ("type", false) => "single types replaced",
        ("anyOf", true) => "anyOf added (a null branch, or oneOf made anyOf)",
        ("nullable", true) => "nullable: true added (Gemini's null type)",
        ("type list", false) => "type lists replaced",
        (other, true) => return format!("{other} added ×{n}"),
        (other, false) => return format!("{other} removed ×{n}"),
    };
    format!("{what} ×{n}")
}

fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

/// Keyword → (occurrences, pointer of the first) over every subschema of `schema`.
fn census(schema: &Value) -> BTreeMap<String, (usize, String)> {
    let mut out = BTreeMap::new();
    walk(schema, "", &mut out, 0);
    out
}

/// Deeper than this a schema is not walked (what a server sends is untrusted).
const MAX_DEPTH: usize = 64;

fn walk(v: &Value, at: &str, out: &mut BTreeMap<String, (usize, String)>, depth: usize) {
    let Some(obj) = v.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    for (k, x) in obj {
        let name = match k.as_str() {
            "const" => "enum",
            "additionalProperties" if x != &Value::Bool(false) => "open additionalProperties",
            "type" if x.is_array() => "type list",
            other => other,
        };
        let e = out.entry(name.to_string()).or_insert((0, at.to_string()));
        e.0 += 1;
        let here = push(at, k);
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Some(m) = x.as_object() {
                    for (name, sub) in m {
                        walk(sub, &push(&here, name), out, depth + 1);
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(a) = x.as_array() {
                    for (i, sub) in a.iter().enumerate() {
                        walk(sub, &push(&here, &i.to_string()), out, depth + 1);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "propertyNames"
            | "contains"
            | "if"
            | "then"
            | "else" => walk(x, &here, out, depth + 1),
            _ => {}
        }
    }
}
