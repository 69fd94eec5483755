//! The MCP server client mode's MCP routes take their tools from, through rmcp's client (as a
//! library's MCP client reaches it) and over plain HTTP (what the transport allows a server):
//! tools listed as written, network `$ref`s under the endpoint, results answered once each,
//! calls and fetches recorded; and a `CallToolResult` read back as the result a library sends.

use serde_json::{Value, json};

use crate::mcp::{
    Answer, McpServer, REMOTE_REF, Session, call_result, result_message, served_schema,
};
use crate::model::{Message, ResultPart, Tool};

fn forecast() -> Tool {
    let mut t = Tool::function(
        "get_forecast",
        Some("Forecast.".into()),
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "units": {"$ref": format!("{REMOTE_REF}units.json")}}}),
    );
    t.output_schema = Some(json!({"type": "object"}));
    t
}

async fn post(url: &str, body: Value) -> (u16, Value) {
    let client = reqwest::Client::new();
    let r = client.post(url).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[test]
fn a_library_lists_calls_and_is_recorded() {
    crate::runtime().block_on(async {
        let server = McpServer::start().await.unwrap();
        let opened = server.reserve();
        let mut tool = forecast();
        tool.parameters = served_schema(&tool.parameters, &opened.ref_base);
        let result = call_result(r#"{"high_c":3}"#, &[], false, Some(&tool)).unwrap();
        assert_eq!(result["structuredContent"], json!({"high_c": 3}));
        let answers = [Answer {
            tool: "get_forecast".into(),
            result: result.clone(),
        }];
        server.open(opened.key, std::slice::from_ref(&tool), &answers);
        let session = Session::connect(&opened.url).await.unwrap();
        let listed = session.tools().await.unwrap();
        let units = &listed[0].parameters["properties"]["units"]["$ref"];
        assert_eq!(units, &json!(format!("{}units.json", opened.ref_base)));
        let args = json!({"city": "Oslo"});
        let got = session.call("get_forecast", &args).await.unwrap();
        assert_eq!(got["structuredContent"], result["structuredContent"]);
        // Answered once: a second call is an error result the record marks unanswered.
        let again = session.call("get_forecast", &args).await.unwrap();
        assert_eq!(again["isError"], json!(true));
        session.close().await;
        reqwest::get(format!("{}units.json", opened.ref_base))
            .await
            .unwrap();
        let seen = server.seen(opened.key);
        assert_eq!(seen.listed, 1);
        assert_eq!(seen.calls.len(), 2);
        assert_eq!(
            (seen.calls[0].answered, seen.calls[1].answered),
            (true, false)
        );
        assert_eq!(seen.calls[0].arguments, args);
        assert_eq!(seen.fetched, vec!["units.json".to_string()]);
        server.close(opened.key);
        assert_eq!(server.seen(opened.key), crate::mcp::Seen::default());
    });
}

#[test]
fn the_transport_answers_as_the_specification_allows() {
    crate::runtime().block_on(async {
        let server = McpServer::start().await.unwrap();
        let opened = server.reserve();
        // Reserved, not yet open: no such endpoint.
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert_eq!(post(&opened.url, ping.clone()).await.0, 404);
        server.open(opened.key, &[], &[]);
        assert_eq!(
            post(&opened.url, ping.clone()).await,
            (200, json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
        );
        // A notification, and a batch of two requests.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(&opened.url, note).await.0, 202);
        let batch = json!([ping, {"jsonrpc": "2.0", "id": 2, "method": "nope"}]);
        let (status, body) = post(&opened.url, batch).await;
        assert_eq!(status, 200);
        assert_eq!(body[1]["error"]["code"], json!(-32601));
        let init = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize",
            "params": {"protocolVersion": "2025-03-26"}});
        assert_eq!(
            post(&opened.url, init).await.1["result"]["protocolVersion"],
            json!("2025-03-26")
        );
        let get = reqwest::get(&opened.url).await.unwrap();
        assert_eq!(get.status().as_u16(), 405);
        let client = reqwest::Client::new();
        let bad = client.post(&opened.url).body("{").send().await.unwrap();
        assert_eq!(bad.status().as_u16(), 400);
    });
}

#[test]
fn a_call_result_reads_back_as_the_result_a_library_sends() {
    let image = ResultPart::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    };
    let text = ResultPart::Text {
        text: "radar".into(),
    };
    let parts = vec![text, image];
    let answered = call_result("radar", &parts, true, None).unwrap();
    let Message::Tool {
        content,
        parts: got,
        is_error,
        ..
    } = result_message("call_1", "get_weather", &answered)
    else {
        panic!("not a tool result");
    };
    assert_eq!((content.as_str(), got, is_error), ("radar", parts, true));
    // An image by URL has no MCP content.
    let url = ResultPart::ImageUrl {
        url: "https://x/y.png".into(),
    };
    assert_eq!(call_result("", &[url], false, None), None);
    // Structured content alone is sent as its JSON.
    let only = json!({"content": [], "structuredContent": {"a": 1}});
    let Message::Tool { content, .. } = result_message("c", "t", &only) else {
        panic!("not a tool result");
    };
    assert_eq!(content, r#"{"a":1}"#);
}
