//! A running loopback server: bound (refusing an address that is not loopback when asked to),
//! its base URL, each request read and handed to the handler, its reply written back, and
//! shutdown (listener and open connections) when dropped.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::body::Incoming;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::accept::{ConnLimits, accept_loop};
use super::reply::{Reply, to_hyper};
use super::request::{BodyLimits, Request, read};

/// How a server binds, reads and guards its connections.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Options {
    /// Refuse to start on an address that is not loopback.
    pub loopback_only: bool,
    /// What of a request body is read (see [`BodyLimits`]).
    pub body: BodyLimits,
    /// Guard each connection (the proxy's limits); `None`: no cap, no timeouts.
    pub connections: Option<ConnLimits>,
    /// Bind with `SO_REUSEPORT`: other servers of this process (the proxy's workers) listen on
    /// the same port and the kernel spreads new connections over them.
    pub reuse_port: bool,
}

/// A running server; it stops (listener and open connections) when dropped.
pub(crate) struct Server {
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Binds `addr` (port `0`: any free port) and serves every request with `handle`, the body
    /// already read (a body not read whole: the reply closes the connection). Must be called
    /// inside a tokio runtime.
    pub(crate) async fn start<H, Fut>(
        addr: SocketAddr,
        options: Options,
        handle: H,
    ) -> io::Result<Server>
    where
        H: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        if options.loopback_only && !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{addr} is not a loopback address: this server only listens on loopback"),
            ));
        }
        let listener = if options.reuse_port {
            bind_shared(addr)?
        } else {
            TcpListener::bind(addr).await?
        };
        let addr = listener.local_addr()?;
        let handle = Arc::new(handle);
        let limits = options.body;
        let serve = move |req: hyper::Request<Incoming>| {
            let handle = Arc::clone(&handle);
            async move {
                let req = read(req, limits).await;
                let unread = req.body.is_err();
                let mut reply = handle(req).await;
                if unread {
                    reply.headers.push(("connection".into(), "close".into()));
                }
                Ok::<_, Infallible>(to_hyper(reply))
            }
        };
        let (shutdown, rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, rx, options.connections, serve));
        Ok(Server {
            addr,
            shutdown,
            task,
        })
    }

    /// The address it listens on (the port it got when asked for port `0`).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR:PORT`, without a trailing slash.
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// A listener on `addr` that other sockets with `SO_REUSEPORT` may share.
#[cfg(unix)]
fn bind_shared(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

#[cfg(not(unix))]
fn bind_shared(_addr: SocketAddr) -> io::Result<TcpListener> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "one port shared by several workers needs SO_REUSEPORT (Unix)",
    ))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.task.abort();
    }
}
