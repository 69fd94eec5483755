//! Tool results given as parts (text and images): the neutral [`ResultPart`]s in each API's
//! documented form, read back from it, and the parts a target cannot express (encoding fails
//! closed). Rules and sources: docs/wire-formats.md, "Tool results that are not plain text".

use serde_json::{Value, json};

use crate::model::{ChatRequest, DecodeError, EncodeError, Message, Provider, ResultPart};
use crate::pointer::push;
use crate::providers::decoded::{Extra, ExtraKind, Fields, type_error};

/// The text parts of a parts result joined: its `content`, what a text-only reader sees.
pub fn joined_text(parts: &[ResultPart]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            ResultPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why `provider` cannot carry `part` in a tool result, or `None` when it can.
pub(crate) fn inexpressible(provider: Provider, part: &ResultPart) -> Option<&'static str> {
    match (provider, part) {
        (_, ResultPart::Text { .. }) => None,
        (Provider::OpenaiChat, _) => {
            Some("a Chat `role: tool` message takes a string or text parts only")
        }
        (Provider::TextProtocol, _) => Some("the text protocol sends tool results as text only"),
        (Provider::Gemini, ResultPart::ImageUrl { .. }) => Some(
            "Gemini's functionResponse.parts take inline data only (fileData is not supported in the Gemini API)",
        ),
        (Provider::Gemini | Provider::Anthropic | Provider::OpenaiResponses, _) => None,
    }
}

/// Fails closed on a tool result part `provider` cannot express: never dropped, never turned
/// into text.
pub(crate) fn check(provider: Provider, req: &ChatRequest) -> Result<(), EncodeError> {
    for m in &req.messages {
        let Message::Tool { call_id, parts, .. } = m else {
            continue;
        };
        for part in parts {
            if let Some(why) = inexpressible(provider, part) {
                return Err(EncodeError::new(
                    "RESULT_PART_NOT_SUPPORTED",
                    format!(
                        "the tool result for `{call_id}` carries {}: {why}",
                        result_part_kind(part)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// How a part is named in errors and findings.
pub(crate) fn result_part_kind(part: &ResultPart) -> &'static str {
    match part {
        ResultPart::Text { .. } => "a text part",
        ResultPart::Image { .. } => "an image (base64)",
        ResultPart::ImageUrl { .. } => "an image URL",
    }
}

/// A result's content in an API's form: the string `content` when the result is plain, else
/// the array of `parts` each written by `write` (`None`: a part [`check`] refused first).
fn content_value(
    content: &str,
    parts: &[ResultPart],
    write: impl Fn(&ResultPart) -> Option<Value>,
) -> Value {
    if parts.is_empty() {
        return json!(content);
    }
    Value::Array(parts.iter().filter_map(write).collect())
}

/// Anthropic `tool_result.content`: the string, or `text` / `image` blocks.
pub(crate) fn anthropic(content: &str, parts: &[ResultPart]) -> Value {
    content_value(content, parts, |p| {
        Some(match p {
            ResultPart::Text { text } => json!({"type": "text", "text": text}),
            ResultPart::Image { media_type, data } => json!({"type": "image", "source": {
                "type": "base64", "media_type": media_type, "data": data}}),
            ResultPart::ImageUrl { url } => {
                json!({"type": "image", "source": {"type": "url", "url": url}})
            }
        })
    })
}

/// Responses `function_call_output.output`: the string, or `input_text` / `input_image` parts
/// (base64 as a `data:` URL).
pub(crate) fn responses(content: &str, parts: &[ResultPart]) -> Value {
    content_value(content, parts, |p| {
        Some(match p {
            ResultPart::Text { text } => json!({"type": "input_text", "text": text}),
            ResultPart::Image { media_type, data } => json!({"type": "input_image",
                "image_url": format!("data:{media_type};base64,{data}")}),
            ResultPart::ImageUrl { url } => json!({"type": "input_image", "image_url": url}),
        })
    })
}

/// Chat `role: tool` content: the string, or `text` parts ([`check`] refused any image first).
pub(crate) fn chat(content: &str, parts: &[ResultPart]) -> Value {
    content_value(content, parts, |p| match p {
        ResultPart::Text { text } => Some(json!({"type": "text", "text": text})),
        _ => None,
    })
}

/// Gemini `functionResponse.parts`: the images as `inlineData` (the text goes in `response`).
pub(crate) fn gemini(parts: &[ResultPart]) -> Vec<Value> {
    parts
        .iter()
        .filter_map(|p| match p {
            ResultPart::Image { media_type, data } => {
                Some(json!({"inlineData": {"mimeType": media_type, "data": data}}))
            }
            _ => None,
        })
        .collect()
}

/// The wire format a tool result's content is read in.
#[derive(Clone, Copy)]
pub(crate) enum Api {
    Chat,
    Responses,
    Anthropic,
}

/// A tool result's content read back: `(content, parts)`; a string is a plain result, an
/// array its parts (parts of other types kept as not-carried extras); `null` is no text.
pub(crate) fn read(
    api: Api,
    v: Option<&Value>,
    ptr: &str,
    extras: &mut Vec<Extra>,
) -> Result<(String, Vec<ResultPart>), DecodeError> {
    let items = match v {
        None | Some(Value::Null) => return Ok((String::new(), Vec::new())),
        Some(Value::String(s)) => return Ok((s.clone(), Vec::new())),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(type_error(ptr, "a string or an array of parts", other)),
    };
    let mut parts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let pp = push(ptr, &i.to_string());
        let mut f = Fields::of(item, &pp, "a content part")?;
        let ty = f.str("type")?.unwrap_or("text");
        let part = match (api, ty) {
            (Api::Chat | Api::Anthropic, "text")
            | (Api::Responses, "input_text" | "output_text" | "text") => Some(ResultPart::Text {
                text: f.req_str("text", "a text part carries `text`")?.to_string(),
            }),
            (Api::Anthropic, "image") => anthropic_image(&mut f)?,
            (Api::Responses, "input_image") => f.str("image_url")?.map(from_url),
            _ => None,
        };
        match part {
            Some(p) => {
                parts.push(p);
                f.keep(
                    &[
                        "annotations",
                        "logprobs",
                        "cache_control",
                        "citations",
                        "detail",
                    ],
                    ExtraKind::NotCarried,
                    extras,
                );
                f.finish(extras);
            }
            None => extras.push(Extra {
                pointer: pp,
                kind: ExtraKind::NotCarried,
                value: item.clone(),
            }),
        }
    }
    Ok((joined_text(&parts), parts))
}

/// An Anthropic `image` block's source: base64 or a URL (`None`: another source, a file).
fn anthropic_image(f: &mut Fields<'_>) -> Result<Option<ResultPart>, DecodeError> {
    let ptr = f.at("source");
    let Some(source) = f.get("source") else {
        return Ok(None);
    };
    let mut s = Fields::of(source, &ptr, "an image source")?;
    Ok(match s.str("type")? {
        Some("base64") => Some(ResultPart::Image {
            media_type: s
                .req_str("media_type", "a base64 image names its media_type")?
                .into(),
            data: s.req_str("data", "a base64 image carries `data`")?.into(),
        }),
        Some("url") => Some(ResultPart::ImageUrl {
            url: s.req_str("url", "a URL image carries `url`")?.into(),
        }),
        _ => None,
    })
}

/// A Responses `image_url`: a base64 `data:` URL is an image's data, any other a URL.
pub(crate) fn from_url(url: &str) -> ResultPart {
    url.strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
        .map(|(media_type, data)| ResultPart::Image {
            media_type: media_type.to_string(),
            data: data.to_string(),
        })
        .unwrap_or_else(|| ResultPart::ImageUrl {
            url: url.to_string(),
        })
}

/// Gemini `functionResponse.parts` read back: the `inlineData` images (anything else kept as a
/// not-carried extra).
pub(crate) fn read_gemini(
    items: &[Value],
    ptr: &str,
    extras: &mut Vec<Extra>,
) -> Result<Vec<ResultPart>, DecodeError> {
    let mut parts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let pp = push(ptr, &i.to_string());
        let mut f = Fields::of(item, &pp, "a function response part")?;
        let dp = f.at("inlineData");
        match f.get_any(&["inlineData", "inline_data"]) {
            Some((_, blob)) => {
                let mut b = Fields::of(blob, &dp, "inline data")?;
                let media_type = match b.str("mimeType")? {
                    Some(m) => m,
                    None => b.req_str("mime_type", "inline data names its mimeType")?,
                };
                parts.push(ResultPart::Image {
                    media_type: media_type.to_string(),
                    data: b.req_str("data", "inline data carries `data`")?.to_string(),
                });
                b.keep(&["displayName"], ExtraKind::NotCarried, extras);
                b.finish(extras);
                f.finish(extras);
            }
            None => extras.push(Extra {
                pointer: pp,
                kind: ExtraKind::NotCarried,
                value: item.clone(),
            }),
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests;
