//! The non-text result check: a result given as parts must reach upstream in the target's
//! form; a part quoted into a string, an image flattened to text or dropped is one finding;
//! silence on the faithful forms (text parts joined into the text included) and on plain results.

use serde_json::json;

use super::{one, silent};
use crate::engine::check::{
    Finding, FindingKind, Side, non_text_results, non_text_results_as_text,
};
use crate::model::{ChatRequest, Message, Provider, ResultPart, Severity};

fn text(t: &str) -> ResultPart {
    ResultPart::Text { text: t.into() }
}

fn image() -> ResultPart {
    ResultPart::Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    }
}

/// A round whose one result is `content` with `parts`.
fn round(content: &str, parts: Vec<ResultPart>) -> ChatRequest {
    ChatRequest::new("m")
        .with_user("radar?")
        .with_messages([Message::Tool {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: content.into(),
            parts,
            is_error: false,
        }])
}

fn asked() -> ChatRequest {
    round("Oslo: snow", vec![text("Oslo: snow"), image()])
}

fn judged(sent: &ChatRequest, target: Provider) -> Vec<crate::engine::check::Finding> {
    non_text_results(&asked(), &asked(), sent, target)
}

/// The one finding is a breaking non-text result upstream, saying `gist`.
#[track_caller]
fn parts_lost(found: &[Finding], gist: &str) {
    one(
        found,
        FindingKind::NonTextResult,
        Side::Upstream,
        Severity::Breaking,
        gist,
    );
}

#[test]
fn parts_kept_in_the_targets_form_are_silent() {
    silent(&judged(&asked(), Provider::Anthropic));
    silent(&judged(&asked(), Provider::OpenaiResponses));
    // Gemini: the text in `response`, the image in `parts` (decoded with the text first).
    silent(&judged(&asked(), Provider::Gemini));
    // A plain result is not this check's.
    let plain = round("Oslo: snow", Vec::new());
    silent(&non_text_results(
        &plain,
        &plain,
        &plain,
        Provider::Anthropic,
    ));
}

#[test]
fn parts_quoted_into_one_string_are_a_finding() {
    let quoted = json!([{"type": "text", "text": "Oslo: snow"}, {"type": "image"}]).to_string();
    parts_lost(
        &judged(&round(&quoted, Vec::new()), Provider::Anthropic),
        "JSON-quoted into one string",
    );
}

#[test]
fn parts_flattened_or_dropped_are_a_finding() {
    parts_lost(
        &judged(&round("Oslo: snow", Vec::new()), Provider::OpenaiResponses),
        "not sent in the result (its text was), though openai-responses carries them",
    );
    parts_lost(
        &judged(
            &round("Oslo: snow", vec![text("Oslo: snow")]),
            Provider::Anthropic,
        ),
        "an image (base64) was dropped",
    );
    parts_lost(
        &judged(&round("", Vec::new()), Provider::Gemini),
        "were dropped",
    );
}

#[test]
fn gemini_and_the_text_protocol_take_text_parts_joined() {
    let parts = round("a\nb", vec![text("a"), text("b")]);
    let joined = round("a\nb", Vec::new());
    silent(&non_text_results(&parts, &parts, &joined, Provider::Gemini));
    let body = |t: &str| json!({"messages": [{"role": "user", "content": t}]});
    let sent = body("<tool_result name=\"get_weather\" call_id=\"call_1\">a\nb</tool_result>");
    silent(&non_text_results_as_text(&parts, &sent));
    parts_lost(
        &non_text_results_as_text(&parts, &body("[{\"type\":\"text\",\"text\":\"a\"}]")),
        "not in the text protocol's <tool_result>",
    );
}

#[test]
fn text_parts_joined_into_the_results_text_lose_nothing() {
    let two = |content: &str, parts| round(content, parts);
    let asked = two("Oslo: snow\n-4 C", vec![text("Oslo: snow"), text("-4 C")]);
    // Joined with a newline into Chat's string: every text is there.
    let joined = two("Oslo: snow\n-4 C", Vec::new());
    silent(&non_text_results(
        &asked,
        &asked,
        &joined,
        Provider::OpenaiChat,
    ));
    silent(&non_text_results(
        &asked,
        &asked,
        &joined,
        Provider::Anthropic,
    ));
    // A text missing from the joined string is a finding.
    parts_lost(
        &non_text_results(
            &asked,
            &asked,
            &two("Oslo: snow", Vec::new()),
            Provider::OpenaiChat,
        ),
        "not sent in the result (its text was)",
    );
}

#[test]
fn an_image_in_the_url_safe_alphabet_is_the_same_image() {
    let image = |data: &str| ResultPart::Image {
        media_type: "image/png".into(),
        data: data.into(),
    };
    // The bytes fb ff bf: `+/+/` in the standard alphabet, `-_-_` in the URL-safe one.
    let asked = round("Oslo: snow", vec![text("Oslo: snow"), image("+/+/")]);
    let url_safe = round("Oslo: snow", vec![text("Oslo: snow"), image("-_-_")]);
    silent(&non_text_results(
        &asked,
        &asked,
        &url_safe,
        Provider::Gemini,
    ));
    let other = round("Oslo: snow", vec![text("Oslo: snow"), image("AAAA")]);
    parts_lost(
        &non_text_results(&asked, &asked, &other, Provider::Gemini),
        "dropped or altered",
    );
}
