//! The proxy's client for plain-HTTP upstreams (a local model server, a sidecar, another gateway
//! on the same host): HTTP/1.1 over pooled keep-alive connections, straight on hyper's connection
//! API, without reqwest's layers (redirect policy, proxy lookup, URL parsing, the legacy pool's
//! bookkeeping), which cost more than the whole rest of a loopback hop (docs/performance.md).
//! HTTPS upstreams keep reqwest: TLS, the platform's roots and the `HTTPS_PROXY` variables.
//! A connection is driven by the task that uses it (hyper's `Connection` polled beside the
//! request and its answer, never a task of its own): an answer's chunks already read are decoded
//! as the relay asks for them, with no hand-over between tasks.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use http_body_util::Full;
use hyper::body::{Body, Incoming};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::time::Sleep;

/// Idle connections kept per upstream (host and port); more are closed when answered.
const MAX_IDLE: usize = 32;

type Sender = SendRequest<Full<Bytes>>;

/// hyper's side of one connection: it writes requests and reads answers when polled.
type Driver = Pin<Box<http1::Connection<TokioIo<tokio::net::TcpStream>, Full<Bytes>>>>;

/// One keep-alive connection: its request handle and its driver, which is polled only while a
/// request is on it (an idle one is checked before it is used again).
struct Conn {
    sender: Sender,
    driver: Option<Driver>,
}

impl Conn {
    /// Lets hyper do what it can on the connection (write the request, read and decode the
    /// answer); the driver is gone once the connection has ended.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(d) = &mut self.driver
            && d.as_mut().poll(cx).is_ready()
        {
            self.driver = None;
        }
    }

    /// Still open: the driver has not ended (an idle connection the upstream closed ends as
    /// soon as it is polled, reading the end of the stream).
    fn open(&mut self) -> bool {
        self.drive(&mut Context::from_waker(std::task::Waker::noop()));
        self.driver.is_some() && !self.sender.is_closed()
    }
}

/// Keep-alive connections to plain-HTTP upstreams, by `host:port`.
#[derive(Default)]
pub(super) struct Pool {
    idle: Mutex<HashMap<String, Vec<Conn>>>,
}

/// An upstream answer: its status and its body, read within the request's deadline; the
/// connection goes back to the pool when the body has been read to its end.
pub(super) struct Answered {
    pub status: u16,
    body: Incoming,
    deadline: Pin<Box<Sleep>>,
    /// The connection, driven while the body is read.
    conn: Option<Conn>,
    /// Where the connection goes back when the body has been read to its end.
    back: Option<(Arc<Pool>, String)>,
}

impl Pool {
    /// Sends a POST of `body` to `url` (`http://host[:port]/path?query`) with `headers`; the
    /// whole exchange, answer body included, within `timeout` (as reqwest's total timeout).
    pub(super) async fn post(
        self: &Arc<Pool>,
        url: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Answered, String> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| format!("bad upstream URL {url}: {e}"))?;
        let Some(authority) = uri.authority().map(|a| a.as_str().to_string()) else {
            return Err(format!("bad upstream URL {url}: no host"));
        };
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut req = hyper::Request::post(path).header(hyper::header::HOST, authority.as_str());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("cannot build the upstream request: {e}"))?;
        let deadline = Box::pin(tokio::time::sleep(timeout));
        let exchange = async {
            let mut conn = match self.take(&authority) {
                Some(c) => c,
                None => connect(&authority).await?,
            };
            std::future::poll_fn(|cx| {
                conn.drive(cx);
                conn.sender.poll_ready(cx)
            })
            .await
            .map_err(|e| e.to_string())?;
            let mut sent = std::pin::pin!(conn.sender.send_request(req));
            let resp = std::future::poll_fn(|cx| {
                conn.drive(cx);
                sent.as_mut().poll(cx)
            })
            .await
            .map_err(|e| e.to_string())?;
            Ok::<_, String>((conn, resp))
        };
        let (conn, resp) = tokio::time::timeout_at(deadline.deadline(), exchange)
            .await
            .map_err(|_| "operation timed out".to_string())??;
        Ok(Answered {
            status: resp.status().as_u16(),
            body: resp.into_body(),
            deadline,
            conn: Some(conn),
            back: Some((Arc::clone(self), authority)),
        })
    }

    /// An idle connection to `authority` that is still open.
    fn take(&self, authority: &str) -> Option<Conn> {
        let mut idle = self.idle.lock().ok()?;
        let list = idle.get_mut(authority)?;
        while let Some(mut c) = list.pop() {
            if c.open() {
                return Some(c);
            }
        }
        None
    }

    fn put(&self, authority: String, mut conn: Conn) {
        if !conn.open() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            let list = idle.entry(authority).or_default();
            if list.len() < MAX_IDLE {
                list.push(conn);
            }
        }
    }
}

/// A new connection to `authority`, driven by whoever sends on it.
async fn connect(authority: &str) -> Result<Conn, String> {
    let tcp = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let (sender, driver) = http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| e.to_string())?;
    Ok(Conn {
        sender,
        driver: Some(Box::pin(driver)),
    })
}

impl Answered {
    /// The next piece of the body (`None` at its end, when the connection goes back to the
    /// pool); an error when the body broke off or the deadline passed.
    pub(super) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, String>>> {
        loop {
            if self.deadline.as_mut().poll(cx).is_ready() {
                self.back = None;
                return Poll::Ready(Some(Err("operation timed out".into())));
            }
            // The body asks for its next chunk first (hyper's connection decodes one only when
            // asked), then the connection reads and decodes it.
            let frame = match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Ready(f) => f,
                Poll::Pending => {
                    if let Some(c) = &mut self.conn {
                        c.drive(cx);
                    }
                    match Pin::new(&mut self.body).poll_frame(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(f) => f,
                    }
                }
            };
            match frame {
                None => {
                    if let (Some((pool, authority)), Some(conn)) =
                        (self.back.take(), self.conn.take())
                    {
                        pool.put(authority, conn);
                    }
                    return Poll::Ready(None);
                }
                Some(Err(e)) => {
                    self.back = None;
                    return Poll::Ready(Some(Err(e.to_string())));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => return Poll::Ready(Some(Ok(data))),
                    Err(_) => continue, // trailers: nothing a JSON or SSE body carries
                },
            }
        }
    }
}

impl Stream for Answered {
    type Item = Result<Bytes, String>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_chunk(cx)
    }
}
