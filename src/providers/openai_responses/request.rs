//! Decoding a Responses request (`POST …/responses`) back to the neutral request: the inverse
//! of `encode`, pure.
//!
//! Read: `model`, `instructions` (one system message, first), `input` (a string, or items:
//! messages by role, `function_call` items (their `namespace` kept) grouped with the assistant text and reasoning items
//! around them into one assistant turn, `function_call_output` linked by `call_id`; reasoning and
//! other output items, and `item_reference`s to stored items, go back as the turn's opaque
//! items, verbatim), function `tools` (`strict`
//! kept as `Tool::strict`, `defer_loading`, a `namespace` entry's functions with its name),
//! hosted `web_search*` tools (variant: the wire type, `None` for the default `web_search`), the
//! hosted `tool_search`, `tool_choice` (a hosted-tool choice such as
//! `{"type":"web_search_preview"}` means REQUIRED grounding), `parallel_tool_calls`,
//! `max_output_tokens`, `stream`.
//! Not recoverable: the error flag of a tool result, where system messages stood (the encoder
//! moves them all into `instructions`, joined), a thinking budget (`reasoning` is an extra).

use serde_json::Value;

use crate::http::HttpRequest;
use crate::model::{
    DecodeError, Grounding, HostedTool, Message, Phase, Tool, ToolCall, ToolChoice,
};
use crate::pointer::push;
use crate::providers::decoded::{
    DecodedRequest, Extra, ExtraKind, Fields, arguments, call_name, check_path, content_text,
    empty_request, field_error, query_extras, type_error, wire,
};
use crate::providers::openai_chat::{allowed, string_choice};
use crate::providers::programmatic;
use crate::providers::result_parts::{Api, read as read_parts};
use crate::providers::tool_search::RESPONSES_TYPE;

const NOT_CARRIED: &[&str] = &[
    "stream_options",
    "reasoning",
    "text",
    "store",
    "previous_response_id",
    "conversation",
    "include",
    "metadata",
    "temperature",
    "top_p",
    "top_logprobs",
    "truncation",
    "user",
    "service_tier",
    "background",
    "max_tool_calls",
    "prompt",
    "prompt_cache_key",
    "safety_identifier",
];

const TEXT: &[&str] = &["input_text", "output_text", "text"];

/// The default hosted search type (decoded as variant `None`).
const DEFAULT_SEARCH: &str = "web_search";

/// Decodes a Responses request.
pub fn decode_request(req: &HttpRequest) -> Result<DecodedRequest, DecodeError> {
    check_path(req, "/responses", "Responses")?;
    let mut extras = Vec::new();
    query_extras(req, &mut extras);
    let mut body = Fields::of(&req.body, "", "a Responses request")?;
    let model = body.req_str("model", "a Responses request names its model")?;
    let stream = body.bool("stream")?.unwrap_or(false);
    let mut out = empty_request(model.to_string(), stream);

    if let Some(instructions) = body.str("instructions")? {
        out.messages.push(Message::System {
            content: instructions.to_string(),
        });
    }
    match body.get("input") {
        None => {}
        Some(Value::String(s)) => out.messages.push(Message::User { content: s.clone() }),
        Some(Value::Array(items)) => input(items, &mut out.messages, &mut extras)?,
        Some(other) => return Err(type_error("/input", "a string or an array of items", other)),
    }

    let hosted_names = match body.array("tools")? {
        Some(tools) => tools_of(tools, &mut out, &mut extras)?,
        None => Vec::new(),
    };
    if let Some(tc) = body.get("tool_choice") {
        match hosted_choice(tc) {
            Some(ty) => {
                // The one form that forces the hosted search: REQUIRED grounding.
                wire(&mut extras, "/tool_choice".into(), tc.clone());
                if !hosted_names.iter().any(|h| h == ty) {
                    extras.push(Extra {
                        pointer: "/tool_choice/type".into(),
                        kind: ExtraKind::Unknown,
                        value: Value::String(ty.to_string()),
                    });
                }
                for h in &mut out.hosted {
                    if let HostedTool::WebSearch { grounding, .. } = h {
                        *grounding = Grounding::Required;
                    }
                }
            }
            None => out.tool_choice = Some(tool_choice(tc, "/tool_choice")?),
        }
    }
    out.parallel_tool_calls = body.bool("parallel_tool_calls")?;
    out.max_tokens = body.count_any(&["max_output_tokens"])?;
    // Compaction's setting (class 31), kept in Responses' form.
    out.server.context_management =
        (body.get("context_management").cloned()).filter(|v| !v.is_null());
    body.keep(NOT_CARRIED, ExtraKind::NotCarried, &mut extras);
    body.finish(&mut extras);
    Ok(DecodedRequest {
        request: out,
        extras,
    })
}

/// The `tools` array: functions into `out.tools` (a namespace's functions with their
/// `namespace`, `defer_loading` kept), hosted web search and tool search into `out.hosted` (the
/// web search types returned, for a hosted choice that forces one), anything else kept whole as
/// a not-carried extra.
fn tools_of(
    tools: &[Value],
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
) -> Result<Vec<String>, DecodeError> {
    let mut hosted_names = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        let ptr = push("/tools", &i.to_string());
        let mut f = Fields::of(t, &ptr, "a tool")?;
        match f.req_str("type", "every tool has a type")? {
            "function" => out.tools.push(function(f, None, extras)?),
            "namespace" => namespace(f, out, extras)?,
            ty if ty.starts_with("web_search") => {
                hosted_names.push(ty.to_string());
                out.hosted.push(HostedTool::WebSearch {
                    grounding: Grounding::Auto,
                    variant: (ty != DEFAULT_SEARCH).then(|| ty.to_string()),
                });
                // Options (search_context_size, user_location, filters) are not carried.
                not_carried_but(t, &ptr, "type", extras);
            }
            ty if ty == RESPONSES_TYPE => {
                out.hosted.push(HostedTool::ToolSearch {
                    variant: ty.to_string(),
                });
                // Its options (`execution`, a client search's `description`, `parameters`).
                not_carried_but(t, &ptr, "type", extras);
            }
            // The code runner programmatic calls come from (class 30).
            ty if ty == programmatic::RESPONSES_TYPE => {
                out.hosted.push(HostedTool::Programmatic {
                    variant: ty.to_string(),
                });
                not_carried_but(t, &ptr, "type", extras);
            }
            _ => extras.push(Extra {
                pointer: ptr,
                kind: ExtraKind::NotCarried,
                value: t.clone(),
            }),
        }
    }
    Ok(hosted_names)
}

/// Every field of the object `t` but `key`, as not-carried extras.
fn not_carried_but(t: &Value, ptr: &str, key: &str, extras: &mut Vec<Extra>) {
    for (k, v) in t.as_object().into_iter().flatten() {
        if k != key {
            extras.push(Extra {
                pointer: push(ptr, k),
                kind: ExtraKind::NotCarried,
                value: v.clone(),
            });
        }
    }
}

/// A function tool (`type` read already), in `namespace` when a namespace declares it.
fn function(
    mut f: Fields<'_>,
    namespace: Option<&str>,
    extras: &mut Vec<Extra>,
) -> Result<Tool, DecodeError> {
    let name = f.req_str("name", "a function tool has a name")?;
    let description = f.str("description")?.map(str::to_string);
    let parameters = f.schema("parameters", None)?;
    let strict = f.strict(extras)?;
    let defer_loading = f.bool("defer_loading")?;
    if defer_loading == Some(false) {
        wire(extras, f.at("defer_loading"), Value::Bool(false));
    }
    let allowed_callers = programmatic::neutral_callers(f.get("allowed_callers"));
    f.finish(extras);
    Ok(Tool {
        allowed_callers,
        name: name.to_string(),
        description,
        parameters,
        strict,
        eager_input_streaming: false,
        defer_loading: defer_loading == Some(true),
        namespace: namespace.map(str::to_string),
        output_schema: None,
    })
}

/// A `{"type":"namespace","name","description","tools"}` entry (`type` read already): its
/// functions into `out.tools` with the namespace's name; its description is not carried.
fn namespace(
    mut f: Fields<'_>,
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let name = f.req_str("name", "a namespace has a name")?;
    let tools_ptr = f.at("tools");
    let members = f.req_array("tools", "a namespace holds its tools")?;
    f.keep(&["description"], ExtraKind::NotCarried, extras);
    f.finish(extras);
    for (i, t) in members.iter().enumerate() {
        let ptr = push(&tools_ptr, &i.to_string());
        let mut m = Fields::of(t, &ptr, "a namespace's tool")?;
        match m.req_str("type", "every tool has a type")? {
            "function" => out.tools.push(function(m, Some(name), extras)?),
            _ => extras.push(Extra {
                pointer: ptr,
                kind: ExtraKind::NotCarried,
                value: t.clone(),
            }),
        }
    }
    Ok(())
}

/// `{"type":"web_search…"}` as a tool choice: the hosted type it forces.
fn hosted_choice(v: &Value) -> Option<&str> {
    v.get("type")
        .and_then(Value::as_str)
        .filter(|t| t.starts_with("web_search"))
}

fn function_name(v: &Value, ptr: &str) -> Result<String, DecodeError> {
    match v.get("name") {
        Some(Value::String(n)) => Ok(n.clone()),
        Some(other) => Err(type_error(&format!("{ptr}/name"), "a string", other)),
        None => Err(field_error(
            &format!("{ptr}/name"),
            "missing (a named function)",
        )),
    }
}

fn tool_choice(v: &Value, ptr: &str) -> Result<ToolChoice, DecodeError> {
    match v {
        Value::String(s) => string_choice(s, ptr),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("function") => Ok(ToolChoice::Forced(function_name(v, ptr)?)),
            Some("allowed_tools") => allowed(v, ptr, function_name),
            _ => Err(field_error(
                &format!("{ptr}/type"),
                "expected `function`, `allowed_tools` or a hosted tool type",
            )),
        },
        other => Err(type_error(ptr, "a string or an object", other)),
    }
}

/// An assistant turn being assembled from consecutive output-side items.
#[derive(Default)]
struct Turn {
    text: Option<String>,
    /// The `phase` of its assistant message item (the last one that has one).
    phase: Option<Phase>,
    calls: Vec<ToolCall>,
    opaque: Vec<Value>,
    open: bool,
}

impl Turn {
    fn flush(&mut self, out: &mut Vec<Message>) {
        if std::mem::take(&mut self.open) {
            out.push(Message::Assistant {
                phase: self.phase.take(),
                text: self.text.take(),
                tool_calls: std::mem::take(&mut self.calls),
                opaque: std::mem::take(&mut self.opaque),
            });
        }
    }
}

fn input(
    items: &[Value],
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut turn = Turn::default();
    for (i, item) in items.iter().enumerate() {
        let ptr = push("/input", &i.to_string());
        let mut f = Fields::of(item, &ptr, "an input item")?;
        let ty = f.str("type")?;
        match (ty, item.get("role").and_then(Value::as_str)) {
            (None | Some("message"), Some(role)) => {
                f.get("role");
                let text = content_text(f.get("content"), &f.at("content"), TEXT, extras)?;
                let phase = phase(&mut f, role)?;
                f.keep(&["id", "status"], ExtraKind::NotCarried, extras);
                f.finish(extras);
                if role == "assistant" {
                    turn.open = true;
                    turn.phase = phase.or(turn.phase);
                    if let Some(t) = text {
                        turn.text.get_or_insert_with(String::new).push_str(&t);
                    }
                    continue;
                }
                turn.flush(out);
                let content = text.unwrap_or_default();
                out.push(match role {
                    "system" => Message::System { content },
                    "developer" => Message::Developer { content },
                    "user" => Message::User { content },
                    other => {
                        return Err(field_error(
                            &push(&ptr, "role"),
                            format!("unknown role `{other}` (user, system, developer, assistant)"),
                        ));
                    }
                });
            }
            (Some("function_call"), _) => {
                let call_id = f.req_str("call_id", "a function call has a call_id")?;
                let name = f.req_str("name", "a function call names its function")?;
                let args = match f.get("arguments") {
                    Some(a) => arguments(a, &f.at("arguments"))?,
                    None => Value::Object(Default::default()),
                };
                let namespace = f.str("namespace")?.map(str::to_string);
                let caller = programmatic::read_caller(f.get("caller"));
                f.keep(&["id", "status"], ExtraKind::NotCarried, extras);
                f.finish(extras);
                turn.open = true;
                turn.calls.push(ToolCall {
                    namespace,
                    caller,
                    ..ToolCall::unsigned(call_id.to_string(), name.to_string(), args)
                });
            }
            (Some("function_call_output"), _) => {
                turn.flush(out);
                let call_id = f.req_str("call_id", "a call output names its call_id")?;
                let (content, parts) =
                    read_parts(Api::Responses, f.get("output"), &f.at("output"), extras)?;
                f.keep(&["id", "status"], ExtraKind::NotCarried, extras);
                f.finish(extras);
                out.push(Message::Tool {
                    call_id: call_id.to_string(),
                    name: call_name(out, call_id),
                    content,
                    parts,
                    is_error: false,
                });
            }
            (Some(_), _) => {
                // An `item_reference` names an item the server stored (the SDKs refer so to the
                // model's own items with `store: true`): kept verbatim in the turn it stands in.
                // Reasoning items and other output items are sent back verbatim too.
                turn.open = true;
                turn.opaque.push(item.clone());
            }
            (None, None) => {
                return Err(field_error(&ptr, "an input item has a `type` or a `role`"));
            }
        }
    }
    turn.flush(out);
    Ok(())
}

/// An assistant message item's `phase` (`commentary`, `final_answer`); another value, or a
/// phase on another role's message, is a field error (Responses defines it on assistant
/// messages only).
fn phase(f: &mut Fields<'_>, role: &str) -> Result<Option<Phase>, DecodeError> {
    let Some(v) = f.get("phase") else {
        return Ok(None);
    };
    let ptr = f.at("phase");
    if v.is_null() {
        return Ok(None);
    }
    match crate::providers::phase::of_item(&serde_json::json!({ "phase": v })) {
        Some(p) if role == "assistant" => Ok(Some(p)),
        Some(_) => Err(field_error(&ptr, "`phase` is for assistant messages only")),
        None => Err(field_error(&ptr, "expected `commentary` or `final_answer`")),
    }
}
