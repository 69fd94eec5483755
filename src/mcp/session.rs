//! An MCP client session over Streamable HTTP that stays open across calls (the reference
//! driver's MCP client, client mode's MCP routes): connect and initialize, list the tools, call
//! one, and read a `CallToolResult` into the neutral tool result a library sends back.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;

use super::connect::{Limits, pages};
use crate::model::{Message, ResultPart, Tool};

/// A connected server.
pub struct Session {
    client: RunningService<RoleClient, ()>,
}

impl Session {
    /// Connects to `url` and initializes.
    pub async fn connect(url: &str) -> Result<Session, String> {
        crate::tls::install_provider();
        let transport = StreamableHttpClientTransport::from_uri(url);
        let client = ()
            .serve(transport)
            .await
            .map_err(|e| format!("MCP initialize with {url} failed: {e}"))?;
        Ok(Session { client })
    }

    /// Every tool the server lists, in the neutral model.
    pub async fn tools(&self) -> Result<Vec<Tool>, String> {
        let listing = pages(&self.client, Limits::default()).await?;
        Ok(listing.tools.into_iter().map(|t| t.tool).collect())
    }

    /// Calls `name` with `arguments` (an object; anything else is sent as no arguments): the
    /// `CallToolResult` as the server sent it.
    pub async fn call(&self, name: &str, arguments: &Value) -> Result<Value, String> {
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = arguments.as_object().cloned();
        let result = (self.client.call_tool(params).await)
            .map_err(|e| format!("tools/call {name} failed: {e}"))?;
        serde_json::to_value(&result).map_err(|e| e.to_string())
    }

    /// Ends the session.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }
}

/// The tool result a faithful library sends back for a `CallToolResult`: its text blocks joined
/// (the `structuredContent` serialized when it has none), its images as parts beside the text,
/// and its error flag.
pub fn result_message(call_id: &str, name: &str, result: &Value) -> Message {
    let blocks = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    let mut parts = Vec::new();
    for b in blocks {
        match b["type"].as_str() {
            Some("text") => parts.push(ResultPart::Text {
                text: b["text"].as_str().unwrap_or_default().to_string(),
            }),
            Some("image") => parts.push(ResultPart::Image {
                media_type: b["mimeType"].as_str().unwrap_or_default().to_string(),
                data: b["data"].as_str().unwrap_or_default().to_string(),
            }),
            _ => {}
        }
    }
    let images = parts.iter().any(|p| matches!(p, ResultPart::Image { .. }));
    let mut content = crate::providers::joined_text(&parts);
    if content.is_empty()
        && !images
        && let Some(s) = result.get("structuredContent")
    {
        content = s.to_string();
    }
    Message::Tool {
        call_id: call_id.to_string(),
        name: name.to_string(),
        content,
        parts: if images { parts } else { Vec::new() },
        is_error: result["isError"].as_bool().unwrap_or(false),
    }
}
