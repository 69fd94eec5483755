//! What each API rejects in a request's own content, whatever its model would do, with the
//! API's own wording: an invalid tool definition (`tool_rejection`, from the schema rules) and a
//! tool result that answers no call (`unlinked_result`), a Chat tool message with an image
//! (`result_part_rejection`). The simulator answers these 400s, the
//! proxy refuses such a client request the same way, and gateway checks read them as the
//! client's own fault; it lives beside the codecs because it is a fact about the wire formats.
//! One rule depends on the model: an OpenAI reasoning parameter sent to a model that does not
//! reason (`openai_reasons`, `reasoning_rejection`), which only the simulator answers.

use serde_json::Value;

use super::tool_rejection::wire_rejection;
use crate::model::Provider;

/// A refusal to answer: status plus what the envelope should say. Unset fields get the
/// provider's usual value for the status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub status: u16,
    pub message: String,
    /// Rarely set; boxed to keep `Result<_, Rejection>` small.
    pub extra: Box<RejectionDetail>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RejectionDetail {
    /// OpenAI `param`.
    pub param: Option<String>,
    /// OpenAI `code`.
    pub code: Option<String>,
    /// OpenAI `type` / Anthropic `error.type` / Google `status`, when not the status default.
    pub kind: Option<String>,
    /// Google `details[]` entries.
    pub details: Vec<Value>,
    /// Extra response headers (`retry-after`, ...).
    pub headers: Vec<(String, String)>,
}

impl Rejection {
    pub(crate) fn new(status: u16, message: impl Into<String>) -> Rejection {
        Rejection {
            status,
            message: message.into(),
            ..Rejection::default()
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Rejection {
        Rejection::new(400, message)
    }

    pub(crate) fn param(mut self, param: &str) -> Rejection {
        self.extra.param = Some(param.to_string());
        self
    }

    pub(crate) fn code(mut self, code: &str) -> Rejection {
        self.extra.code = Some(code.to_string());
        self
    }
}

/// What `provider`'s API rejects in a request's own content, whatever its model would do: an
/// invalid tool definition, or a tool result that answers no call. Both are the API's 400 with
/// its own wording (the simulator answers them; `tooltape proxy` refuses such a client request
/// the same way; gateway checks read them as the client's own fault).
pub(crate) fn request_rejection(provider: Provider, body: &Value) -> Option<Rejection> {
    tool_rejection(provider, body)
        .or_else(|| unlinked_result(provider, body))
        .or_else(|| result_part_rejection(provider, body))
        .or_else(|| misplaced_system(provider, body).map(Rejection::bad_request))
}

/// A `{"role": "system"}` entry of Anthropic's `messages` out of its place: the Messages API's
/// placement rules (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages:
/// not first; right after a user message or an assistant message ending in a server tool use;
/// last or followed by an assistant turn; never next to another system message), answered
/// with a 400 `invalid_request_error`. The docs give the rules, not the wording: this names the
/// entry and the rule. Whether the model accepts such messages at all is the model's (a
/// model other than Claude Opus 4.8 answers 400 too), not checked here.
fn misplaced_system(provider: Provider, body: &Value) -> Option<String> {
    if provider != Provider::Anthropic {
        return None;
    }
    let messages = body.get("messages")?.as_array()?;
    let role = |i: usize| {
        messages
            .get(i)
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
    };
    for (i, m) in messages.iter().enumerate() {
        if m.get("role").and_then(Value::as_str) != Some("system") {
            continue;
        }
        let after_server_tool = |m: &Value| {
            m.get("content")
                .and_then(Value::as_array)
                .and_then(|b| b.last())
                .is_some_and(|b| b["type"] == "server_tool_use")
        };
        let rule = match i.checked_sub(1).map(|p| (role(p), &messages[p])) {
            _ if role(i + 1) == Some("system") => "consecutive system messages are not allowed",
            None => {
                "a system message cannot be the first message; put instructions that apply from the start in the top-level `system` field"
            }
            Some((Some("user"), _)) => match role(i + 1) {
                None | Some("assistant") => continue,
                Some(_) => {
                    "a system message must be the last message or be followed by an assistant message"
                }
            },
            Some((Some("assistant"), prev)) if after_server_tool(prev) => match role(i + 1) {
                None | Some("assistant") => continue,
                Some(_) => {
                    "a system message must be the last message or be followed by an assistant message"
                }
            },
            Some((Some("system"), _)) => "consecutive system messages are not allowed",
            Some(_) => {
                "a system message must immediately follow a user message (or an assistant message ending in a server tool use)"
            }
        };
        return Some(format!("messages.{i}: {rule}"));
    }
    None
}

/// An invalid tool definition (`wire_rejection`): OpenAI's 400 names `tools` and its code.
pub(crate) fn tool_rejection(provider: Provider, body: &Value) -> Option<Rejection> {
    let rej = Rejection::bad_request(wire_rejection(provider, body)?);
    Some(match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
            rej.param("tools").code("invalid_function_parameters")
        }
        Provider::Anthropic | Provider::Gemini => rej,
    })
}

/// A tool result that answers no call: each API's own 400 (see the functions called). Gemini
/// links a `functionResponse` to its call by name and order (`id` is optional and echoed only;
/// its calls usually carry none) and documents no rejection of an unmatched id, so it is not
/// checked; the text protocol carries results as plain text, with nothing to link.
pub(crate) fn unlinked_result(provider: Provider, body: &Value) -> Option<Rejection> {
    match provider {
        Provider::OpenaiChat => chat_unlinked(body),
        Provider::OpenaiResponses => responses_unlinked(body),
        Provider::Anthropic => anthropic_unlinked(body).map(Rejection::bad_request),
        Provider::Gemini | Provider::TextProtocol => None,
    }
}

/// A `tool` message must answer a call of the assistant message its run of tool messages
/// follows: Chat Completions' 400 otherwise (providers.md §1.7; the unknown-id wording is the
/// API's `Invalid parameter` frame with the id and the `messages.[N].…` param).
fn chat_unlinked(body: &Value) -> Option<Rejection> {
    let messages = body.get("messages")?.as_array()?;
    let mut calls: Option<Vec<&str>> = None;
    for (i, m) in messages.iter().enumerate() {
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                calls = m.get("tool_calls").and_then(Value::as_array).map(|a| {
                    a.iter()
                        .filter_map(|c| c.get("id").and_then(Value::as_str))
                        .collect()
                });
            }
            Some("tool") => {
                let Some(ids) = &calls else {
                    return Some(
                        Rejection::bad_request(
                            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                        )
                        .param(&format!("messages.[{i}].role")),
                    );
                };
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                if !ids.contains(&id) {
                    return Some(
                        Rejection::bad_request(format!(
                            "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
                        ))
                        .param(&format!("messages.[{i}].tool_call_id")),
                    );
                }
            }
            _ => calls = None,
        }
    }
    None
}

/// A `function_call_output` input item whose `call_id` no earlier `function_call` item has: the
/// 400 Responses answers ("No tool call found for function call output with call_id …").
/// With `previous_response_id` the calls live server-side: such a request is checked once its
/// kept conversation stands before its input, without the id (the simulator's `store::whole`,
/// the proxy's kept conversations); as sent, it is not checked.
fn responses_unlinked(body: &Value) -> Option<Rejection> {
    if body
        .get("previous_response_id")
        .is_some_and(|v| !v.is_null())
    {
        return None;
    }
    let items = body.get("input")?.as_array()?;
    let mut calls: Vec<&str> = Vec::new();
    for item in items {
        let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => calls.push(id),
            Some("function_call_output") if !calls.contains(&id) => {
                return Some(responses_no_call(id));
            }
            _ => {}
        }
    }
    None
}

/// Responses' 400 for a `function_call_output` whose `call_id` no call of the conversation has.
pub(crate) fn responses_no_call(id: &str) -> Rejection {
    Rejection::bad_request(format!(
        "No tool call found for function call output with call_id {id}."
    ))
    .param("input")
}

/// A `tool_result` block whose `tool_use_id` names no `tool_use` block of the previous
/// (assistant) message: Anthropic's 400 `invalid_request_error` (providers.md §3.7).
fn anthropic_unlinked(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    for (i, m) in messages.iter().enumerate() {
        let Some(blocks) = m.get("content").and_then(Value::as_array) else {
            continue;
        };
        let prev: Vec<&str> = i
            .checked_sub(1)
            .and_then(|p| messages[p].get("content"))
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter(|b| b["type"] == "tool_use")
                    .filter_map(|b| b.get("id").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        for (k, b) in blocks.iter().enumerate() {
            if b["type"] != "tool_result" {
                continue;
            }
            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            if !prev.contains(&id) {
                return Some(format!(
                    "messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. \
                     Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                ));
            }
        }
    }
    None
}

/// A Chat `role: tool` message carrying a part other than text: the API's 400 (its tool message
/// content is a string or text parts only; OpenAI's wording, recorded in OpenHands#7700).
pub(crate) fn result_part_rejection(provider: Provider, body: &Value) -> Option<Rejection> {
    if !matches!(provider, Provider::OpenaiChat | Provider::TextProtocol) {
        return None;
    }
    let messages = body.get("messages")?.as_array()?;
    messages.iter().enumerate().find_map(|(i, m)| {
        let parts = m.get("content")?.as_array()?;
        let is_tool = m.get("role").and_then(Value::as_str) == Some("tool");
        let k = parts
            .iter()
            .position(|p| p.get("type").and_then(Value::as_str).unwrap_or("text") != "text")?;
        is_tool.then(|| {
            Rejection::bad_request(format!(
                "Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL."
            ))
            .param(&format!("messages[{i}].content[{k}]"))
        })
    })
}

/// Whether an OpenAI model reasons (takes reasoning parameters, answers reasoning items): the
/// o-series and GPT-5 do; GPT-3.5, GPT-4, GPT-4o, GPT-4.1 and the GPT-5 chat models (ChatGPT's
/// non-reasoning snapshots, `gpt-5-chat-latest`) do not (platform.openai.com/docs/guides/reasoning
/// names "reasoning models like GPT-5 and o-series"; the GPT-4.1 and GPT-4o model pages list no
/// reasoning). A name outside those families (an OpenAI-compatible server's, a gateway's alias)
/// is taken to reason: the rule refuses only what OpenAI documents refusing.
pub(crate) fn openai_reasons(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or_default();
    !["gpt-3.5", "gpt-4", "chatgpt-", "gpt-5-chat"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// OpenAI's 400 for a reasoning parameter sent to a model that does not reason
/// ([`openai_reasons`]): Responses `reasoning` (its `effort`, else its `summary`) answers
/// `Unsupported parameter: 'reasoning.effort' is not supported with this model.`
/// (`unsupported_parameter`, BoundaryML/baml#2708 on gpt-4.1, Laisky/one-api#120 on
/// gpt-5-chat); Chat `reasoning_effort` answers `Unrecognized request argument supplied:
/// reasoning_effort` (no param, no code; davidmigloz/langchain_dart#712 on gpt-4o-mini,
/// AAswordman/Operit#1048 on gpt-4o). A null value is no parameter. `model`: the request's.
pub(crate) fn reasoning_rejection(
    provider: Provider,
    model: &str,
    body: &Value,
) -> Option<Rejection> {
    if openai_reasons(model) {
        return None;
    }
    let set = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
    match provider {
        Provider::OpenaiResponses => {
            let reasoning = body.get("reasoning").filter(|v| !v.is_null())?;
            let field = ["effort", "summary", "generate_summary"]
                .into_iter()
                .find(|f| set(reasoning.get(*f)))?;
            let param = format!("reasoning.{field}");
            let message =
                format!("Unsupported parameter: '{param}' is not supported with this model.");
            Some(
                Rejection::bad_request(message)
                    .param(&param)
                    .code("unsupported_parameter"),
            )
        }
        Provider::OpenaiChat | Provider::TextProtocol if set(body.get("reasoning_effort")) => Some(
            Rejection::bad_request("Unrecognized request argument supplied: reasoning_effort"),
        ),
        _ => None,
    }
}
