//! The MCP client side of `tooltape mcp`: start or reach a server (stdio child process or
//! Streamable HTTP) with the official Rust SDK (`rmcp`), `initialize`, then `tools/list` page by
//! page. What a server sends is untrusted: every wait has a deadline, pages and tools are
//! counted, a tool's schema has a size cap, the server's stderr is kept as a bounded tail.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServiceExt, transport::ConfigureCommandExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::model::Tool;

/// Where the MCP server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// A program speaking MCP on its standard input and output: the command and its arguments.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint.
    Url(String),
}

/// What `tools/list` may cost before the listing is abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The whole exchange, start to last page.
    pub timeout: Duration,
    /// `tools/list` pages followed.
    pub max_pages: usize,
    /// Tools kept in all.
    pub max_tools: usize,
    /// A tool's input schema, serialized, in bytes; a larger one is listed with an empty
    /// schema and refused for every target.
    pub max_schema_bytes: usize,
    /// Bytes of the server's stderr kept (its end).
    pub stderr_tail: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(60),
            max_pages: 100,
            max_tools: 2_000,
            max_schema_bytes: 1 << 20,
            stderr_tail: 4_096,
        }
    }
}

/// One tool as the server listed it.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedTool {
    /// The tool in the neutral model: name, description, `inputSchema` as parameters.
    pub tool: Tool,
    /// Set when the schema was over [`Limits::max_schema_bytes`]: its size.
    pub oversized_schema: Option<usize>,
}

/// A server's name and version, as its `serverInfo` gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// What a server answered: its name and version and its tools in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Listing {
    pub server: ServerInfo,
    pub tools: Vec<ListedTool>,
    /// Set when a limit cut the listing short (which one).
    pub truncated: Option<String>,
}

/// The server did not start or answer: why, and the end of its stderr (stdio servers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectError {
    pub message: String,
    pub stderr_tail: String,
}

/// Connects to `server`, initializes and lists every tool within `limits`. Blocks on the
/// process-wide runtime.
pub fn list_tools(server: &Server, limits: Limits) -> Result<Listing, ConnectError> {
    crate::runtime().block_on(list_tools_async(server, limits))
}

async fn list_tools_async(server: &Server, limits: Limits) -> Result<Listing, ConnectError> {
    let tail = Arc::new(Mutex::new(Vec::new()));
    let fail = |message: String, tail: &Arc<Mutex<Vec<u8>>>| ConnectError {
        message,
        stderr_tail: tail_text(tail),
    };
    let work = async {
        let client = match server {
            Server::Command(argv) => start_child(argv, &tail, limits.stderr_tail).await?,
            Server::Url(url) => {
                crate::tls::install_provider();
                let transport = StreamableHttpClientTransport::from_uri(url.as_str());
                ().serve(transport)
                    .await
                    .map_err(|e| format!("MCP initialize with {url} failed: {e}"))?
            }
        };
        let listing = pages(&client, limits).await;
        let _ = client.cancel().await;
        listing
    };
    let result = match tokio::time::timeout(limits.timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the MCP server did not answer within {} s",
            limits.timeout.as_secs()
        )),
    };
    // Give the stderr reader a moment to take what the server wrote before it died.
    if result.is_err() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    result.map_err(|m| fail(m, &tail))
}

async fn start_child(
    argv: &[String],
    tail: &Arc<Mutex<Vec<u8>>>,
    keep: usize,
) -> Result<RunningService<RoleClient, ()>, String> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| "no MCP server command given".to_string())?;
    let command = tokio::process::Command::new(program).configure(|c| {
        c.args(args);
    });
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the MCP server `{program}`: {e}"))?;
    if let Some(mut stderr) = stderr {
        let tail = Arc::clone(tail);
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                keep_tail(&tail, &buf[..n], keep);
            }
        });
    }
    ().serve(transport)
        .await
        .map_err(|e| format!("MCP initialize with `{program}` failed: {e}"))
}

/// Appends `bytes` to the tail, keeping its last `keep` bytes.
fn keep_tail(tail: &Mutex<Vec<u8>>, bytes: &[u8], keep: usize) {
    let mut t = tail
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    t.extend_from_slice(bytes);
    if t.len() > keep {
        let cut = t.len() - keep;
        t.drain(..cut);
    }
}

fn tail_text(tail: &Mutex<Vec<u8>>) -> String {
    let t = tail
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    String::from_utf8_lossy(&t).into_owned()
}

pub(super) async fn pages(
    client: &RunningService<RoleClient, ()>,
    limits: Limits,
) -> Result<Listing, String> {
    let info = client.peer_info();
    let server = info
        .as_ref()
        .and_then(|i| i.server_info.as_ref())
        .map(|s| ServerInfo {
            name: s.name.clone(),
            version: s.version.clone(),
        })
        .unwrap_or_default();
    let mut tools = Vec::new();
    let mut cursor = None;
    let mut truncated = None;
    for page in 0.. {
        if page == limits.max_pages {
            truncated = Some(format!(
                "stopped after {} tools/list pages",
                limits.max_pages
            ));
            break;
        }
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let result = client
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        for t in result.tools {
            if tools.len() == limits.max_tools {
                truncated = Some(format!("stopped after {} tools", limits.max_tools));
                break;
            }
            tools.push(listed(&t, limits.max_schema_bytes));
        }
        cursor = result.next_cursor;
        if cursor.is_none() || truncated.is_some() {
            break;
        }
    }
    Ok(Listing {
        server,
        tools,
        truncated,
    })
}

/// Reads one `tools/list` result (the JSON-RPC `result` object, as rmcp deserializes it) into
/// listed tools, at most `limits.max_tools`, and its `nextCursor`: what [`list_tools`] does with
/// each page, for a page that did not come over a transport (the fuzz property, tests).
pub fn read_tools_page(
    bytes: &[u8],
    limits: Limits,
) -> Result<(Vec<ListedTool>, Option<String>), String> {
    let page: rmcp::model::ListToolsResult =
        serde_json::from_slice(bytes).map_err(|e| format!("not a tools/list result: {e}"))?;
    let tools = page
        .tools
        .iter()
        .take(limits.max_tools)
        .map(|t| listed(t, limits.max_schema_bytes))
        .collect();
    Ok((tools, page.next_cursor))
}

/// The neutral tool of an MCP tool; a schema over `max_schema_bytes` is replaced by `{}`.
fn listed(t: &rmcp::model::Tool, max_schema_bytes: usize) -> ListedTool {
    let schema = Value::Object((*t.input_schema).clone());
    let size = serde_json::to_vec(&schema).map_or(usize::MAX, |b| b.len());
    let oversized = (size > max_schema_bytes).then_some(size);
    ListedTool {
        tool: Tool::function(
            t.name.to_string(),
            t.description.as_ref().map(ToString::to_string),
            if oversized.is_some() {
                serde_json::json!({})
            } else {
                schema
            },
        ),
        oversized_schema: oversized,
    }
}
