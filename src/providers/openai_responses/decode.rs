//! Responses answers, buffered: the response object (output items, usage, status) or an error
//! envelope into an `Outcome`; the item and head accumulators the stream decoder shares.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::HttpResponse;
use crate::model::{
    Caller, ChatRequest, DecodeError, Finish, HostedActivity, Outcome, Phase, ProviderError,
    ToolCall, ToolSearchActivity,
};
use crate::providers::openai_chat::wire::{BStr, UsageWire};
use crate::providers::openai_chat::{
    arguments_string, body_text, error_from_response, error_from_value, parse_arguments,
};

/// Decodes a buffered response, or any non-2xx answer as an error envelope.
pub fn decode(_req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    if !resp.is_success() {
        return Ok(Outcome::from_error(error_from_response(resp)));
    }
    let text = body_text(resp, "openai-responses body")?;
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
    let Some(output) = v.get("output").and_then(Value::as_array) else {
        return Err(DecodeError::new(
            "openai-responses body: missing required field `output` (not a Responses API response)",
        ));
    };
    let mut out = Outcome::default();
    let mut items = Items::default();
    for item in output {
        items.apply(item, true);
    }
    let head = Head::from_wire(&head);
    let last = items.finish_into(&mut out, head.search_tool.clone());
    head.apply(&mut out, resp.status, &last);
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
    pub(super) fn from_wire(w: &ResponseWire<'_>) -> Head {
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
    ///
    /// An `incomplete` (max_output_tokens) response withdraws its last call as truncated only
    /// when its arguments text is empty or not complete JSON (the Chat decoder's rule, for the
    /// same reason: a cut JSON object never parses, while a last call with complete arguments
    /// was finished before the limit hit and is a valid call), or when its item says
    /// `status: "incomplete"`, the format's own mark of a cut item. `last` is the last call's
    /// arguments text and that mark.
    pub(super) fn apply(self, out: &mut Outcome, http_status: u16, last: &LastCall) {
        out.finish = match (self.status.as_deref(), self.incomplete_reason.as_deref()) {
            (Some("completed"), _) => Finish::Stop,
            (Some("incomplete"), Some("max_output_tokens")) => Finish::Length,
            (Some("incomplete"), Some("content_filter")) => Finish::ContentFilter,
            _ => Finish::Other,
        };
        out.raw_finish = self.status;
        out.withdraw_unfinished_call(
            last.as_ref().map(|(raw, _)| raw.as_str()),
            last.as_ref().is_some_and(|(_, cut)| *cut),
        );
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

/// The last call's arguments text, and whether its item said `status: "incomplete"`.
pub(super) type LastCall = Option<(String, bool)>;

/// What a call carries besides its name and arguments that must go back with it: its
/// `namespace` (class 29) and, when the model's code made it, its `caller` (class 30).
#[derive(Default)]
pub(crate) struct Origin {
    pub namespace: Option<String>,
    pub caller: Option<Caller>,
}

impl Origin {
    /// A `function_call` item's (or its streamed `item`'s) namespace and caller.
    pub(super) fn of(item: &Value) -> Origin {
        Origin {
            namespace: (item.get("namespace").and_then(Value::as_str))
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            caller: crate::providers::programmatic::read_caller(item.get("caller")),
        }
    }
}

/// Output items gathered in order, turned into calls, text, opaque items and hosted activity.
#[derive(Default)]
pub(crate) struct Items {
    /// Each call's id, name, arguments text and where it comes from.
    calls: Vec<(String, String, String, Origin)>,
    /// The last call's item said `status: "incomplete"` (a streamed call's deltas carry none).
    last_call_incomplete: bool,
    text: String,
    opaque: Vec<Value>,
    hosted: Option<HostedActivity>,
    tool_search: Option<ToolSearchActivity>,
    /// The `phase` of the message items (the last one that has one).
    phase: Option<Phase>,
}

impl Items {
    /// One `output[]` item; `with_text` false when the text already came from stream deltas.
    pub(super) fn apply(&mut self, item: &Value, with_text: bool) {
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
                self.call(id, s("name"), args, Origin::of(item));
                self.last_call_incomplete = s("status") == "incomplete";
            }
            "message" => {
                if let Some(p) = crate::providers::phase::of_item(item) {
                    self.phase = Some(p);
                }
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
            // Reasoning is never text: it goes back verbatim on the next turn; so does a
            // compaction item, which stands for the conversation before it (class 31).
            "reasoning" | "compaction" => self.opaque.push(item.clone()),
            // The program whose calls the answer makes (class 30): it goes back before them.
            "program" => self.opaque.push(item.clone()),
            "web_search_call" => {
                let h = self.hosted();
                h.search_calls += 1;
                let sources = item.pointer("/action/sources").and_then(Value::as_array);
                h.search_results += sources.map_or(0, |s| s.len() as u32);
            }
            // A tool search and what it loaded: server items, never client calls.
            // Both go back on the next turn, whose calls use what the search loaded.
            "tool_search_call" => {
                let found = self.tool_search.get_or_insert_default();
                found.searches += 1;
                found.tool = Some(crate::providers::tool_search::RESPONSES_TYPE.to_string());
                self.opaque.push(item.clone());
            }
            "tool_search_output" => {
                let found = self.tool_search.get_or_insert_default();
                found.loaded.extend(loaded(item));
                self.opaque.push(item.clone());
            }
            _ => {} // other hosted/custom items are not client tool calls
        }
    }

    pub(super) fn call(&mut self, id: String, name: String, args: String, from: Origin) {
        self.calls.push((id, name, args, from));
        self.last_call_incomplete = false;
    }

    pub(super) fn push_text(&mut self, t: &str) {
        self.text.push_str(t);
    }

    fn hosted(&mut self) -> &mut HostedActivity {
        self.hosted.get_or_insert_with(HostedActivity::default)
    }

    /// Moves what was gathered into `out`; returns the last call's arguments text and mark.
    pub(super) fn finish_into(self, out: &mut Outcome, search_tool: Option<String>) -> LastCall {
        let last = self
            .calls
            .last()
            .map(|(_, _, args, _)| (args.clone(), self.last_call_incomplete));
        for (i, (id, name, args, from)) in self.calls.into_iter().enumerate() {
            let arguments = parse_arguments(&args, i, &mut out.diagnostics);
            out.tool_calls.push(ToolCall {
                caller: from.caller,
                id,
                name,
                arguments,
                thought_signature: None,
                namespace: from.namespace,
            });
        }
        if !self.text.is_empty() {
            out.text = Some(self.text);
        }
        out.opaque = self.opaque;
        out.phase = self.phase;
        out.tool_search = self.tool_search;
        out.hosted = self.hosted.map(|mut h| {
            h.tool_type = search_tool;
            h
        });
        last
    }
}

/// The functions a `tool_search_output` loaded: its `tools`' names, a namespace's by its
/// functions' names.
pub(crate) fn loaded(item: &Value) -> Vec<String> {
    let name = |t: &Value| t.get("name").and_then(Value::as_str).map(str::to_string);
    let tools = item.get("tools").and_then(Value::as_array);
    (tools.into_iter().flatten())
        .flat_map(|t| match t.get("tools").and_then(Value::as_array) {
            Some(members) => members.iter().filter_map(name).collect(),
            None => name(t).into_iter().collect::<Vec<_>>(),
        })
        .collect()
}
