//! The proxy as a loopback server (`loopback::Server`, loopback only, with the proxy's limits on
//! connections and bodies): each request read there, answered by `forward`, the answer written
//! back whole or streamed as the client reads, so that a client going away cancels upstream.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::answer::Answer;
use super::config::ProxyConfig;
use super::forward::{self, Shared};
use super::upstream::Upstream;
use crate::loopback::{self, BodyLimits, ConnLimits, Options, Reply, Request};
use crate::run::SupportCache;

/// A running proxy; it stops (listener and open connections) when dropped.
pub struct Proxy {
    server: loopback::Server,
}

impl Proxy {
    /// Starts on the config's loopback address. Must be called inside a tokio runtime.
    pub async fn start(config: ProxyConfig) -> io::Result<Proxy> {
        config
            .check_limits()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let options = options(&config);
        let listen = config.listen;
        let shared = Arc::new(Shared {
            upstream: Upstream::new(Duration::from_secs(config.upstream_timeout_secs)),
            cache: SupportCache::new(SupportCache::DEFAULT_TTL),
            reasoning: Arc::default(),
            conversations: Arc::default(),
            config,
        });
        let server =
            loopback::Server::start(listen, options, move |req| handle(req, Arc::clone(&shared)))
                .await?;
        Ok(Proxy { server })
    }

    /// The proxy's reading of one request whose body arrived whole, without a server: the
    /// route table, the limits on the text (UTF-8, nesting), the JSON, the client's own API's
    /// rejections and the request decoder. `Ok` when it would be routed on; else the status
    /// and body the client would get (fuzzed: `tests/fuzz`, target `proxy_request`).
    pub fn read_request(
        config: &ProxyConfig,
        method: &str,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<(), (u16, Vec<u8>)> {
        let Ok(method) = hyper::Method::from_bytes(method.as_bytes()) else {
            return Err((400, b"not an HTTP method".to_vec()));
        };
        let req = Request {
            method: method.to_string(),
            path: path.to_string(),
            query: loopback::parse_query(query.unwrap_or("")),
            headers: Default::default(),
            body: Ok(Bytes::copy_from_slice(body)),
        };
        match forward::decode(config, &req) {
            Ok(_) => Ok(()),
            Err(Answer::Full { status, body, .. }) => Err((status, body)),
            Err(Answer::Stream { .. }) => Err((500, Vec::new())),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }
}

/// The loopback server's options from the config: loopback only, its body and connection limits.
fn options(c: &ProxyConfig) -> Options {
    Options {
        loopback_only: true,
        body: BodyLimits {
            max_bytes: c.max_body_bytes,
            timeout: Some(Duration::from_millis(c.body_timeout_ms)),
        },
        connections: Some(ConnLimits {
            max_connections: c.max_connections,
            header_timeout: Duration::from_millis(c.header_timeout_ms),
            idle_timeout: Duration::from_millis(c.idle_timeout_ms),
        }),
    }
}

async fn handle(req: Request, shared: Arc<Shared>) -> Reply {
    match forward::answer(&shared, &req).await {
        Answer::Full {
            status,
            headers,
            body,
        } => Reply {
            status,
            headers,
            body: loopback::full(body),
        },
        // When the client goes away, hyper drops the body, and with it the upstream answer.
        Answer::Stream { headers, body } => Reply {
            status: 200,
            headers,
            body,
        },
    }
}
