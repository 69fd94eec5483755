//! What a request decoder returns (the neutral request plus the wire facts it cannot carry), its
//! readable JSON form, and the field reader the four request decoders share.
//!
//! Every decoded request has `strict: StrictPolicy::Off`: the wire carries each tool's own
//! `strict` flag (kept in [`Tool::strict`](crate::model::Tool)), never a policy, and `Off`
//! re-encodes exactly those flags. Tool schemas are the schemas as sent (after the sender's
//! strict transform or sanitizer, which cannot be undone without the original); only what is
//! reversible is undone (a Gemini tool without parameters gets the empty object schema back).

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::model::{
    ChatRequest, DecodeError, EncodeError, Provider, Tool, ToolChoice, empty_parameters,
};
use crate::pointer::push;
use crate::text::json_kind;

/// A decoded request: the neutral request and, beside it, what the neutral model cannot carry.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedRequest {
    pub request: ChatRequest,
    /// Wire facts in body order: where a carried value sat, fields the neutral model has no
    /// place for, fields this decoder does not know. Never silently dropped.
    pub extras: Vec<Extra>,
}

/// One wire fact beside the neutral request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Extra {
    /// Where it is: a JSON pointer into the body (`/tools/0/function/strict`), `?NAME` for a
    /// query parameter, `path` for the URL path.
    pub pointer: String,
    pub kind: ExtraKind,
    /// The value as sent (a credential is never copied: `key` query parameters are skipped).
    pub value: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtraKind {
    /// The exact wire form of something the neutral request carries normalized: a tool's
    /// `strict` flag and its placement, Gemini's `parametersJsonSchema` key, `alt=sse`, the
    /// spelling of a tool choice that has several (`{"type":"auto","disable_parallel_tool_use"}`).
    Wire,
    /// A field of the format the neutral model has no place for (sampling, stream options,
    /// cache control, images, reasoning effort, item ids), kept verbatim.
    NotCarried,
    /// A field this decoder does not know in this place: a vendor extension, or a known field
    /// misplaced (`strict` beside `function` instead of inside it).
    Unknown,
}

impl DecodedRequest {
    /// The extras of one kind.
    pub fn extras_of(&self, kind: ExtraKind) -> impl Iterator<Item = &Extra> {
        self.extras.iter().filter(move |e| e.kind == kind)
    }

    /// The tools the neutral request cannot carry, kept as extras: a whole tool of another type
    /// (`/tools/N`: OpenAI `custom` freeform and grammar tools, hosted tools other than web
    /// search and tool search, Anthropic server tools other than those two) and Gemini's tool kinds other than functions and search
    /// (`/tools/N/codeExecution`, …), and Anthropic's mid-conversation tool changes
    /// (`tool_addition`, `tool_removal` blocks of a system message). Each is `(pointer, type)`.
    /// A gateway that re-encodes the request must refuse these, never drop them or send them as
    /// functions.
    pub fn uncarried_tools(&self) -> Vec<(String, String)> {
        self.extras_of(ExtraKind::NotCarried)
            .filter_map(|e| {
                // Anthropic's mid-conversation tool changes, in a system message's blocks.
                if let Some(ty @ ("tool_addition" | "tool_removal")) =
                    e.value.get("type").and_then(Value::as_str)
                    && e.pointer.starts_with("/messages/")
                {
                    return Some((e.pointer.clone(), ty.to_string()));
                }
                let rest = e.pointer.strip_prefix("/tools/")?;
                let (index, kind) = rest.split_once('/').unwrap_or((rest, ""));
                index.parse::<usize>().ok()?;
                let ty = if kind.is_empty() {
                    e.value.get("type").and_then(Value::as_str)?.to_string()
                } else if GEMINI_TOOL_KINDS.contains(&kind) {
                    kind.to_string()
                } else {
                    return None;
                };
                Some((e.pointer.clone(), ty))
            })
            .collect()
    }

    /// The readable JSON form `tooltape parse-request` prints: every key always present, in a
    /// fixed order (`model`, `stream`, `max_tokens`, `thinking`, `strict`, `tools`, `hosted`,
    /// `tool_choice`, `parallel_tool_calls`, `messages`, `extras`).
    pub fn to_json(&self) -> Value {
        let r = &self.request;
        let mut o = Map::new();
        o.insert("model".into(), json!(r.model));
        o.insert("stream".into(), json!(r.stream));
        o.insert("max_tokens".into(), json!(r.max_tokens));
        o.insert("thinking".into(), json!(r.thinking));
        o.insert("strict".into(), json!(r.strict));
        o.insert("tools".into(), json!(r.tools));
        o.insert("hosted".into(), json!(r.hosted));
        o.insert(
            "tool_choice".into(),
            r.tool_choice.as_ref().map_or(Value::Null, choice_json),
        );
        o.insert("parallel_tool_calls".into(), json!(r.parallel_tool_calls));
        o.insert("messages".into(), json!(r.messages));
        // What the provider's server keeps between exchanges, named again (the code-execution
        // container, the context-management setting), when the request names any.
        let server = &r.server;
        if server.container.is_some() || server.context_management.is_some() {
            o.insert(
                "server".into(),
                json!({"container": server.container, "context_management": server.context_management}),
            );
        }
        o.insert("extras".into(), json!(self.extras));
        Value::Object(o)
    }
}

/// Gemini's tool kinds beside `functionDeclarations` and search, in both spellings: kept as
/// extras by its decoder, never carried.
pub(crate) const GEMINI_TOOL_KINDS: [&str; 10] = [
    "codeExecution",
    "code_execution",
    "urlContext",
    "url_context",
    "fileSearch",
    "file_search",
    "googleMaps",
    "google_maps",
    "computerUse",
    "computer_use",
];

/// A tool choice as JSON: `"auto"`, `"none"`, `"required"` (a plain choice's slug, as cases
/// write it), `{"type":"forced","name":…}`,
/// `{"type":"allowed","mode":"auto"|"required","tools":[…]}`.
fn choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Forced(name) => json!({"type": "forced", "name": name}),
        ToolChoice::Allowed { mode, tools } => {
            json!({"type": "allowed", "mode": mode, "tools": tools})
        }
        ToolChoice::Auto | ToolChoice::None | ToolChoice::Required => json!(choice.slug()),
    }
}

/// The tools as `provider`'s wire carries them for `req`, in neutral form: what a decoded
/// request's tools equal when the project's encoder built it. Each schema is the one the schema
/// layer prepares under the request's strict policy (OpenAI strict transform, Anthropic strict
/// subset, Gemini sanitizer; a tool without parameters has the empty object schema), `strict` is
/// the flag as sent, `eager_input_streaming` only on Anthropic, `defer_loading` on Anthropic and
/// Responses, `namespace` on Responses, and Anthropic keeps only an allowed subset's tools (it has no allowed list).
/// The text protocol sends no tools on the wire: its list is empty.
pub fn sent_tools(provider: Provider, req: &ChatRequest) -> Result<Vec<Tool>, EncodeError> {
    if provider == Provider::TextProtocol {
        return Ok(Vec::new());
    }
    let tools: Vec<Tool> = match (&req.tool_choice, provider) {
        (Some(ToolChoice::Allowed { tools, .. }), Provider::Anthropic) => req
            .tools
            .iter()
            .filter(|t| tools.contains(&t.name))
            .cloned()
            .collect(),
        _ => req.tools.clone(),
    };
    let (prepared, _) = crate::schema::prepare_tools(provider, &tools, req.strict)?;
    Ok(prepared
        .into_iter()
        .map(|p| Tool {
            // Only Anthropic's and Responses' wires say who may call a tool (class 30).
            allowed_callers: (matches!(provider, Provider::Anthropic | Provider::OpenaiResponses))
                .then(|| req.tool(&p.name).map(|t| t.allowed_callers.clone()))
                .flatten()
                .unwrap_or_default(),
            // Only Anthropic's wire has the switch.
            eager_input_streaming: provider == Provider::Anthropic
                && req.tool(&p.name).is_some_and(|t| t.eager_input_streaming),
            // Only Anthropic's and Responses' wires defer a tool (the others refuse one).
            defer_loading: matches!(provider, Provider::Anthropic | Provider::OpenaiResponses)
                && req.tool(&p.name).is_some_and(|t| t.defer_loading),
            namespace: (provider == Provider::OpenaiResponses)
                .then(|| req.tool(&p.name).and_then(|t| t.namespace.clone()))
                .flatten(),
            // No provider's wire carries a result schema.
            output_schema: None,
            name: p.name,
            description: p.description,
            parameters: if p.parameters.is_null() {
                empty_parameters()
            } else {
                p.parameters
            },
            strict: p.strict,
        })
        .collect())
}

/// A neutral request with nothing set but the model and stream flag (decoders fill the rest).
pub(crate) fn empty_request(model: String, stream: bool) -> ChatRequest {
    ChatRequest::empty(model, stream)
}

/// The pointer as shown in messages: `(body)` for the body itself.
fn shown(ptr: &str) -> &str {
    if ptr.is_empty() { "(body)" } else { ptr }
}

/// `POINTER: expected WHAT, found KIND`.
pub(crate) fn type_error(ptr: &str, expected: &str, found: &Value) -> DecodeError {
    DecodeError::new(format!(
        "{}: expected {expected}, found {}",
        shown(ptr),
        json_kind(found)
    ))
}

/// `POINTER: WHAT`.
pub(crate) fn field_error(ptr: &str, what: impl std::fmt::Display) -> DecodeError {
    DecodeError::new(format!("{}: {what}", shown(ptr)))
}

/// Reads one JSON object field by field, remembering which keys were read, so that whatever is
/// left becomes an [`ExtraKind::Unknown`] extra rather than disappearing. A `null` value reads
/// as absent (SDKs send `"tool_choice": null`).
pub(crate) struct Fields<'a> {
    map: &'a Map<String, Value>,
    ptr: String,
    /// The keys read, in the order read: objects have a few keys, so a list beats a hashed set
    /// (the proxy decodes every request through here).
    used: Vec<&'a str>,
}

impl<'a> Fields<'a> {
    /// The object at `ptr`, or an error saying it should be `what`.
    pub(crate) fn of(v: &'a Value, ptr: &str, what: &str) -> Result<Fields<'a>, DecodeError> {
        match v {
            Value::Object(map) => Ok(Fields {
                map,
                ptr: ptr.to_string(),
                used: Vec::new(),
            }),
            other => Err(type_error(ptr, &format!("an object ({what})"), other)),
        }
    }

    /// The pointer of a child key.
    pub(crate) fn at(&self, key: &str) -> String {
        push(&self.ptr, key)
    }

    /// Marks `k` read; false when it already was.
    fn mark(&mut self, k: &'a str) -> bool {
        let new = !self.used.contains(&k);
        if new {
            self.used.push(k);
        }
        new
    }

    /// The first of `keys` present and not null, with its key; every one present marked read.
    fn find(&mut self, keys: &[&str]) -> Option<(&'a str, &'a Value)> {
        let mut found = None;
        for key in keys {
            if let Some((k, v)) = self.map.get_key_value(*key) {
                self.mark(k.as_str());
                if found.is_none() && !v.is_null() {
                    found = Some((k.as_str(), v));
                }
            }
        }
        found
    }

    /// The first of `keys` present (aliases: Gemini's camelCase and snake_case), marked read.
    pub(crate) fn get_any(&mut self, keys: &[&str]) -> Option<(String, &'a Value)> {
        self.find(keys).map(|(k, v)| (self.at(k), v))
    }

    pub(crate) fn get(&mut self, key: &str) -> Option<&'a Value> {
        self.find(&[key]).map(|(_, v)| v)
    }

    pub(crate) fn str(&mut self, key: &str) -> Result<Option<&'a str>, DecodeError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(type_error(&self.at(key), "a string", other)),
        }
    }

    /// A required string: missing is an error saying what the field is for.
    pub(crate) fn req_str(&mut self, key: &str, why: &str) -> Result<&'a str, DecodeError> {
        self.str(key)?
            .ok_or_else(|| field_error(&self.at(key), format!("missing ({why})")))
    }

    pub(crate) fn bool(&mut self, key: &str) -> Result<Option<bool>, DecodeError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(type_error(&self.at(key), "true or false", other)),
        }
    }

    /// A tool's JSON Schema under `key`: an object; absent is `{"type":"object"}` unless
    /// `required` says why the format demands it.
    pub(crate) fn schema(
        &mut self,
        key: &str,
        required: Option<&str>,
    ) -> Result<Value, DecodeError> {
        match (self.get(key), required) {
            (Some(p @ Value::Object(_)), _) => Ok(p.clone()),
            (Some(other), _) => Err(type_error(&self.at(key), "a JSON Schema object", other)),
            (None, None) => Ok(crate::model::empty_parameters()),
            (None, Some(why)) => Err(field_error(&self.at(key), format!("missing ({why})"))),
        }
    }

    /// A tool's `strict` switch, kept as a wire extra when present (how strict looked on the wire).
    pub(crate) fn strict(&mut self, extras: &mut Vec<Extra>) -> Result<Option<bool>, DecodeError> {
        let strict = self.bool("strict")?;
        if let Some(s) = strict {
            wire(extras, self.at("strict"), Value::Bool(s));
        }
        Ok(strict)
    }

    /// A token count (`u32`), from any of `keys`.
    pub(crate) fn count_any(&mut self, keys: &[&str]) -> Result<Option<u32>, DecodeError> {
        match self.get_any(keys) {
            None => Ok(None),
            Some((ptr, v)) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| type_error(&ptr, "a whole number of tokens", v)),
        }
    }

    pub(crate) fn array(&mut self, key: &str) -> Result<Option<&'a Vec<Value>>, DecodeError> {
        self.array_any(&[key]).map(|o| o.map(|(_, a)| a))
    }

    /// A required array: missing is an error saying what the field is for.
    pub(crate) fn req_array(
        &mut self,
        key: &str,
        why: &str,
    ) -> Result<&'a Vec<Value>, DecodeError> {
        self.array(key)?
            .ok_or_else(|| field_error(&self.at(key), format!("missing ({why})")))
    }

    /// A required object, read as its own fields (`what` names it in errors): missing is an
    /// error saying what it is for.
    pub(crate) fn req_object(
        &mut self,
        key: &str,
        why: &str,
        what: &str,
    ) -> Result<Fields<'a>, DecodeError> {
        let ptr = self.at(key);
        match self.get(key) {
            Some(v) => Fields::of(v, &ptr, what),
            None => Err(field_error(&ptr, format!("missing ({why})"))),
        }
    }

    /// An array from any of `keys`, with its pointer.
    pub(crate) fn array_any(
        &mut self,
        keys: &[&str],
    ) -> Result<Option<(String, &'a Vec<Value>)>, DecodeError> {
        match self.get_any(keys) {
            None => Ok(None),
            Some((ptr, Value::Array(a))) => Ok(Some((ptr, a))),
            Some((ptr, other)) => Err(type_error(&ptr, "an array", other)),
        }
    }

    /// Each present key of `keys` becomes an extra of `kind` (marked read).
    pub(crate) fn keep(&mut self, keys: &[&str], kind: ExtraKind, extras: &mut Vec<Extra>) {
        for key in keys {
            if let Some((k, v)) = self.map.get_key_value(*key)
                && self.mark(k.as_str())
            {
                extras.push(Extra {
                    pointer: self.at(k),
                    kind,
                    value: v.clone(),
                });
            }
        }
    }

    /// Every key not read becomes an [`ExtraKind::Unknown`] extra, in body order.
    pub(crate) fn finish(self, extras: &mut Vec<Extra>) {
        for (k, v) in self.map {
            if !self.used.contains(&k.as_str()) {
                extras.push(Extra {
                    pointer: push(&self.ptr, k),
                    kind: ExtraKind::Unknown,
                    value: v.clone(),
                });
            }
        }
    }
}

/// Records a wire-form extra.
pub(crate) fn wire(extras: &mut Vec<Extra>, pointer: String, value: Value) {
    extras.push(Extra {
        pointer,
        kind: ExtraKind::Wire,
        value,
    });
}

/// Arguments sent as a JSON string: parsed; empty means `{}`; text that is not JSON is kept as
/// a string (the neutral model's "arguments that were not valid JSON"). An object (some
/// compatible servers) is taken as it is.
pub(crate) fn arguments(v: &Value, ptr: &str) -> Result<Value, DecodeError> {
    match v {
        Value::String(raw) if raw.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(raw) => {
            Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone())))
        }
        Value::Object(_) => Ok(v.clone()),
        other => Err(type_error(ptr, "a JSON string of arguments", other)),
    }
}

/// The text of a content value: a string, or an array of parts whose `type` is one of
/// `text_types` (their `text` concatenated in order); any other part is kept as a not-carried
/// extra. `null` is no text.
pub(crate) fn content_text(
    v: Option<&Value>,
    ptr: &str,
    text_types: &[&str],
    extras: &mut Vec<Extra>,
) -> Result<Option<String>, DecodeError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Array(parts)) => {
            let mut text: Option<String> = None;
            for (i, part) in parts.iter().enumerate() {
                let pp = push(ptr, &i.to_string());
                let mut f = Fields::of(part, &pp, "a content part")?;
                let ty = f.str("type")?.unwrap_or("text");
                if text_types.contains(&ty) {
                    let t = f.req_str("text", "a text part carries `text`")?;
                    text.get_or_insert_with(String::new).push_str(t);
                    f.keep(
                        &["annotations", "logprobs", "cache_control", "citations"],
                        ExtraKind::NotCarried,
                        extras,
                    );
                    f.finish(extras);
                } else {
                    extras.push(Extra {
                        pointer: pp,
                        kind: ExtraKind::NotCarried,
                        value: part.clone(),
                    });
                }
            }
            Ok(text)
        }
        Some(other) => Err(type_error(ptr, "a string or an array of parts", other)),
    }
}

/// The name of the call `call_id` answers: the latest assistant call with that id, else `""`
/// (an unlinked result stays visible: its id matches no call).
pub(crate) fn call_name(messages: &[crate::model::Message], call_id: &str) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            crate::model::Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .find(|c| c.id == call_id)
                .map(|c| c.name.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The path must end with `suffix` (any prefix: `/v1`, a gateway's mount point) and the method
/// be POST.
pub(crate) fn check_path(
    req: &crate::http::HttpRequest,
    suffix: &str,
    format: &str,
) -> Result<(), DecodeError> {
    if !req.method.eq_ignore_ascii_case("POST") {
        return Err(DecodeError::new(format!(
            "method: {format} requests are POST, found {}",
            req.method
        )));
    }
    if !req.path.trim_end_matches('/').ends_with(suffix) {
        return Err(DecodeError::new(format!(
            "path: `{}` is not a {format} path (…{suffix})",
            req.path
        )));
    }
    Ok(())
}

/// Query parameters other than credentials become extras (`?NAME`) of `kind`.
pub(crate) fn query_extras(req: &crate::http::HttpRequest, extras: &mut Vec<Extra>) {
    for (k, v) in &req.query {
        if k == "key" {
            continue; // a credential: never copied
        }
        let kind = if k == "alt" {
            ExtraKind::Wire
        } else {
            ExtraKind::Unknown
        };
        extras.push(Extra {
            pointer: format!("?{k}"),
            kind,
            value: json!(v),
        });
    }
}
