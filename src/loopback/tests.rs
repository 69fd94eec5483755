//! The loopback server over real sockets: the query percent-decoded, the body limits and their
//! statuses (413 declared or sent, 408, with the connection closed after), the 500 for a reply
//! hyper cannot write, connection limits, shutdown on drop (listener and open connections), and
//! a pulled body's frames.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{BodyError, BodyLimits, ConnLimits, Options, Reply, Server, full, parse_query};

fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A server answering every request with what it read: method, path, query, the header `x-t`
/// and the body (or the body error's status and text), as JSON.
async fn echo(options: Options) -> Server {
    Server::start(any_port(), options, |req: super::Request| async move {
        let body = match &req.body {
            Ok(b) => serde_json::json!({"ok": String::from_utf8_lossy(b)}),
            Err(e) => serde_json::json!({"status": e.status(), "error": e.to_string()}),
        };
        let v = serde_json::json!({
            "method": req.method, "path": req.path, "query": req.query,
            "x-t": req.headers.get("x-t"), "body": body,
        });
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: full(v.to_string().into_bytes()),
        }
    })
    .await
    .unwrap()
}

async fn empty(_req: super::Request) -> Reply {
    Reply {
        status: 204,
        headers: Vec::new(),
        body: full(Vec::new()),
    }
}

fn addr(server: &Server) -> String {
    server.base_url().trim_start_matches("http://").to_string()
}

/// Writes `raw` on a new connection; what came back until the peer closed (or `wait` passed),
/// and whether it closed.
async fn exchange(server: &Server, raw: &[u8], wait: Duration) -> (String, bool) {
    let mut s = TcpStream::connect(addr(server)).await.unwrap();
    s.write_all(raw).await.unwrap();
    read_until_closed(&mut s, wait).await
}

async fn read_until_closed(s: &mut TcpStream, wait: Duration) -> (String, bool) {
    let mut out = Vec::new();
    // A reset ends the read as a close does; what came before it stays in `out`.
    let closed = tokio::time::timeout(wait, s.read_to_end(&mut out))
        .await
        .is_ok();
    (String::from_utf8_lossy(&out).into_owned(), closed)
}

fn json_of(answer: &str) -> serde_json::Value {
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

#[test]
fn the_query_is_percent_decoded_the_form_way() {
    let q = parse_query("alt=sse&key=a%2Fb%3D&name=New+York&flag&&x=a=b&bad=%zz%4&utf=%C3%A9");
    let pairs: Vec<(&str, &str)> = q.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("alt", "sse"),
            ("bad", "%zz%4"),
            ("flag", ""),
            ("key", "a/b="),
            ("name", "New York"),
            ("utf", "é"),
            ("x", "a=b"),
        ]
    );
    assert!(parse_query("").is_empty());
    // Keys decode too; the last of a repeated key wins.
    let q = parse_query("a%5Bb%5D=1&a%5Bb%5D=2");
    assert_eq!(q.get("a[b]").map(String::as_str), Some("2"));
}

#[test]
fn body_errors_have_one_status_each() {
    assert_eq!(BodyError::TooLarge(10).status(), 413);
    assert_eq!(BodyError::Timeout(Duration::from_millis(5)).status(), 408);
    assert_eq!(BodyError::Broken("reset".into()).status(), 400);
    assert_eq!(
        BodyError::TooLarge(10).to_string(),
        "the request body is over the limit of 10 bytes"
    );
}

#[tokio::test]
async fn a_request_arrives_as_plain_values_with_its_query_decoded() {
    let server = echo(Options::default()).await;
    let raw = "POST /v1beta/models/m:streamGenerateContent?alt=sse&key=a%2Bb HTTP/1.1\r\nhost: x\r\nX-T: t\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbody";
    let (answer, closed) = exchange(&server, raw.as_bytes(), Duration::from_secs(5)).await;
    assert!(closed && answer.starts_with("HTTP/1.1 200"), "{answer}");
    let v = json_of(&answer);
    assert_eq!(v["method"], "POST");
    assert_eq!(v["path"], "/v1beta/models/m:streamGenerateContent");
    assert_eq!(v["query"]["alt"], "sse");
    assert_eq!(
        v["query"]["key"], "a+b",
        "%2B decodes to a plus, not a space"
    );
    assert_eq!(v["x-t"], "t", "header names are lower-case");
    assert_eq!(v["body"]["ok"], "body");
}

fn small_body(max_bytes: usize, timeout: Option<Duration>) -> Options {
    Options {
        body: BodyLimits { max_bytes, timeout },
        ..Options::default()
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_declared_or_sent_and_the_connection_closes() {
    let server = echo(small_body(8, None)).await;
    // Declared over the limit: refused before a byte of the body is sent; no `connection: close`
    // from the client, yet the server closes after answering.
    let raw = "POST /x HTTP/1.1\r\nhost: x\r\ncontent-length: 9\r\n\r\n";
    let (answer, closed) = exchange(&server, raw.as_bytes(), Duration::from_secs(5)).await;
    assert!(closed, "{answer}");
    let v = json_of(&answer);
    assert_eq!(v["body"]["status"], 413, "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
    // Sent chunked, no length declared: counted as it arrives.
    let raw = "POST /x HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n67890\r\n0\r\n\r\n";
    let (answer, closed) = exchange(&server, raw.as_bytes(), Duration::from_secs(5)).await;
    assert!(closed, "{answer}");
    assert_eq!(json_of(&answer)["body"]["status"], 413, "{answer}");
    // At the limit: read whole.
    let raw =
        "POST /x HTTP/1.1\r\nhost: x\r\ncontent-length: 8\r\nconnection: close\r\n\r\n12345678";
    let (answer, _) = exchange(&server, raw.as_bytes(), Duration::from_secs(5)).await;
    assert_eq!(json_of(&answer)["body"]["ok"], "12345678", "{answer}");
}

#[tokio::test]
async fn a_body_not_received_in_time_is_408() {
    let server = echo(small_body(1024, Some(Duration::from_millis(200)))).await;
    let raw = "POST /x HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n12345";
    let (answer, closed) = exchange(&server, raw.as_bytes(), Duration::from_secs(5)).await;
    assert!(closed, "{answer}");
    let v = json_of(&answer);
    assert_eq!(v["body"]["status"], 408, "{answer}");
    assert_eq!(
        v["body"]["error"],
        "the request body was not received within 200 ms"
    );
}

#[tokio::test]
async fn a_reply_hyper_cannot_write_is_a_bare_500() {
    let server = Server::start(any_port(), Options::default(), |_req| async {
        Reply {
            status: 200,
            headers: vec![("bad\nname".into(), "v".into())],
            body: full(b"never sent".to_vec()),
        }
    })
    .await
    .unwrap();
    let raw = b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    let (answer, _) = exchange(&server, raw, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 500"), "{answer}");
    assert!(!answer.contains("never sent"), "{answer}");
}

#[tokio::test]
async fn loopback_only_refuses_another_address() {
    let options = Options {
        loopback_only: true,
        ..Options::default()
    };
    let addr = SocketAddr::from(([0, 0, 0, 0], 0));
    let e = Server::start(addr, options, empty)
        .await
        .err()
        .expect("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("only listens on loopback"), "{e}");
}

#[tokio::test]
async fn dropping_the_server_closes_the_listener_and_open_connections() {
    let server = echo(Options::default()).await;
    let at = addr(&server);
    // A kept-alive connection that has been answered once.
    let mut open = TcpStream::connect(&at).await.unwrap();
    open.write_all(b"GET /a HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = open.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    drop(server);
    let (rest, closed) = read_until_closed(&mut open, Duration::from_secs(2)).await;
    assert!(
        closed && rest.is_empty(),
        "the open connection was closed: {rest}"
    );
    // The listener is gone: nothing accepts (a refused connect, or one closed at once).
    tokio::time::sleep(Duration::from_millis(50)).await;
    if let Ok(mut s) = TcpStream::connect(&at).await {
        let _ = s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").await;
        let (answer, closed) = read_until_closed(&mut s, Duration::from_secs(2)).await;
        assert!(closed && answer.is_empty(), "{answer}");
    }
}

#[tokio::test]
async fn a_connection_over_the_cap_is_answered_503() {
    let options = Options {
        connections: Some(ConnLimits {
            max_connections: 1,
            header_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
        }),
        ..Options::default()
    };
    let server = echo(options).await;
    let _held = TcpStream::connect(addr(&server)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (answer, closed) = exchange(&server, b"", Duration::from_secs(3)).await;
    assert!(closed, "{answer}");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let declared = answer
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|n| n.parse::<usize>().ok());
    assert_eq!(declared, Some(body.len()), "{answer}");
}

#[test]
fn a_pulled_body_sends_the_head_first_then_one_frame_per_wait_of_its_writer() {
    use hyper::body::Body as _;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let sink = super::Sink::default();
    let out = sink.clone();
    let mut body = super::pulled(sink, async move {
        out.write(b"a");
        out.write(b"b");
        let _ = rx.await;
        out.write(b"c");
    });
    let mut cx = Context::from_waker(Waker::noop());
    let mut poll = || match Pin::new(&mut body).poll_frame(&mut cx) {
        Poll::Pending => "pending".to_string(),
        Poll::Ready(None) => "end".to_string(),
        Poll::Ready(Some(f)) => {
            String::from_utf8(f.unwrap().into_data().unwrap().to_vec()).unwrap()
        }
    };
    // Nothing on the first poll (hyper writes the head then); what the writer has ready before
    // it waits goes out together; nothing while it waits; the rest, then the end.
    assert_eq!(poll(), "pending");
    assert_eq!(poll(), "ab");
    assert_eq!(poll(), "pending");
    tx.send(()).unwrap();
    assert_eq!(poll(), "c");
    assert_eq!(poll(), "end");
}
