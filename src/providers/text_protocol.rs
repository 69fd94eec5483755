//! Provider `text-protocol`: a Chat Completions backend without native tools. Tools travel as
//! injected developer instructions; calls come back as `<tool_call>` text parsed by [`crate::textcall`].
//!
//! Wire decisions:
//! - body keys: `model`, `messages`, `max_completion_tokens` (when set), `stream`; never `tools`
//!   or `tool_choice`;
//! - the first message is `system` with the developer instructions, built by
//!   [`developer_instructions`] over [`responses_request`] (the CLI's path too); system and
//!   developer messages of the conversation are folded into it, so they are not sent again;
//! - an earlier assistant turn is its text, then each call as
//!   `<tool_call>{"name":…,"arguments":"…"}</tool_call>`, joined with `\n`;
//! - tool results are `user` messages, `<tool_result name="…" call_id="…">content</tool_result>`
//!   (`error="true"` added for error results; attribute values XML-escaped, content verbatim);
//!   consecutive results share one message, joined with `\n`;
//! - hosted tools cannot be run by such a backend: `HOSTED_NOT_SUPPORTED`; a thinking budget is
//!   not expressible and is dropped with a note; `parallel_tool_calls: true` is its behaviour (not
//!   sent, with a note), `false` is refused (`providers/constraints.rs`).

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::http::{HttpRequest, HttpResponse};
use crate::inject::developer_instructions;
use crate::inject::stringify::{js_string, js_stringify};
use crate::model::{
    AllowedMode, ChatRequest, Finish, Message, Outcome, StrictPolicy, ToolCall, ToolChoice,
};
use crate::model::{DecodeError, EncodeError, Encoded};
use crate::providers::openai_chat;
use crate::textcall::{Parsed, Parser, ParserConfig};

pub fn encode(req: &ChatRequest) -> Result<Encoded, EncodeError> {
    if !req.hosted.is_empty() {
        return Err(EncodeError::new(
            "HOSTED_NOT_SUPPORTED",
            "text-protocol backends run no hosted tools (web search)",
        ));
    }
    let mut notes = Vec::new();
    if req.thinking.is_some() {
        notes.push(
            "thinking budget not sent: the text protocol has no reasoning parameter".to_string(),
        );
    }
    // `false` is refused before this (providers/constraints.rs); `true` is its behaviour.
    if req.parallel_tool_calls == Some(true) {
        notes.push("parallel_tool_calls not sent: the text protocol cannot express it".to_string());
    }
    let mut messages: Vec<Value> = Vec::new();
    if let Some(instructions) = developer_instructions(&responses_request(req)) {
        messages.push(json!({"role": "system", "content": instructions}));
    }
    let mut results: Vec<String> = Vec::new();
    for m in &req.messages {
        if let Message::Tool {
            call_id,
            name,
            content,
            is_error,
            ..
        } = m
        {
            let error = if *is_error { " error=\"true\"" } else { "" };
            results.push(format!(
                "<tool_result name=\"{}\" call_id=\"{}\"{error}>{content}</tool_result>",
                xml_attr(name),
                xml_attr(call_id)
            ));
            continue;
        }
        if !results.is_empty() {
            messages.push(json!({"role": "user", "content": results.join("\n")}));
            results.clear();
        }
        match m {
            Message::User { content } => messages.push(json!({"role": "user", "content": content})),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut parts: Vec<String> = text.iter().cloned().collect();
                parts.extend(tool_calls.iter().map(call_text));
                messages.push(json!({"role": "assistant", "content": parts.join("\n")}));
            }
            // Folded into the first system message by `developer_instructions`.
            Message::System { .. } | Message::Developer { .. } | Message::Tool { .. } => {}
        }
    }
    if !results.is_empty() {
        messages.push(json!({"role": "user", "content": results.join("\n")}));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    if let Some(max) = req.max_tokens {
        body.insert("max_completion_tokens".into(), json!(max));
    }
    body.insert("stream".into(), json!(req.stream));
    Ok(Encoded {
        request: HttpRequest::post("/v1/chat/completions", Value::Object(body)),
        notes,
    })
}

/// The request in the Responses shape `developer_instructions` and the parser read: function
/// tools (`strict: true` when the tool asks for it, or for every tool under `StrictPolicy::Require`),
/// `tool_choice` when set, and the system/developer messages as `input`.
pub fn responses_request(req: &ChatRequest) -> Value {
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            let mut o = Map::new();
            o.insert("type".into(), json!("function"));
            o.insert("name".into(), json!(t.name));
            if let Some(d) = &t.description {
                o.insert("description".into(), json!(d));
            }
            o.insert("parameters".into(), t.parameters.clone());
            if t.strict == Some(true) || req.strict == StrictPolicy::Require {
                o.insert("strict".into(), json!(true));
            }
            Value::Object(o)
        })
        .collect();
    let mut out = Map::new();
    out.insert("model".into(), json!(req.model));
    out.insert("tools".into(), Value::Array(tools));
    if let Some(choice) = &req.tool_choice {
        out.insert("tool_choice".into(), choice_json(choice));
    }
    let input: Vec<Value> = req
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(json!({"role": "system", "content": content})),
            Message::Developer { content } => {
                Some(json!({"role": "developer", "content": content}))
            }
            _ => None,
        })
        .collect();
    out.insert("input".into(), Value::Array(input));
    Value::Object(out)
}

fn choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Forced(name) => json!({"type": "function", "name": name}),
        ToolChoice::Allowed { mode, tools } => json!({
            "type": "allowed_tools",
            "mode": if *mode == AllowedMode::Required { "required" } else { "auto" },
            "tools": tools.iter().map(|t| json!({"type": "function", "name": t})).collect::<Vec<_>>(),
        }),
    }
}

/// An earlier call as the model is told to write it.
fn call_text(call: &ToolCall) -> String {
    format!(
        "<tool_call>{{\"name\":{},\"arguments\":{}}}</tool_call>",
        js_string(&call.name),
        js_string(&js_stringify(&call.arguments))
    )
}

fn xml_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

pub fn decode(req: &ChatRequest, resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    decode_with(
        req,
        resp,
        ParserConfig::from_request(&responses_request(req)),
    )
}

/// `decode` with an explicit parser configuration (the CLI reads it from a request file).
pub fn decode_with(
    req: &ChatRequest,
    resp: &HttpResponse,
    config: ParserConfig,
) -> Result<Outcome, DecodeError> {
    let chat = openai_chat::decode(req, resp)?;
    let mut parser = Parser::new(config);
    if let Some(text) = &chat.text {
        parser.push(text);
    }
    Ok(merge(chat, parser.finish()))
}

/// The Chat outcome with its text replaced by the parse: calls appended, diagnostics added,
/// `finish` = `ToolCalls` when a call was parsed (`raw_finish` keeps the backend's word), except
/// after the output-token limit: `Length` wins over the calls, as in every format, for a call
/// may have been cut after the last one read (the parser keeps a cut call out of the calls).
pub fn merge(mut outcome: Outcome, parsed: Parsed) -> Outcome {
    if !parsed.tool_calls.is_empty() && outcome.finish != Finish::Length {
        outcome.finish = Finish::ToolCalls;
    }
    outcome.tool_calls.extend(parsed.tool_calls);
    outcome.text = parsed.text;
    outcome.diagnostics.extend(parsed.diagnostics);
    outcome
}

/// Push-based stream decoder: the Chat stream decoder, with its newly appended text fed to the
/// incremental parser after every push.
pub struct Stream {
    chat: openai_chat::Stream,
    /// Boxed: keeps `StreamDecoder`'s variants of similar size.
    parser: Box<Parser>,
    /// Bytes of `text_so_far()` already fed.
    fed: usize,
}

impl Stream {
    pub fn new(req: &ChatRequest) -> Stream {
        Stream::with_config(req, ParserConfig::from_request(&responses_request(req)))
    }

    pub fn with_config(req: &ChatRequest, config: ParserConfig) -> Stream {
        Stream {
            chat: openai_chat::Stream::new(req),
            parser: Box::new(Parser::new(config)),
            fed: 0,
        }
    }

    pub fn request(&self) -> ChatRequest {
        self.chat.request()
    }

    /// Text released so far by the parser (no tag prefixes, no call bodies).
    pub fn text_so_far(&self) -> &str {
        self.parser.text_so_far()
    }

    /// Released text and the calls parsed so far (each call whole: the parser releases a call
    /// only when its closing tag or the end of the text has been seen).
    pub fn progress(&self) -> crate::providers::Progress<'_> {
        let text = self.parser.text_so_far();
        crate::providers::Progress {
            text: if text.is_empty() {
                Vec::new()
            } else {
                vec![text]
            },
            calls: self
                .parser
                .calls_so_far()
                .iter()
                .map(crate::providers::CallProgress::whole)
                .collect(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        self.chat.push(bytes)?;
        let text = self.chat.text_so_far();
        if let Some(new) = text.get(self.fed..)
            && !new.is_empty()
        {
            self.parser.push(new);
            self.fed = text.len();
        }
        Ok(())
    }

    pub fn finish(self) -> Result<Outcome, DecodeError> {
        let Stream {
            chat,
            mut parser,
            fed,
            ..
        } = self;
        let outcome = chat.finish()?;
        // Whatever the Chat decoder only surfaced at the end.
        if let Some(rest) = outcome.text.as_deref().and_then(|t| t.get(fed..)) {
            parser.push(rest);
        }
        Ok(merge(outcome, parser.finish()))
    }
}
