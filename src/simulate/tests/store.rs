//! The Responses conversation store: `previous_response_id` continues what was answered and
//! stored; an unknown id and a `store: false` answer are OpenAI's 400 `previous_response_not_found`.

use serde_json::{Value, json};

use super::support::{Opts, P, assert_status, body, read, request};
use crate::scenario::Scenario;
use crate::simulate::{SimResponse, Store, answer_kept};

fn first(store_flag: Option<bool>) -> Value {
    let mut b = body(P::Responses, &Opts::default());
    if let Some(s) = store_flag {
        b["store"] = json!(s);
    }
    b
}

fn send(kept: &Store, b: &Value) -> SimResponse {
    answer_kept(
        &request(P::Responses, b, false),
        &Scenario::default(),
        Some(kept),
    )
}

/// The result of the first answer's call, sent with only `previous_response_id`.
fn continuation(answer: &Value, with_previous: bool) -> Value {
    let call = answer["output"]
        .as_array()
        .and_then(|o| o.iter().find(|i| i["type"] == "function_call"))
        .expect("a call")
        .clone();
    let mut b = json!({"model": "gpt-4.1", "tools": first(None)["tools"].clone(), "input": [
        {"type": "function_call_output", "call_id": call["call_id"], "output": "{\"temp_c\": 3}"}]});
    if with_previous {
        b["previous_response_id"] = answer["id"].clone();
    }
    b
}

/// A first answer stored, and the simulator's answer to its continuation (the stored answer's
/// id sent as `previous_response_id` when `with_previous`).
fn continued(with_previous: bool) -> (Value, SimResponse) {
    let kept = Store::default();
    let one = send(&kept, &first(None)).json();
    let two = send(&kept, &continuation(&one, with_previous));
    (one, two)
}

#[test]
fn a_stored_answer_is_continued_by_its_id() {
    let (one, two) = continued(true);
    assert_status(&two, 200, "");
    let got = read(P::Responses, false, &two);
    // The result answers the kept call: the model's next turn is its final text.
    assert!(got.calls.is_empty(), "{got:?}");
    assert!(!got.text.is_empty());
    assert_eq!(two.json()["previous_response_id"], one["id"]);
}

#[test]
fn unknown_ids_and_unstored_answers_are_not_found() {
    let kept = Store::default();
    let unstored = send(&kept, &first(Some(false))).json();
    for (b, store) in [
        (continuation(&unstored, true), Some(&kept)),
        (continuation(&send(&kept, &first(None)).json(), true), None),
    ] {
        let id = b["previous_response_id"].as_str().unwrap_or("").to_string();
        let resp = answer_kept(
            &request(P::Responses, &b, false),
            &Scenario::default(),
            store,
        );
        assert_eq!(resp.status, 400);
        let err = &resp.json()["error"];
        assert_eq!(
            err["message"],
            format!("Previous response with id '{id}' not found.")
        );
        assert_eq!(err["param"], "previous_response_id");
        assert_eq!(err["code"], "previous_response_not_found");
    }
}

#[test]
fn a_result_without_its_call_or_an_id_is_refused() {
    let (_, resp) = continued(false);
    assert_status(&resp, 400, "");
    let message = resp.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(message.starts_with("No tool call found"), "{message}");
}

/// The whole conversation again after a reasoning answer (of `gpt-5-mini`, a reasoning model),
/// its reasoning item sent as `item`.
fn by_reference(answer: &Value, item: impl Fn(&Value) -> Value) -> Value {
    let mut input = vec![json!({"role": "user", "content": "Weather in Bern?"})];
    for out in answer["output"].as_array().into_iter().flatten() {
        input.push(if out["type"] == "reasoning" {
            item(out)
        } else {
            out.clone()
        });
    }
    let call = input.last().cloned().unwrap_or_default();
    input.push(json!({"type": "function_call_output", "call_id": call["call_id"], "output": "3C"}));
    json!({"model": "gpt-5-mini", "tools": first(None)["tools"].clone(), "input": input})
}

#[test]
fn an_item_reference_is_the_stored_item_and_an_unknown_one_is_refused() {
    let kept = Store::default();
    let scenario = Scenario {
        reasoning: Some("I need the weather first.".into()),
        ..Scenario::default()
    };
    let send = |b: &Value| answer_kept(&request(P::Responses, b, false), &scenario, Some(&kept));
    // A reasoning model: only one answers reasoning items.
    let mut asked = first(None);
    asked["model"] = json!("gpt-5-mini");
    let one = send(&asked).json();
    assert!(one["output"][0]["type"] == "reasoning", "{one}");
    // The reasoning item by reference: the reasoning sent back.
    let referred = by_reference(&one, |r| json!({"type": "item_reference", "id": r["id"]}));
    let two = send(&referred);
    assert_status(&two, 200, "");
    // Dropped: the reasoning model's 400; referred to by an unknown id: the item is not found.
    let dropped = send(&by_reference(
        &one,
        |_| json!({"type": "message", "role": "user", "content": "?"}),
    ));
    assert_eq!(dropped.status, 400);
    let unknown = send(&by_reference(
        &one,
        |_| json!({"type": "item_reference", "id": "rs_gone"}),
    ));
    assert_eq!(unknown.status, 400);
    let err = &unknown.json()["error"];
    assert!(
        (err["message"].as_str().unwrap_or("")).starts_with("Item with id 'rs_gone' not found."),
        "{err}"
    );
    assert_eq!(
        (&err["param"], &err["type"]),
        (&json!("input"), &json!("invalid_request_error"))
    );
}
