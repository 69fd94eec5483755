//! Relaying a streamed answer from a real upstream connection (a loopback server writing the
//! upstream's chunks): one client event per upstream delta even when several arrive in one read,
//! and an upstream stream that is cut, or ends before its terminal event, ends in the client
//! format's error event, never a clean finish; calls reach the client with ids valid in its API
//! and distinct.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::Value;

use super::header;
use crate::loopback::{self, Options, Reply, Server};
use crate::model::{ChatRequest, Provider};
use crate::proxy::ProxyRoute;
use crate::proxy::answer::{Answer, Headers, meta};
use crate::proxy::relay;
use crate::proxy::upstream::UpstreamClient;
use crate::respond::Inbound;

fn chat_event(delta: &str, finish: &str) -> String {
    format!(
        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
    )
}

/// What a client in `inbound`'s format receives when upstream (OpenAI Chat) writes `chunks`, one
/// read each, and then ends, or `cut`s the connection: the headers, each write to the client.
async fn relayed(inbound: Inbound, chunks: Vec<String>, cut: bool) -> (Headers, Vec<Vec<u8>>) {
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let upstream = Server::start(any, Options::default(), move |_req: loopback::Request| {
        let chunks = chunks.iter().map(|c| c.as_bytes().to_vec()).collect();
        async move {
            Reply {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                body: loopback::chunked(chunks, Duration::from_millis(20), cut),
            }
        }
    })
    .await
    .unwrap();
    // Through the proxy's own upstream client (a plain-HTTP upstream: `proxy/h1.rs`).
    let route: ProxyRoute = toml::from_str(&format!(
        "model = \"m\"\nprovider = \"openai-chat\"\nbase_url = \"{}\"\n",
        upstream.base_url()
    ))
    .unwrap();
    let request = crate::http::HttpRequest::post("/", serde_json::json!({}));
    let resp = UpstreamClient::new(Duration::from_secs(10))
        .send(&route, &request)
        .await
        .unwrap();
    let neutral = ChatRequest::empty("m", true);
    let answer = relay::stream(
        (inbound, meta(inbound, "alias")),
        (Provider::OpenaiChat, (Default::default(), None)),
        neutral,
        resp,
        Vec::new(),
    );
    let Answer::Stream { headers, mut body } = answer else {
        panic!("a streamed success is relayed as a stream");
    };
    let mut writes = Vec::new();
    while let Some(frame) = body.frame().await {
        writes.push(frame.unwrap().into_data().unwrap().to_vec());
    }
    (headers, writes)
}

/// The Server-Sent Events of `bytes`: (event name, data as JSON or a string).
fn events(bytes: &[u8]) -> Vec<(String, Value)> {
    let text = String::from_utf8_lossy(bytes);
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let name = e
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or("");
            let data = e
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or("");
            let v = serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.into()));
            (name.to_string(), v)
        })
        .collect()
}

/// The text deltas a client got, one per event: Chat's `delta.content`, Anthropic's `text_delta`.
fn text_deltas(events: &[(String, Value)]) -> Vec<String> {
    events
        .iter()
        .filter_map(|(_, v)| {
            let chat = v.pointer("/choices/0/delta/content");
            let messages = v.pointer("/delta/text");
            chat.or(messages)?.as_str().map(str::to_string)
        })
        .filter(|t| !t.is_empty())
        .collect()
}

#[tokio::test]
async fn deltas_upstream_sent_in_one_read_reach_the_client_as_one_event_each() {
    let role_and_hel = chat_event(r#"{"role":"assistant","content":"Hel"}"#, "null");
    let lo = chat_event(r#"{"content":"lo"}"#, "null");
    // CRLF between events is a blank line too.
    let crlf = chat_event(r#"{"content":"!"}"#, "null").replace("\n\n", "\n\r\n");
    let end = format!("{}data: [DONE]\n\n", chat_event("{}", "\"stop\""));
    for inbound in [Inbound::Chat, Inbound::Messages] {
        let chunks = vec![format!("{role_and_hel}{lo}{crlf}"), end.clone()];
        let (headers, writes) = relayed(inbound, chunks, false).await;
        assert_eq!(
            header(&headers, "content-type"),
            Some("text/event-stream; charset=utf-8")
        );
        let got = events(&writes.concat());
        assert_eq!(
            text_deltas(&got),
            ["Hel", "lo", "!"],
            "{inbound:?}: {got:?}"
        );
        let finished = match inbound {
            Inbound::Chat => got
                .iter()
                .any(|(_, v)| v.pointer("/choices/0/finish_reason") == Some(&"stop".into())),
            _ => got.iter().any(|(name, _)| name == "message_stop"),
        };
        assert!(finished, "{inbound:?}: {got:?}");
    }
}

/// The client's error event (Chat: a data line with `error`; Anthropic: `event: error`) and
/// whether a clean finish was written.
fn error_and_finish(inbound: Inbound, got: &[(String, Value)]) -> (Option<String>, bool) {
    let error = got.iter().find_map(|(name, v)| {
        let is_error = match inbound {
            Inbound::Chat => v.get("error").is_some(),
            _ => name == "error",
        };
        is_error.then(|| v.pointer("/error/message")?.as_str().map(str::to_string))?
    });
    let finished = got.iter().any(|(name, v)| {
        name == "message_stop"
            || v.pointer("/choices/0/finish_reason")
                .is_some_and(|f| !f.is_null())
    });
    (error, finished)
}

#[tokio::test]
async fn an_upstream_stream_cut_or_unfinished_ends_in_the_client_format_s_error_event() {
    let hel = chat_event(r#"{"role":"assistant","content":"Hel"}"#, "null");
    // Cut: the connection aborted mid-body. Unfinished: it ends cleanly, but with no
    // `[DONE]` or finish_reason, the answer is not whole either.
    for (cut, want) in [
        (true, "stream broke off"),
        (false, "ended before its terminal event"),
    ] {
        for inbound in [Inbound::Chat, Inbound::Messages] {
            let (_, writes) = relayed(inbound, vec![hel.clone()], cut).await;
            let got = events(&writes.concat());
            assert_eq!(text_deltas(&got), ["Hel"], "what came before is relayed");
            let (error, finished) = error_and_finish(inbound, &got);
            let error = error.unwrap_or_else(|| panic!("{inbound:?}: no error event: {got:?}"));
            assert!(error.contains(want), "{inbound:?}: {error}");
            assert!(!finished, "{inbound:?}, cut {cut}: {got:?}");
        }
    }
}

#[tokio::test]
async fn streamed_calls_reach_the_client_with_ids_valid_in_its_api_and_distinct() {
    let head = |i: usize, id: &str| {
        chat_event(
            &format!(
                r#"{{"tool_calls":[{{"index":{i},"id":"{id}","type":"function","function":{{"name":"get_weather","arguments":"{{}}"}}}}]}}"#
            ),
            "null",
        )
    };
    let chunks = vec![
        head(0, "functions.get_weather:0"),
        head(1, "functions.get_weather:0"),
        format!("{}data: [DONE]\n\n", chat_event("{}", "\"tool_calls\"")),
    ];
    let (_, writes) = relayed(Inbound::Messages, chunks, false).await;
    let ids: Vec<String> = events(&writes.concat())
        .iter()
        .filter_map(|(_, v)| v.pointer("/content_block/id")?.as_str().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    for id in &ids {
        assert!(
            crate::providers::call_ids::invalid(Provider::Anthropic, id).is_none(),
            "{id}"
        );
    }
}

#[test]
fn a_read_is_cut_after_each_blank_line_lf_or_crlf_and_the_rest_comes_last() {
    let cut = |bytes: &str| -> Vec<String> {
        relay::event_pieces(bytes.as_bytes())
            .map(|p| String::from_utf8(p.to_vec()).unwrap())
            .collect()
    };
    let whole = "data: {\"a\":1}\n\ndata: b\r\n\r\nevent: x\ndata: c\n\ndata: par";
    assert_eq!(
        cut(whole),
        [
            "data: {\"a\":1}\n\n",
            "data: b\r\n\r\n",
            "event: x\ndata: c\n\n",
            "data: par"
        ]
    );
    // Lone line feeds, a CR without its LF, a blank line at the very start or end.
    assert_eq!(cut("a\nb\nc"), ["a\nb\nc"]);
    assert_eq!(cut("a\r\nb\r"), ["a\r\nb\r"]);
    assert_eq!(cut("\n\nx\n"), ["\n\n", "x\n"]);
    assert_eq!(cut("x\n\r\n"), ["x\n\r\n"]);
    assert_eq!(cut("x\n\n\n\n"), ["x\n\n", "\n\n"]);
    assert!(cut("").is_empty());
}
