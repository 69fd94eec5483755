//! What a loopback server's handler answers: a status, headers and a body (whole, from a
//! channel, or chunks paced and optionally cut), and its hyper response, a bare 500 when a header
//! cannot be written.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use tokio::sync::mpsc;

/// A response body: whole or streamed.
pub(crate) type Body = BoxBody<Bytes, io::Error>;

/// One answer of a handler.
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

/// A whole body.
pub(crate) fn full(bytes: Vec<u8>) -> Body {
    Full::new(Bytes::from(bytes))
        .map_err(|never| match never {})
        .boxed()
}

/// A body of whatever is sent on `rx`, until the sender is dropped. When the client goes away,
/// hyper drops the body, the channel closes and the sender sees it. What the sender has ready
/// goes out as one frame (one write to the socket, as a proxy forwards what it read), its pieces
/// in order: a streamed answer of eight events, read at once, took eight writes a hop.
pub(crate) fn channel(rx: mpsc::Receiver<Vec<u8>>) -> Body {
    let s = futures_util::stream::unfold(rx, |mut rx| async move {
        let mut chunk = rx.recv().await?;
        // Upstream bytes already read are decoded one HTTP chunk per turn of the runtime: let
        // the sender run until it has nothing ready, then write what it sent as one frame. A
        // sender with nothing more costs one turn, not a wait.
        // A piece takes the sender a few turns (the upstream connection's task decodes the next
        // HTTP chunk, then the sender's turn): stop after `TURNS` turns without one.
        const TURNS: usize = 16;
        let mut quiet = 0;
        while quiet < TURNS {
            turn().await;
            quiet += 1;
            while let Ok(more) = rx.try_recv() {
                chunk.extend_from_slice(&more);
                quiet = 0;
            }
        }
        Some((Ok::<_, io::Error>(Frame::data(Bytes::from(chunk))), rx))
    });
    BodyExt::boxed(StreamBody::new(s))
}

/// One turn of the runtime for the tasks already ready (on a one-thread runtime: the upstream
/// connection's task decoding its next HTTP chunk, the relay writing it), and no more: the task
/// wakes itself, so it runs again after them. `tokio::task::yield_now` would also poll the I/O
/// driver first (an `epoll_wait` per turn, four at the end of every streamed answer).
async fn turn() {
    let mut turned = false;
    std::future::poll_fn(|cx| {
        if turned {
            return std::task::Poll::Ready(());
        }
        turned = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
}

/// `chunks` sent one by one, `pace` between them; `cut` ends the body with an error (after one
/// more `pace`) so that hyper aborts the connection mid-body.
pub(crate) fn chunked(chunks: Vec<Vec<u8>>, pace: Duration, cut: bool) -> Body {
    let state = (chunks.into_iter(), 0usize, cut);
    let s = futures_util::stream::unfold(state, move |(mut it, i, cut)| async move {
        match it.next() {
            Some(c) => {
                if i > 0 && !pace.is_zero() {
                    tokio::time::sleep(pace).await;
                }
                Some((Ok(Frame::data(Bytes::from(c))), (it, i + 1, cut)))
            }
            None if cut => {
                if !pace.is_zero() {
                    tokio::time::sleep(pace).await;
                }
                let err = io::Error::new(io::ErrorKind::ConnectionAborted, "answer cut");
                Some((Err(err), (it, i + 1, false)))
            }
            None => None,
        }
    });
    BodyExt::boxed(StreamBody::new(s))
}

/// The hyper response of `reply`; only an invalid status or header makes it a bare 500.
pub(super) fn to_hyper(reply: Reply) -> Response<Body> {
    let mut builder = Response::builder().status(reply.status);
    for (k, v) in &reply.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    builder.body(reply.body).unwrap_or_else(|_| {
        let mut r = Response::new(full(Vec::new()));
        *r.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}
