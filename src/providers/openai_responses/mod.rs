//! Provider `openai-responses` (`POST /v1/responses`): request encoding, buffered decoding of
//! `output[]` items (calls, text, reasoning, hosted web search), and status → finish mapping.

mod stream;

#[cfg(test)]
mod tests;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::openai_chat::wire::{BStr, UsageWire};
use super::openai_chat::{
    arguments_string, check_tool_choice, error_from_response, error_from_value, parse_arguments,
};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{
    ChatRequest, Finish, HostedActivity, HostedTool, Message, Outcome, ProviderError, ToolCall,
    ToolChoice,
};
use crate::providers::{DecodeError, EncodeError, Encoded, Provider};
use crate::schema;

pub use stream::{Stream, synthetic_stream};

pub const PATH: &str = "/v1/responses";

pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    let has_tools = !req.tools.is_empty() || !req.hosted.is_empty();
    check_tool_choice(req.tool_choice.as_ref(), &names, has_tools)?;
    let (prepared, mut notes) =
        schema::prepare_tools(Provider::OpenaiResponses, &req.tools, req.strict)?;

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        body.insert("instructions".into(), json!(system.join("\n\n")));
    }
    body.insert(
        "input".into(),
        Value::Array(input(&req.messages, &mut notes)),
    );
    let mut tools: Vec<Value> = prepared
        .into_iter()
        .map(|t| {
            let mut f = Map::new();
            f.insert("type".into(), json!("function"));
            f.insert("name".into(), json!(t.name));
            if let Some(d) = t.description {
                f.insert("description".into(), json!(d));
            }
            f.insert("parameters".into(), t.parameters);
            // Omitting `strict` here means "strict when possible" (Responses normalizes schemas);
            // the neutral default is non-strict, so an unset value is sent as an explicit false.
            f.insert("strict".into(), json!(t.strict.unwrap_or(false)));
            Value::Object(f)
        })
        .collect();
    // REQUIRED search (possible only where `policy::check` allowed it): the hosted tool choice
    // `{"type":"web_search_preview"}` is the one form that forces it (ToolChoiceTypes has no
    // plain `web_search`), so the preview variant is sent.
    let force_search = crate::policy::grounding_required(req);
    for h in &req.hosted {
        let HostedTool::WebSearch { variant, .. } = h;
        let ty = if force_search {
            "web_search_preview"
        } else {
            variant.as_deref().unwrap_or("web_search")
        };
        tools.push(json!({ "type": ty }));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if force_search {
        body.insert("tool_choice".into(), json!({"type": "web_search_preview"}));
    } else if let Some(choice) = &req.tool_choice {
        body.insert("tool_choice".into(), tool_choice(choice));
    } else if !req.hosted.is_empty() {
        // Hosted tools: the choice is always explicit, so a REQUIRED that could not be sent is
        // never mistaken for a silent auto.
        body.insert("tool_choice".into(), json!("auto"));
    }
    if let Some(p) = req.parallel_tool_calls {
        if has_tools {
            body.insert("parallel_tool_calls".into(), json!(p));
        } else {
            notes.push("parallel_tool_calls omitted: the request declares no tools".into());
        }
    }
    if let Some(m) = req.max_tokens {
        body.insert("max_output_tokens".into(), json!(m));
    }
    if req.thinking.is_some() {
        notes.push(
            "thinking budget not sent: Responses takes `reasoning.effort`, not a token budget"
                .into(),
        );
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
        body.insert(
            "stream_options".into(),
            json!({"include_obfuscation": false}),
        );
    }
    Ok(Encoded {
        request: HttpRequest::post(PATH, Value::Object(body)),
        notes,
    })
}

fn tool_choice(choice: &ToolChoice) -> Value {
    let fname = |n: &str| json!({"type": "function", "name": n});
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Forced(n) => fname(n),
        ToolChoice::Allowed { mode, tools } => json!({
            "type": "allowed_tools",
            "mode": mode,
            "tools": tools.iter().map(|n| fname(n)).collect::<Vec<_>>(),
        }),
    }
}

/// Every non-system message as an input item; tool results are keyed by `call_id`.
fn input(msgs: &[Message], notes: &mut Vec<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        match m {
            Message::System { .. } => {} // sent as `instructions`
            Message::Developer { content } => {
                out.push(json!({"role": "developer", "content": content}))
            }
            Message::User { content } => out.push(json!({
                "role": "user", "content": [{"type": "input_text", "text": content}]
            })),
            Message::Assistant {
                text,
                tool_calls,
                opaque,
            } => {
                // Reasoning items go back verbatim, before the text and calls they preceded.
                out.extend(opaque.iter().cloned());
                if let Some(t) = text.as_deref().filter(|t| !t.is_empty()) {
                    out.push(json!({
                        "role": "assistant", "content": [{"type": "output_text", "text": t}]
                    }));
                }
                for c in tool_calls {
                    out.push(json!({
                        "type": "function_call", "call_id": c.id, "name": c.name,
                        "arguments": arguments_string(&c.arguments),
                    }));
                }
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => {
                if *is_error {
                    // No error flag on function_call_output: the content is sent as is, noted.
                    notes.push(format!(
                        "message {i}: tool result for `{call_id}` is an error; Responses has no error flag, output sent as is"
                    ));
                }
                out.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": content}),
                );
            }
        }
    }
    out
}

/// Decodes a buffered response, or any non-2xx answer as an error envelope.
pub fn decode(_req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    if !resp.is_success() {
        return Ok(Outcome::from_error(error_from_response(resp)));
    }
    let text = std::str::from_utf8(&resp.body).map_err(|e| {
        DecodeError::new(format!(
            "openai-responses body: invalid UTF-8 at byte {}",
            e.valid_up_to()
        ))
    })?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| DecodeError::json("openai-responses body", &e, 1))?;
    let head = ResponseWire::deserialize(&v)
        .map_err(|e| DecodeError::new(format!("openai-responses body: {e}")))?;
    if head.status.is_none()
        && let Some(err) = v.get("error").filter(|e| !e.is_null())
        && let Some(err) = error_from_value(&json!({ "error": err }), resp.status)
    {
        // A 2xx envelope with only an error (gateways).
        return Ok(Outcome::from_error(err));
    }
    let mut out = Outcome::default();
    let mut items = Items::default();
    for item in v
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        items.apply(item, true);
    }
    let head = Head::from_wire(&head);
    items.finish_into(&mut out, head.search_tool.clone());
    head.apply(&mut out, resp.status);
    Ok(out)
}

/// The response-level fields: everything except `output`.
#[derive(Default, Deserialize)]
pub(crate) struct ResponseWire<'a> {
    #[serde(default, borrow)]
    pub status: Option<BStr<'a>>,
    #[serde(default, borrow)]
    pub model: Option<BStr<'a>>,
    #[serde(default)]
    pub usage: Option<UsageWire>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub incomplete_details: Option<Value>,
    #[serde(default, borrow)]
    pub tools: Option<Vec<ToolEchoWire<'a>>>,
}

#[derive(Deserialize)]
pub(crate) struct ToolEchoWire<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Option<BStr<'a>>,
}

/// The response-level fields a decoder keeps (owned: a stream holds them across events).
#[derive(Clone, Debug, Default)]
pub(crate) struct Head {
    status: Option<String>,
    incomplete_reason: Option<String>,
    error: Option<Value>,
    usage: Option<crate::model::Usage>,
    model: Option<String>,
    /// The hosted search tool type the response echoes in `tools` (`web_search`, `web_search_preview`).
    pub search_tool: Option<String>,
}

impl Head {
    pub fn from_wire(w: &ResponseWire<'_>) -> Head {
        Head {
            status: w.status.as_ref().map(|s| s.as_str().to_string()),
            incomplete_reason: w
                .incomplete_details
                .as_ref()
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                .map(str::to_string),
            error: w.error.clone().filter(|e| !e.is_null()),
            usage: w.usage.as_ref().map(UsageWire::to_usage),
            model: w.model.as_ref().map(|m| m.as_str().to_string()),
            search_tool: w
                .tools
                .iter()
                .flatten()
                .filter_map(|t| t.kind.as_ref())
                .find(|k| k.as_str().starts_with("web_search"))
                .map(|k| k.as_str().to_string()),
        }
    }

    /// Status → finish (there is no finish_reason), plus error, usage and model. Call after the
    /// items are in `out` (a completed response with calls finishes as `ToolCalls`).
    pub fn apply(self, out: &mut Outcome, http_status: u16) {
        out.finish = match (self.status.as_deref(), self.incomplete_reason.as_deref()) {
            (Some("completed"), _) => Finish::Stop,
            (Some("incomplete"), Some("max_output_tokens")) => Finish::Length,
            (Some("incomplete"), Some("content_filter")) => Finish::ContentFilter,
            _ => Finish::Other,
        };
        out.raw_finish = self.status;
        out.normalize_finish_for_calls();
        if out.error.is_none()
            && let Some(e) = self.error
        {
            out.error =
                error_from_value(&json!({ "error": e }), http_status).or(Some(ProviderError {
                    status: http_status,
                    message: e.to_string(),
                    ..ProviderError::default()
                }));
        }
        if self.usage.is_some() {
            out.usage = self.usage;
        }
        if self.model.is_some() {
            out.model = self.model;
        }
    }
}

/// Output items gathered in order, turned into calls, text, opaque items and hosted activity.
#[derive(Default)]
pub(crate) struct Items {
    calls: Vec<(String, String, String)>,
    text: String,
    opaque: Vec<Value>,
    hosted: Option<HostedActivity>,
}

impl Items {
    /// One `output[]` item; `with_text` false when the text already came from stream deltas.
    pub fn apply(&mut self, item: &Value, with_text: bool) {
        let s = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "function_call" => {
                // `call_id` is what a function_call_output answers; `id` (fc_…) is the item's own.
                let id = Some(s("call_id"))
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| s("id"));
                let args = item
                    .get("arguments")
                    .map_or_else(String::new, arguments_string);
                self.call(id, s("name"), args);
            }
            "message" => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let t = part.get("type").and_then(Value::as_str);
                    let field = if t == Some("refusal") {
                        "refusal"
                    } else {
                        "text"
                    };
                    if with_text && matches!(t, Some("output_text" | "refusal")) {
                        self.text
                            .push_str(part.get(field).and_then(Value::as_str).unwrap_or(""));
                    }
                    for a in part
                        .get("annotations")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if a.get("type").and_then(Value::as_str) == Some("url_citation")
                            && let Some(url) = a.get("url").and_then(Value::as_str)
                        {
                            self.hosted().citations.push(url.to_string());
                        }
                    }
                }
            }
            // Reasoning is never text: it goes back verbatim on the next turn.
            "reasoning" => self.opaque.push(item.clone()),
            "web_search_call" => {
                let h = self.hosted();
                h.search_calls += 1;
                let sources = item.pointer("/action/sources").and_then(Value::as_array);
                h.search_results += sources.map_or(0, |s| s.len() as u32);
            }
            _ => {} // other hosted/custom items are not client tool calls
        }
    }

    pub fn call(&mut self, id: String, name: String, args: String) {
        self.calls.push((id, name, args));
    }

    pub fn push_text(&mut self, t: &str) {
        self.text.push_str(t);
    }

    fn hosted(&mut self) -> &mut HostedActivity {
        self.hosted.get_or_insert_with(HostedActivity::default)
    }

    pub fn finish_into(self, out: &mut Outcome, search_tool: Option<String>) {
        for (i, (id, name, args)) in self.calls.into_iter().enumerate() {
            let arguments = parse_arguments(&args, i, &mut out.diagnostics);
            out.tool_calls.push(ToolCall {
                id,
                name,
                arguments,
                thought_signature: None,
            });
        }
        if !self.text.is_empty() {
            out.text = Some(self.text);
        }
        out.opaque = self.opaque;
        out.hosted = self.hosted.map(|mut h| {
            h.tool_type = search_tool;
            h
        });
    }
}
