//! What a loopback server's handler answers: a status, headers and a body (whole, pulled from
//! a writer, or chunks paced and optionally cut), and its hyper response, a bare 500 when a header
//! cannot be written.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::Response;
use hyper::body::Frame;

/// A response body: whole or streamed.
pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;

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
        .boxed_unsync()
}

/// Where a pulled body's writer puts its bytes (shared with the body, which takes them).
#[derive(Clone, Default)]
pub(crate) struct Sink(Arc<Mutex<Vec<u8>>>);

impl Sink {
    /// Appends `bytes` to what goes out next.
    pub(crate) fn write(&self, bytes: &[u8]) {
        if let Ok(mut out) = self.0.lock() {
            out.extend_from_slice(bytes);
        }
    }

    fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .map(|mut o| std::mem::take(&mut *o))
            .unwrap_or_default()
    }
}

/// A body written by `writer` into `sink` as it runs, driven by the body itself: each time the
/// client's connection asks for more, the writer runs until it waits (on upstream), and what it
/// wrote goes out as one frame (one write to the socket, as a proxy forwards what it read: a
/// streamed answer of eight events read at once is one write, not eight). The head goes out
/// first, on its own, before the writer runs (as nginx sends upstream's head on): the client
/// reads it while the body is made. Run in the client connection's task, it needs no hand-over
/// between tasks; when the client goes away, hyper drops the body and with it the writer (and
/// whatever it holds upstream).
pub(crate) fn pulled<F>(sink: Sink, writer: F) -> Body
where
    F: Future<Output = ()> + Send + 'static,
{
    BodyExt::boxed_unsync(Pulled {
        head_sent: false,
        writer: Some(Box::pin(writer)),
        sink,
    })
}

struct Pulled {
    /// The first poll has returned (hyper writes the head when the body has nothing yet).
    head_sent: bool,
    writer: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    sink: Sink,
}

impl hyper::body::Body for Pulled {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if !self.head_sent {
            // Nothing yet, and polled again at once: hyper flushes the head in between.
            self.head_sent = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if let Some(w) = &mut self.writer
            && w.as_mut().poll(cx).is_ready()
        {
            self.writer = None;
        }
        let out = self.sink.take();
        if !out.is_empty() {
            Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
        } else if self.writer.is_none() {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }
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
    BodyExt::boxed_unsync(StreamBody::new(s))
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
