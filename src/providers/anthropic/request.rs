//! Decoding a Messages request (`POST …/messages`) back to the neutral request: the inverse of
//! `encode`, pure.
//!
//! Read: `model`, `max_tokens`, `system` (a string: one system message; text blocks: one each),
//! `messages` (a `system` message mid-conversation as a system message at its place, with a
//! wire extra at its role, its `tool_addition` / `tool_removal` blocks folded into the tools in
//! force by `tool_changes`, the ones it cannot carry kept as not-carried extras; user text; `tool_result` blocks as tool messages linked by `tool_use_id`, with
//! `is_error` and the name of the call they answer, then the user's text blocks after them;
//! assistant `text`, `tool_use` calls, and thinking or server-tool blocks as opaque items,
//! verbatim), `tools` (client tools with `input_schema` and `strict`; `web_search_*` server
//! tools as hosted search, variant `None` for `web_search_20250305`; a `tool_search_tool_*`
//! server tool as a hosted tool search, and beside it the `defer_loading` client tools as
//! declared tools marked deferred), `tool_choice` (`auto`,
//! `any` = required, `none`, `tool` = forced, or REQUIRED grounding when it names a hosted
//! tool; `disable_parallel_tool_use` = the parallel switch off), `thinking.budget_tokens`,
//! `stream`.
//! Not recoverable: system versus developer (both are `system`), an allowed subset (the encoder
//! sends only the allowed tools with `auto`/`any`), `max_tokens` the encoder defaulted, a
//! choice sent only to carry `disable_parallel_tool_use`.

use serde_json::Value;

use super::tool_changes::{client_tool, fold};
use crate::http::HttpRequest;
use crate::model::{DecodeError, Grounding, HostedTool, Message, Tool, ToolCall, ToolChoice};
use crate::pointer::push;
use crate::providers::decoded::{
    DecodedRequest, Extra, ExtraKind, Fields, call_name, check_path, empty_request, field_error,
    query_extras, type_error, wire,
};
use crate::providers::programmatic;
use crate::providers::result_parts::{Api, read as read_parts};
use crate::providers::tool_search::{ANTHROPIC_PREFIX as SEARCH_PREFIX, anthropic_name};

const NOT_CARRIED: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "service_tier",
    "mcp_servers",
    "output_format",
];

/// The default server search type (decoded as variant `None`).
const DEFAULT_SEARCH: &str = "web_search_20250305";

/// Decodes a Messages request.
pub fn decode_request(req: &HttpRequest) -> Result<DecodedRequest, DecodeError> {
    check_path(req, "/messages", "Anthropic Messages")?;
    let mut extras = Vec::new();
    query_extras(req, &mut extras);
    let mut body = Fields::of(&req.body, "", "an Anthropic Messages request")?;
    let model = body.req_str("model", "a Messages request names its model")?;
    let stream = body.bool("stream")?.unwrap_or(false);
    let mut out = empty_request(model.to_string(), stream);
    out.max_tokens = body.count_any(&["max_tokens"])?;
    // Compaction's setting (class 31), kept in Anthropic's form (its beta header is the
    // transport's: the encoder writes it again).
    out.server.context_management =
        (body.get("context_management").cloned()).filter(|v| !v.is_null());
    // The code-execution container programmatic calls continue in (class 30): an id, or an
    // object naming one.
    out.server.container = (body.get("container"))
        .and_then(|c| c.get("id").unwrap_or(c).as_str())
        .map(str::to_string);

    system_of(body.get("system"), &mut out.messages, &mut extras)?;
    let msgs = body.req_array("messages", "a Messages request carries `messages`")?;
    for (i, m) in msgs.iter().enumerate() {
        message(
            m,
            &push("/messages", &i.to_string()),
            &mut out.messages,
            &mut extras,
        )?;
    }

    let mut deferred = Vec::new();
    let hosted_names = match body.array("tools")? {
        Some(tools) => tools_of(tools, &mut out, &mut extras, &mut deferred)?,
        None => Vec::new(),
    };
    fold(&mut out.tools, &mut extras, deferred)?;
    if let Some(tc) = body.get("tool_choice") {
        tool_choice_of(tc, &hosted_names, &mut out, &mut extras)?;
    }
    if let Some(th) = body.get("thinking") {
        thinking_of(th, &mut out, &mut extras)?;
    }
    body.keep(NOT_CARRIED, ExtraKind::NotCarried, &mut extras);
    body.finish(&mut extras);
    Ok(DecodedRequest {
        request: out,
        extras,
    })
}

/// The top-level `system`: a string as one system message, text blocks as one each.
fn system_of(
    system: Option<&Value>,
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    match system {
        None => {}
        Some(Value::String(s)) => out.push(Message::System { content: s.clone() }),
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                let ptr = push("/system", &i.to_string());
                let mut f = Fields::of(b, &ptr, "a system text block")?;
                if f.str("type")? != Some("text") {
                    return Err(field_error(&f.at("type"), "system blocks are `text`"));
                }
                let text = f.req_str("text", "a text block carries `text`")?;
                f.keep(
                    &["cache_control", "citations"],
                    ExtraKind::NotCarried,
                    extras,
                );
                f.finish(extras);
                out.push(Message::System {
                    content: text.to_string(),
                });
            }
        }
        Some(other) => return Err(type_error("/system", "a string or text blocks", other)),
    }
    Ok(())
}

/// `tool_choice`: `auto`, `any` (required), `none`, `tool` (forced, or REQUIRED grounding when it
/// names a hosted tool in `hosted_names`), and `disable_parallel_tool_use` as the parallel switch.
fn tool_choice_of(
    tc: &Value,
    hosted_names: &[String],
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut f = Fields::of(tc, "/tool_choice", "a tool choice")?;
    let ty = f.req_str("type", "a tool choice has a type")?;
    let disable = f.bool("disable_parallel_tool_use")?;
    match ty {
        "auto" => out.tool_choice = Some(ToolChoice::Auto),
        "any" => out.tool_choice = Some(ToolChoice::Required),
        "none" => out.tool_choice = Some(ToolChoice::None),
        "tool" => {
            let name = f.req_str("name", "a `tool` choice names the tool")?;
            if hosted_names.iter().any(|h| h == name) && out.tool(name).is_none() {
                // Forcing the server search tool: REQUIRED grounding.
                for h in &mut out.hosted {
                    if let HostedTool::WebSearch { grounding, .. } = h {
                        *grounding = Grounding::Required;
                    }
                }
            } else {
                out.tool_choice = Some(ToolChoice::Forced(name.to_string()));
            }
        }
        other => {
            return Err(field_error(
                "/tool_choice/type",
                format!("unknown tool choice `{other}` (auto, any, none, tool)"),
            ));
        }
    }
    if disable == Some(true) {
        out.parallel_tool_calls = Some(false);
    }
    if let Some(d) = disable {
        wire(extras, f.at("disable_parallel_tool_use"), Value::Bool(d));
    }
    f.finish(extras);
    Ok(())
}

/// `thinking`: enabled with its budget, disabled, or any other type kept as a not-carried extra.
fn thinking_of(
    th: &Value,
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut f = Fields::of(th, "/thinking", "a thinking configuration")?;
    match f.req_str("type", "thinking has a type")? {
        "enabled" => {
            out.thinking = f.count_any(&["budget_tokens"])?;
            if out.thinking.is_none() {
                return Err(field_error(
                    "/thinking/budget_tokens",
                    "missing (enabled thinking has a budget)",
                ));
            }
            f.finish(extras);
        }
        "disabled" => f.finish(extras),
        _ => extras.push(Extra {
            pointer: "/thinking".into(),
            kind: ExtraKind::NotCarried,
            value: th.clone(),
        }),
    }
    Ok(())
}

/// The `tools` array: client tools into `out.tools`, server web search tools into `out.hosted`
/// (their names returned, for a `tool` choice that forces one), a tool-search server tool into
/// `out.hosted`, anything else kept as an extra. A client tool with `defer_loading` is a declared
/// tool marked deferred when a tool-search tool is declared beside it; without one it goes into
/// `deferred`, not in force until a `tool_addition` names it (`tool_changes`).
fn tools_of(
    tools: &[Value],
    out: &mut crate::model::ChatRequest,
    extras: &mut Vec<Extra>,
    deferred: &mut Vec<Tool>,
) -> Result<Vec<String>, DecodeError> {
    let searching = tools.iter().any(|t| {
        (t.get("type").and_then(Value::as_str)).is_some_and(|ty| ty.starts_with(SEARCH_PREFIX))
    });
    let mut hosted_names = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        let ptr = push("/tools", &i.to_string());
        let mut f = Fields::of(t, &ptr, "a tool")?;
        match f.str("type")? {
            None | Some("custom") => match client_tool(f, extras)? {
                (mut tool, true) if searching => {
                    tool.defer_loading = true;
                    out.tools.push(tool);
                }
                (tool, true) => deferred.push(tool),
                (tool, false) => out.tools.push(tool),
            },
            Some(ty) if ty.starts_with(SEARCH_PREFIX) => {
                let variant = ty.to_string();
                fixed_server_tool(f, t, anthropic_name(&variant), extras)?;
                out.hosted.push(HostedTool::ToolSearch { variant });
            }
            // The code runner programmatic calls come from (class 30).
            Some(ty) if ty.starts_with(programmatic::ANTHROPIC_PREFIX) => {
                let variant = ty.to_string();
                fixed_server_tool(f, t, programmatic::ANTHROPIC_NAME, extras)?;
                out.hosted.push(HostedTool::Programmatic { variant });
            }
            Some(ty) if ty.starts_with("web_search_") => {
                let name = f.str("name")?.unwrap_or("web_search");
                hosted_names.push(name.to_string());
                out.hosted.push(HostedTool::WebSearch {
                    grounding: Grounding::Auto,
                    variant: (ty != DEFAULT_SEARCH).then(|| ty.to_string()),
                });
                for (k, v) in t.as_object().into_iter().flatten() {
                    if k != "type" && k != "name" {
                        extras.push(Extra {
                            pointer: push(&ptr, k),
                            kind: ExtraKind::NotCarried,
                            value: v.clone(),
                        });
                    }
                }
            }
            Some(_) => extras.push(Extra {
                pointer: ptr,
                kind: ExtraKind::NotCarried,
                value: t.clone(),
            }),
        }
    }
    Ok(hosted_names)
}

/// A server tool whose name the API fixes (`fixed`): another name is not what the encoder
/// writes (an `unknown` extra), its `cache_control` a `not-carried` one.
fn fixed_server_tool(
    mut f: Fields<'_>,
    t: &Value,
    fixed: &str,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    if f.str("name")? != Some(fixed) {
        extras.push(Extra {
            pointer: f.at("name"),
            kind: ExtraKind::Unknown,
            value: t.get("name").cloned().unwrap_or(Value::Null),
        });
    }
    f.keep(&["cache_control"], ExtraKind::NotCarried, extras);
    f.finish(extras);
    Ok(())
}

/// One message: a user message may become several neutral ones (tool results, then text).
fn message(
    m: &Value,
    ptr: &str,
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut f = Fields::of(m, ptr, "a message")?;
    let role = f.req_str("role", "every message has a role")?;
    let content_ptr = f.at("content");
    let content = f.get("content");
    if role == "system" {
        // A mid-conversation system message (Claude Opus 4.8): carried at its place; the wire
        // extra says it sat in `messages` (encoders put system text in the top-level field).
        f.keep(&["cache_control"], ExtraKind::NotCarried, extras);
        wire(extras, push(ptr, "role"), Value::String(role.into()));
    }
    f.finish(extras);
    let blocks = match content {
        None => return Err(field_error(&content_ptr, "missing (a message has content)")),
        Some(Value::String(s)) => {
            out.push(match role {
                "user" => Message::User { content: s.clone() },
                "system" => Message::System { content: s.clone() },
                "assistant" => Message::Assistant {
                    phase: None,
                    text: Some(s.clone()),
                    tool_calls: Vec::new(),
                    opaque: Vec::new(),
                },
                other => return Err(unknown_role(ptr, other)),
            });
            return Ok(());
        }
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(type_error(
                &content_ptr,
                "a string or content blocks",
                other,
            ));
        }
    };
    match role {
        "user" => user_blocks(blocks, &content_ptr, out, extras)?,
        "assistant" => assistant_blocks(blocks, &content_ptr, out, extras)?,
        "system" => system_blocks(blocks, &content_ptr, out, extras)?,
        other => return Err(unknown_role(ptr, other)),
    }
    Ok(())
}

/// A user message's blocks: text (one user message each) and `tool_result` blocks (one tool
/// message each, in order); any other block kept whole as a not-carried extra.
fn user_blocks(
    blocks: &[Value],
    content_ptr: &str,
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    for (i, b) in blocks.iter().enumerate() {
        let bp = push(content_ptr, &i.to_string());
        let mut f = Fields::of(b, &bp, "a content block")?;
        match f.req_str("type", "every block has a type")? {
            "text" => {
                let text = f.req_str("text", "a text block carries `text`")?;
                f.keep(
                    &["cache_control", "citations"],
                    ExtraKind::NotCarried,
                    extras,
                );
                f.finish(extras);
                out.push(Message::User {
                    content: text.to_string(),
                });
            }
            "tool_result" => {
                let id = f.req_str("tool_use_id", "a tool result names its tool_use_id")?;
                let cp = f.at("content");
                let (content, parts) = read_parts(Api::Anthropic, f.get("content"), &cp, extras)?;
                let is_error = f.bool("is_error")?.unwrap_or(false);
                f.keep(&["cache_control"], ExtraKind::NotCarried, extras);
                f.finish(extras);
                out.push(Message::Tool {
                    call_id: id.to_string(),
                    name: call_name(out, id),
                    content,
                    parts,
                    is_error,
                });
            }
            _ => extras.push(Extra {
                pointer: bp,
                kind: ExtraKind::NotCarried,
                value: b.clone(),
            }),
        }
    }
    Ok(())
}

/// An assistant message's blocks as one assistant message: its text joined, its `tool_use`
/// calls, and every other block (thinking, server tools) kept verbatim as opaque.
fn assistant_blocks(
    blocks: &[Value],
    content_ptr: &str,
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    let mut text: Option<String> = None;
    let mut tool_calls = Vec::new();
    let mut opaque = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let bp = push(content_ptr, &i.to_string());
        let mut f = Fields::of(b, &bp, "a content block")?;
        match f.req_str("type", "every block has a type")? {
            "text" => {
                let t = f.req_str("text", "a text block carries `text`")?;
                text.get_or_insert_with(String::new).push_str(t);
                f.keep(
                    &["cache_control", "citations"],
                    ExtraKind::NotCarried,
                    extras,
                );
                f.finish(extras);
            }
            "tool_use" => tool_calls.push(tool_use(f, extras)?),
            // Thinking blocks, server tool use and its results: sent back verbatim.
            _ => opaque.push(b.clone()),
        }
    }
    out.push(Message::Assistant {
        phase: None,
        text,
        tool_calls,
        opaque,
    });
    Ok(())
}

/// A `tool_use` block's call: its id, name and object `input`.
fn tool_use(mut f: Fields<'_>, extras: &mut Vec<Extra>) -> Result<ToolCall, DecodeError> {
    let id = f.req_str("id", "a tool_use block has an id")?;
    let name = f.req_str("name", "a tool_use block names its tool")?;
    let arguments = match f.get("input") {
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return Err(type_error(&f.at("input"), "an object", other));
        }
        None => {
            return Err(field_error(
                &f.at("input"),
                "missing (a tool_use block carries its input)",
            ));
        }
    };
    // Made by the model's code (class 30); a `direct` caller is the default.
    let caller = programmatic::read_caller(f.get("caller"));
    f.keep(&["cache_control"], ExtraKind::NotCarried, extras);
    f.finish(extras);
    Ok(ToolCall {
        caller,
        ..ToolCall::unsigned(id.to_string(), name.to_string(), arguments)
    })
}

/// A mid-conversation system message's blocks: text (one system message each), and the tool
/// changes of the `mid-conversation-tool-changes-2026-07-01` beta (`tool_addition`,
/// `tool_removal`), kept whole as not-carried extras: the neutral request has one tool list.
/// The API refuses any other block.
fn system_blocks(
    blocks: &[Value],
    content_ptr: &str,
    out: &mut Vec<Message>,
    extras: &mut Vec<Extra>,
) -> Result<(), DecodeError> {
    for (i, b) in blocks.iter().enumerate() {
        let bp = push(content_ptr, &i.to_string());
        let mut f = Fields::of(b, &bp, "a system message's content block")?;
        match f.str("type")? {
            Some("text") => {}
            Some("tool_addition" | "tool_removal") => {
                tool_change(b, &bp)?;
                extras.push(Extra {
                    pointer: bp,
                    kind: ExtraKind::NotCarried,
                    value: b.clone(),
                });
                continue;
            }
            _ => {
                return Err(field_error(
                    &f.at("type"),
                    "a system message carries text, tool_addition and tool_removal blocks only",
                ));
            }
        }
        let text = f.req_str("text", "a text block carries `text`")?;
        f.keep(&["cache_control"], ExtraKind::NotCarried, extras);
        f.finish(extras);
        out.push(Message::System {
            content: text.to_string(),
        });
    }
    Ok(())
}

/// A tool change names its tool: `tool_reference` (`name`), `mcp_tool_reference` (`server_name`,
/// `name`), `mcp_toolset_reference` (`server_name`), or, with `inline-tools-2026-09-15`, a
/// `tool_definition` carrying a `tools` entry in `definition` (additions only).
fn tool_change(b: &Value, ptr: &str) -> Result<(), DecodeError> {
    let tp = push(ptr, "tool");
    let Some(tool) = b.get("tool") else {
        return Err(field_error(&tp, "missing (a tool change names its tool)"));
    };
    let has_str = |k: &str| {
        tool.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    let (ok, needs) = match tool.get("type").and_then(Value::as_str) {
        Some("tool_reference") => (has_str("name"), "`name`"),
        Some("mcp_tool_reference") => (
            has_str("name") && has_str("server_name"),
            "`server_name` and `name`",
        ),
        Some("mcp_toolset_reference") => (has_str("server_name"), "`server_name`"),
        Some("tool_definition") if b["type"] == "tool_addition" => (
            tool.get("definition").is_some_and(Value::is_object),
            "a `definition` object",
        ),
        _ => {
            return Err(field_error(
                &push(&tp, "type"),
                "a tool change's tool is `tool_reference`, `mcp_tool_reference`, `mcp_toolset_reference` or (added only) `tool_definition`",
            ));
        }
    };
    if ok {
        Ok(())
    } else {
        Err(field_error(&tp, format!("missing {needs}")))
    }
}

fn unknown_role(ptr: &str, role: &str) -> DecodeError {
    field_error(
        &push(ptr, "role"),
        format!("unknown role `{role}` (user, assistant, or system after a user turn)"),
    )
}
