//! The one HTTP/1 accept loop of the project's loopback servers (the simulator, the gateway
//! mode's recording upstream, `tooltape proxy`): each connection served by `handle` until the
//! shutdown signal, which also ends the connections still open.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Accepts connections until `shutdown` changes; an accept error (out of descriptors and the
/// like) backs off instead of spinning.
pub(crate) async fn accept_loop<H, Fut, B>(
    listener: TcpListener,
    mut shutdown: watch::Receiver<bool>,
    handle: H,
) where
    H: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<B>, Infallible>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
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
                let handle = handle.clone();
                let mut shutdown = shutdown.clone();
                tokio::spawn(async move {
                    let conn = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(handle));
                    tokio::select! {
                        _ = conn => {}
                        _ = shutdown.changed() => {}
                    }
                });
            }
        }
    }
}
