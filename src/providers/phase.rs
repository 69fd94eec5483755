//! The assistant `phase` (class 32): OpenAI Responses labels each assistant message item
//! `commentary` (what the model says while it works, before its calls) or `final_answer`, and
//! asks clients to send it back on every assistant message of the next request. Only Responses
//! has the field; to another API it is dropped with a note (presentation metadata of the
//! message, not a constraint on the answer: see docs/wire-formats.md, "Assistant phase").

use serde_json::Value;

use crate::model::{ChatRequest, Message, Phase, Provider};

/// The phase a message item carries (`None`: none, or a value Responses does not define).
pub(crate) fn of_item(item: &Value) -> Option<Phase> {
    match item.get("phase").and_then(Value::as_str)? {
        "commentary" => Some(Phase::Commentary),
        "final_answer" => Some(Phase::FinalAnswer),
        _ => None,
    }
}

/// To an API other than Responses: a note naming the assistant turns whose phase is dropped.
pub(crate) fn dropped(provider: Provider, req: &ChatRequest) -> Option<String> {
    if provider == Provider::OpenaiResponses {
        return None;
    }
    let turns: Vec<String> = (req.messages.iter().enumerate())
        .filter_map(|(i, m)| match m {
            Message::Assistant { phase: Some(p), .. } => Some(format!("{i} ({})", p.wire())),
            _ => None,
        })
        .collect();
    (!turns.is_empty()).then(|| {
        format!(
            "assistant phase dropped for {}: only OpenAI Responses has the field (messages {})",
            provider.slug(),
            turns.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::http::HttpRequest;
    use crate::model::{Message, Phase, Provider};
    use crate::providers::openai_responses::{Stream, decode, decode_request};
    use crate::providers::testkit::{
        request, response, stream_every_chunking, weather_call, weather_result,
    };

    fn message(phase: &str) -> Value {
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "phase": phase, "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]})
    }

    #[test]
    fn a_buffered_answer_keeps_its_phase() {
        let body = json!({"status": "completed", "output": [message("commentary"),
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}]});
        let o = decode(
            &request(&["get_weather"], false),
            &response(200, &body.to_string()),
        )
        .unwrap();
        assert_eq!(o.phase, Some(Phase::Commentary));
    }

    #[test]
    fn a_streamed_answer_keeps_its_phase() {
        let done = json!({"type": "response.output_item.done", "output_index": 0, "item": message("final_answer")});
        let events = [
            json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "phase": "final_answer", "content": []}}),
            json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "delta": "Checking."}),
            done,
            json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
        ];
        let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        let req = request(&["get_weather"], true);
        let o = stream_every_chunking(body.as_bytes(), || Stream::new(&req)).unwrap();
        assert_eq!(o.phase, Some(Phase::FinalAnswer));
        assert_eq!(o.text.as_deref(), Some("Checking."));
    }

    #[test]
    fn a_request_round_trips_the_phase_and_refuses_another_value() {
        let body = json!({"model": "m", "input": [
            {"role": "user", "content": "weather?"},
            {"type": "message", "role": "assistant", "phase": "commentary",
             "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "18C"}]});
        let d = decode_request(&HttpRequest::post("/v1/responses", body.clone())).unwrap();
        let Message::Assistant { phase, .. } = &d.request.messages[1] else {
            panic!("{:?}", d.request.messages);
        };
        assert_eq!(*phase, Some(Phase::Commentary));
        let sent = crate::providers::encode(Provider::OpenaiResponses, &d.request).unwrap();
        let item = &sent.request.body["input"][1];
        assert_eq!(item["phase"], "commentary", "{item}");
        let mut bad = body;
        bad["input"][1]["phase"] = json!("draft");
        let err = decode_request(&HttpRequest::post("/v1/responses", bad)).unwrap_err();
        assert!(err.to_string().contains("/input/1/phase"), "{err}");
    }

    #[test]
    fn another_api_drops_it_with_a_note() {
        let mut req = request(&["get_weather"], false);
        req.messages.push(Message::Assistant {
            phase: Some(Phase::Commentary),
            text: Some("Checking.".into()),
            tool_calls: vec![weather_call("call_1", json!({"city": "Bern"}))],
            opaque: Vec::new(),
        });
        req.messages.push(weather_result("call_1", "18C", false));
        for p in [Provider::OpenaiChat, Provider::Anthropic, Provider::Gemini] {
            let sent = crate::providers::encode(p, &req).unwrap();
            assert!(
                (sent.notes.iter()).any(|n| n.contains("assistant phase dropped")),
                "{p:?}: {:?}",
                sent.notes
            );
            assert!(
                !sent.request.body.to_string().contains("commentary"),
                "{p:?}"
            );
        }
        let sent = crate::providers::encode(Provider::OpenaiResponses, &req).unwrap();
        assert!(sent.notes.iter().all(|n| !n.contains("phase")));
    }
}
