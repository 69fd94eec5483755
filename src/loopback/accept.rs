//! The one accept loop of the loopback servers: each connection served by the handler until the
//! shutdown signal, which also ends the connections still open. With [`ConnLimits`] (the proxy's)
//! a connection is guarded against hostile clients: a cap on open connections (one over it is
//! answered 503 and closed at once), a header timeout closing a connection that has waited that
//! long for a request's head, and an idle timeout closing a connection that stays silent with no
//! request in flight. Both timeouts are kept by one watchdog per connection, not by a timer armed
//! per request (hyper's header read timeout arms one per request, and each costs the runtime a
//! wake-up: docs/performance.md).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use super::reply::Body;

/// What the accept loop enforces per connection when asked to (the proxy's limits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnLimits {
    /// Open connections at most; one more is answered 503 and closed.
    pub max_connections: usize,
    /// Time a connection has to send a request's whole head, from when it waits for one (it
    /// opened, or its last answer ended); checked within a quarter of it.
    pub header_timeout: Duration,
    /// Time a connection may stay silent with no request in flight; then it is closed.
    pub idle_timeout: Duration,
}

/// The answer to a connection over `max_connections`.
const BUSY: &str = "the server has max_connections open; try again when one closes\n";

/// Accepts connections until `shutdown` changes; an accept error (out of descriptors and the
/// like) backs off instead of spinning. `limits`: guard each connection (see the module doc).
pub(super) async fn accept_loop<H, Fut>(
    listener: TcpListener,
    mut shutdown: watch::Receiver<bool>,
    limits: Option<ConnLimits>,
    handle: H,
) where
    H: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Body>, Infallible>> + Send + 'static,
{
    let permits = limits.map(|l| Arc::new(Semaphore::new(l.max_connections)));
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                // Small writes go out at once: without it, an answer written in pieces waits for
                // the peer's delayed ACK (~40 ms on Linux), time a timing measurement would
                // charge to whoever reads it.
                let _ = stream.set_nodelay(true);
                let permit = match &permits {
                    None => None,
                    Some(p) => match Arc::clone(p).try_acquire_owned() {
                        Ok(permit) => Some(permit),
                        Err(_) => {
                            tokio::spawn(refuse(stream));
                            continue;
                        }
                    },
                };
                let handle = handle.clone();
                let shutdown = shutdown.clone();
                tokio::spawn(async move {
                    match limits {
                        None => serve(stream, handle, shutdown).await,
                        Some(limits) => serve_guarded(stream, handle, shutdown, limits).await,
                    }
                    drop(permit);
                });
            }
        }
    }
}

/// One connection over the cap: a 503, then closed (within a second even if it never reads).
async fn refuse(mut stream: TcpStream) {
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BUSY}",
        BUSY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(head.as_bytes())).await;
}

/// One connection with no limits, until it ends or the server shuts down.
async fn serve<H, Fut>(stream: TcpStream, handle: H, mut shutdown: watch::Receiver<bool>)
where
    H: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Body>, Infallible>> + Send + 'static,
{
    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service_fn(handle));
    tokio::select! {
        _ = conn => {}
        _ = shutdown.changed() => {}
    }
}

/// When a connection last read or wrote a byte, how many of its requests are in flight (a
/// request is in flight from its headers until its response body is dropped), and since when it
/// has waited for a request's head (`NO_HEAD` while a request is in flight).
struct Activity {
    start: Instant,
    last_ms: AtomicU64,
    in_flight: AtomicUsize,
    head_since_ms: AtomicU64,
}

/// `Activity::head_since_ms` while the connection is not waiting for a head.
const NO_HEAD: u64 = u64::MAX;

impl Activity {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NO_HEAD - 1)
    }

    fn touch(&self) {
        self.last_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// How long the connection has waited for a request's head, if it is waiting for one.
    fn waiting_for_head(&self) -> Option<Duration> {
        let since = self.head_since_ms.load(Ordering::Relaxed);
        (since != NO_HEAD).then(|| Duration::from_millis(self.now_ms().saturating_sub(since)))
    }

    fn silent_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}

/// Decrements the in-flight count when dropped (carried by the response body).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn new(a: &Arc<Activity>) -> InFlight {
        a.in_flight.fetch_add(1, Ordering::Relaxed);
        a.head_since_ms.store(NO_HEAD, Ordering::Relaxed);
        InFlight(Arc::clone(a))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0
                .head_since_ms
                .store(self.0.now_ms(), Ordering::Relaxed);
        }
        self.0.touch();
    }
}

/// One connection under `limits`: closed once it has waited the header timeout for a request's
/// head, or been silent for the idle timeout with no request in flight.
async fn serve_guarded<H, Fut>(
    stream: TcpStream,
    handle: H,
    mut shutdown: watch::Receiver<bool>,
    limits: ConnLimits,
) where
    H: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Body>, Infallible>> + Send + 'static,
{
    let activity = Arc::new(Activity {
        start: Instant::now(),
        last_ms: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        head_since_ms: AtomicU64::new(0),
    });
    let watched = Arc::clone(&activity);
    let service = service_fn(move |req| {
        let guard = InFlight::new(&watched);
        let answer = handle(req);
        async move {
            let resp = answer.await?;
            // The guard lives as long as the body: a streamed answer stays in flight.
            Ok::<_, Infallible>(resp.map(|inner| {
                Tracked {
                    inner,
                    _guard: guard,
                }
                .boxed_unsync()
            }))
        }
    });
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: Arc::clone(&activity),
    });
    let conn = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::pin!(conn);
    // A head may start being waited for while the watchdog sleeps: it looks at least this often.
    let tick = (limits.header_timeout / 4).max(Duration::from_millis(1));
    loop {
        let idle_left = limits.idle_timeout.saturating_sub(activity.silent_for());
        let head_left = match activity.waiting_for_head() {
            Some(waited) => limits.header_timeout.saturating_sub(waited),
            None => tick,
        };
        let wait = idle_left.min(head_left).min(tick);
        tokio::select! {
            _ = &mut conn => return,
            _ = shutdown.changed() => return,
            () = tokio::time::sleep(wait) => {
                if activity
                    .waiting_for_head()
                    .is_some_and(|waited| waited >= limits.header_timeout)
                {
                    return; // no head in time: dropping the connection closes it
                }
                let idle = activity.in_flight.load(Ordering::Relaxed) == 0;
                if idle && activity.silent_for() >= limits.idle_timeout {
                    return; // dropping the connection closes it
                }
                if !idle {
                    activity.touch(); // a request in flight: look again a whole timeout later
                }
            }
        }
    }
}

/// A response body holding its request's in-flight guard; its size hint is the inner body's (a
/// whole answer keeps its `content-length`).
struct Tracked {
    inner: Body,
    _guard: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = bytes::Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The client's socket, noting each byte read or written in `activity`.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
