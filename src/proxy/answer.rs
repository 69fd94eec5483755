//! What the proxy answers a client: a whole body or a stream of its format's events, error
//! envelopes in the client's format (its own API's refusals, upstream's errors), the answer's
//! ids, and the telemetry headers.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::{Outcome, ProviderError};
use crate::respond::{self, Envelope, Inbound, Meta};

pub(super) type Headers = Vec<(String, String)>;

pub(super) enum Answer {
    Full {
        status: u16,
        headers: Headers,
        body: Vec<u8>,
    },
    /// A streamed success: the body writes the client's events as it is read.
    Stream {
        headers: Headers,
        body: crate::loopback::Body,
    },
}

pub(super) fn error(inbound: Inbound, status: u16, message: &str, headers: Headers) -> Answer {
    let body = respond::envelope(
        inbound.family(),
        &Envelope {
            status,
            message,
            ..Envelope::default()
        },
    );
    let mut headers = headers;
    headers.push(("content-type".into(), "application/json".into()));
    Answer::Full {
        status,
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// The client's own API's 400 for a request it would reject (`inbound::rejection`), with its
/// OpenAI `param` and `code` where it has them; `x-tooltape-refused: CLIENT_REQUEST`.
pub(super) fn refusal(inbound: Inbound, rej: &crate::providers::Rejection) -> Answer {
    let body = respond::envelope(
        inbound.family(),
        &Envelope {
            status: rej.status,
            message: &rej.message,
            param: rej.extra.param.as_deref(),
            code: rej.extra.code.as_deref(),
            ..Envelope::default()
        },
    );
    Answer::Full {
        status: rej.status,
        headers: vec![
            ("x-tooltape-refused".into(), "CLIENT_REQUEST".into()),
            ("content-type".into(), "application/json".into()),
        ],
        body: body.to_string().into_bytes(),
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(1);

pub(super) fn meta(inbound: Inbound, model: &str) -> Meta {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let prefix = match inbound {
        Inbound::Chat => "chatcmpl-tt",
        Inbound::Responses => "resp_tt",
        Inbound::Messages => "msg_tt",
        Inbound::Gemini { .. } => "tt",
    };
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Meta {
        id: format!("{prefix}{n:012}"),
        model: model.to_string(),
        created,
        usage_chunk: false,
    }
}

pub(super) fn upstream_error(inbound: Inbound, err: &ProviderError, headers: Headers) -> Answer {
    let status = if (400..=599).contains(&err.status) {
        err.status
    } else {
        502
    };
    error(inbound, status, &err.message, headers)
}

pub(super) fn header_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

pub(super) fn telemetry_headers(
    headers: &mut Headers,
    tool_type: Option<String>,
    outcome: &Outcome,
) {
    let t = crate::run::telemetry(tool_type, Some(outcome), None);
    let counts = [
        (
            "x-tooltape-grounding-attempted",
            t.grounding_attempted.to_string(),
        ),
        (
            "x-tooltape-grounded-effective",
            t.grounded_effective.to_string(),
        ),
        ("x-tooltape-grounding-calls", t.tool_call_count.to_string()),
        (
            "x-tooltape-grounding-results",
            t.tool_result_count.to_string(),
        ),
    ];
    headers.extend(counts.map(|(name, value)| (name.to_string(), value)));
    if let Some(w) = t.why_not_grounded {
        headers.push(("x-tooltape-why-not-grounded".into(), header_text(&w)));
    }
}
