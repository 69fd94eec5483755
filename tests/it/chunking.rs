//! Chunking invariance: every stream decoder gives the identical outcome when the same body
//! arrives whole, per event, in 1-byte chunks, split inside multi-byte UTF-8 characters and in
//! seeded random chunks — over every streamed cassette in `cassettes/` and every streamed record
//! of `../shared/real-traffic/` (skipped with a message when absent, failed then under CI).

use crate::scratch::repo;
use tooltape::{
    ChatRequest, ChoiceSpec, DecodeError, Mode, Outcome, Provider, StreamDecoder, ToolChoice,
    cassette::split_stream, discover,
};

fn decode(provider: Provider, req: &ChatRequest, chunks: &[&[u8]]) -> Result<Outcome, DecodeError> {
    let mut d = StreamDecoder::new(provider, req);
    for c in chunks {
        d.push(c)?;
    }
    d.finish()
}

/// Seeded xorshift64*: the same chunkings on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Checks every chunking against the whole body; returns a description of the first mismatch.
fn invariant(
    label: &str,
    provider: Provider,
    req: &ChatRequest,
    body: &[u8],
    events: &[&[u8]],
) -> Result<(), String> {
    let whole = decode(provider, req, &[body]);
    let mut chunkings: Vec<(String, Vec<&[u8]>)> = vec![
        ("per event".into(), events.to_vec()),
        ("1-byte".into(), body.chunks(1).collect()),
    ];
    // Splits inside multi-byte characters (up to 8 of them, spread over the body).
    let inner: Vec<usize> = (1..body.len())
        .filter(|&i| (body[i] & 0xC0) == 0x80)
        .collect();
    for &i in inner.iter().step_by((inner.len() / 8).max(1)).take(8) {
        chunkings.push((
            format!("split inside UTF-8 at {i}"),
            vec![&body[..i], &body[i..]],
        ));
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ body.len() as u64);
    for seed in 0..6 {
        let mut parts = Vec::new();
        let mut at = 0;
        while at < body.len() {
            let n = 1 + (rng.next() % 97) as usize;
            let end = (at + n).min(body.len());
            parts.push(&body[at..end]);
            at = end;
        }
        chunkings.push((format!("random chunks #{seed}"), parts));
    }
    for (how, parts) in chunkings {
        let got = decode(provider, req, &parts);
        if got != whole {
            return Err(format!(
                "{label}: {how} differs from the whole body:\n  whole: {whole:?}\n  {how}: {got:?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_streamed_cassette() {
    let root = repo();
    let mut failures = Vec::new();
    let mut bodies = 0;
    for trial in discover(root)
        .trials
        .iter()
        .filter(|t| t.mode == Mode::Stream)
    {
        let Ok(Some((c, _))) = tooltape::cassette::load(&root.join(trial.cassette_path())) else {
            continue;
        };
        for (i, it) in c.interactions.iter().enumerate() {
            let Some(events) = &it.response.stream else {
                continue;
            };
            let mut req = trial.first_request();
            if i > 0 && matches!(trial.choice, ChoiceSpec::Choice(_)) {
                req.tool_choice = Some(ToolChoice::Auto); // follow-ups, as run.rs sends them
            }
            let body = events.concat();
            let events: Vec<&[u8]> = events.iter().map(|e| e.as_bytes()).collect();
            bodies += 1;
            if let Err(e) = invariant(
                &format!("{} #{i}", trial.name()),
                trial.provider,
                &req,
                body.as_bytes(),
                &events,
            ) {
                failures.push(e);
            }
        }
    }
    assert!(
        bodies > 100,
        "only {bodies} streamed bodies found in cassettes/"
    );
    assert!(
        failures.is_empty(),
        "{} of {bodies} streamed cassette bodies are not chunking-invariant:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_streamed_real_traffic_record() {
    let Some(records) = crate::needs::real_traffic_records() else {
        return;
    };
    let mut failures = Vec::new();
    let mut bodies = 0;
    for r in &records {
        if r["stream"] != true || r["response"]["status"] != 200 {
            continue;
        }
        let provider = match r["api"].as_str().unwrap() {
            "openai-chat" => Provider::OpenaiChat,
            "openai-responses" => Provider::OpenaiResponses,
            "anthropic" => Provider::Anthropic,
            _ => Provider::Gemini,
        };
        let req = crate::real_traffic::request_for(r);
        let body = r["response"]["body_text"].as_str().unwrap();
        let events = split_stream(body);
        let events: Vec<&[u8]> = events.iter().map(|e| e.as_bytes()).collect();
        bodies += 1;
        if let Err(e) = invariant(
            r["id"].as_str().unwrap(),
            provider,
            &req,
            body.as_bytes(),
            &events,
        ) {
            failures.push(e);
        }
    }
    assert!(bodies >= 50, "only {bodies} streamed real-traffic records");
    assert!(
        failures.is_empty(),
        "{} of {bodies} real streams are not chunking-invariant:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
