//! The plain-HTTP upstream pool over a real socket: a connection is reused while the upstream
//! keeps it open, and one the upstream closed while idle is never sent on.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::proxy::h1::Pool;

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

/// Reads one request head and its (small) body from `s`: enough for these tests' requests.
async fn read_request(s: &mut tokio::net::TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.ends_with(b"{}") {
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the client closed before its request was whole");
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn post(pool: &std::sync::Arc<Pool>, url: &str) -> Result<(u16, Vec<u8>), String> {
    let mut answered = pool
        .post(url, &[], b"{}".to_vec(), Duration::from_secs(5))
        .await?;
    let mut body = Vec::new();
    while let Some(chunk) = answered.next().await {
        body.extend_from_slice(&chunk?);
    }
    Ok((answered.status, body))
}

#[tokio::test]
async fn an_idle_connection_the_upstream_closed_is_not_sent_on() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (close, closed) = tokio::sync::oneshot::channel::<()>();
    let upstream = tokio::spawn(async move {
        // The first connection answers twice (kept alive), then is closed while idle.
        let (mut first, _) = listener.accept().await.unwrap();
        for _ in 0..2 {
            read_request(&mut first).await;
            first.write_all(ANSWER).await.unwrap();
        }
        closed.await.unwrap();
        drop(first);
        // The next request must come on a new connection.
        let (mut second, _) = listener.accept().await.unwrap();
        read_request(&mut second).await;
        second.write_all(ANSWER).await.unwrap();
        second
    });
    let pool = std::sync::Arc::new(Pool::default());
    assert_eq!(post(&pool, &url).await.unwrap(), (200, b"ok".to_vec()));
    assert_eq!(
        post(&pool, &url).await.unwrap(),
        (200, b"ok".to_vec()),
        "the kept connection is reused"
    );
    close.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        post(&pool, &url).await.unwrap(),
        (200, b"ok".to_vec()),
        "a connection closed while idle is dropped, not sent on"
    );
    tokio::time::timeout(Duration::from_secs(5), upstream)
        .await
        .expect("the upstream saw the third request on a new connection")
        .unwrap();
}
