//! The proxy as a loopback server (`loopback::Server`, loopback only, with the proxy's limits on
//! connections and bodies): each request read there, answered by `forward`, the answer written
//! back whole or streamed as the client reads, so that a client going away cancels upstream;
//! its workers, each a thread on the one port, sharing what the proxy keeps between rounds.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::answer::Answer;
use super::config::ProxyConfig;
use super::forward::{self, Shared};
use super::upstream::UpstreamClient;
use crate::loopback::{self, BodyLimits, ConnLimits, Options, Reply, Request};
use crate::run::SupportCache;

/// A running proxy; it stops (listeners and open connections, every worker) when dropped.
pub struct Proxy {
    server: loopback::Server,
    /// The other workers, each on a thread of its own: dropping a sender stops its worker.
    _workers: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Proxy {
    /// Starts on the config's loopback address. Must be called inside a tokio runtime.
    pub async fn start(config: ProxyConfig) -> io::Result<Proxy> {
        Proxy::start_workers(config, 1).await
    }

    /// Starts `workers` servers on the config's loopback address, as nginx's worker processes:
    /// this one on the current runtime, each other on a thread of its own with a one-thread
    /// runtime, all listening on one port (`SO_REUSEPORT`: the kernel spreads connections over
    /// them; Unix only) and sharing the proxy's state (the reasoning and Responses
    /// conversations kept, the hosted-search cache). A connection is served start to end on
    /// one thread, with its own pool of upstream connections. `max_connections` is split
    /// between the workers. Must be called inside a tokio runtime.
    pub async fn start_workers(config: ProxyConfig, workers: usize) -> io::Result<Proxy> {
        config
            .check_limits()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let workers = workers.max(1);
        let options = options(&config, workers);
        let state = State {
            timeout: Duration::from_secs(config.upstream_timeout_secs),
            cache: Arc::new(SupportCache::new(SupportCache::DEFAULT_TTL)),
            reasoning: Arc::default(),
            conversations: Arc::default(),
            config: Arc::new(config),
        };
        let listen = state.config.listen;
        if workers > 1 && listen.port() != 0 {
            // A port another socket holds is refused, as one worker's plain bind would be
            // (a shared listener of another process there would silently split the connections).
            drop(std::net::TcpListener::bind(listen)?);
        }
        let server = serve(listen, options, state.worker()).await?;
        // The others bind the port the first one got (the config may say port 0).
        let addr = server.addr();
        let mut stops = Vec::new();
        for _ in 1..workers {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let (ready, started) = tokio::sync::oneshot::channel::<io::Result<()>>();
            let state = state.clone();
            std::thread::Builder::new()
                .name("tooltape-proxy-worker".into())
                .spawn(move || worker(addr, options, state, ready, stopped))?;
            started
                .await
                .map_err(|_| io::Error::other("a proxy worker ended before it started"))??;
            stops.push(stop);
        }
        Ok(Proxy {
            server,
            _workers: stops,
        })
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

/// What every worker shares, and what each worker is made from.
#[derive(Clone)]
struct State {
    config: Arc<ProxyConfig>,
    timeout: Duration,
    cache: Arc<SupportCache>,
    reasoning: Arc<super::reasoning::Reasoning>,
    conversations: Arc<super::conversations::Conversations>,
}

impl State {
    /// One worker's view: the shared state, and an upstream client of its own (its pooled
    /// connections are driven on its thread).
    fn worker(&self) -> Arc<Shared> {
        Arc::new(Shared {
            config: Arc::clone(&self.config),
            upstream: UpstreamClient::new(self.timeout),
            cache: Arc::clone(&self.cache),
            reasoning: Arc::clone(&self.reasoning),
            conversations: Arc::clone(&self.conversations),
        })
    }
}

async fn serve(
    addr: std::net::SocketAddr,
    options: Options,
    shared: Arc<Shared>,
) -> io::Result<loopback::Server> {
    loopback::Server::start(addr, options, move |req| handle(req, Arc::clone(&shared))).await
}

/// One more worker, on the calling thread, until `stopped` fires or its sender is dropped.
fn worker(
    addr: std::net::SocketAddr,
    options: Options,
    state: State,
    ready: tokio::sync::oneshot::Sender<io::Result<()>>,
    stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    rt.block_on(async move {
        match serve(addr, options, state.worker()).await {
            Ok(server) => {
                let _ = ready.send(Ok(()));
                let _ = stopped.await;
                drop(server);
            }
            Err(e) => {
                let _ = ready.send(Err(e));
            }
        }
    });
}

/// The loopback server's options from the config: loopback only, its body and connection
/// limits (the connection cap split between `workers`, which then share one port).
fn options(c: &ProxyConfig, workers: usize) -> Options {
    Options {
        loopback_only: true,
        body: BodyLimits {
            max_bytes: c.max_body_bytes,
            timeout: Some(Duration::from_millis(c.body_timeout_ms)),
        },
        connections: Some(ConnLimits {
            max_connections: c.max_connections.div_ceil(workers),
            header_timeout: Duration::from_millis(c.header_timeout_ms),
            idle_timeout: Duration::from_millis(c.idle_timeout_ms),
        }),
        reuse_port: workers > 1,
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
