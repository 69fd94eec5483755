//! Relaying a streamed upstream answer: upstream bytes go through the stream decoder one event
//! at a time and each new delta is written in the client's format; a cut or an error ends in the
//! client format's error event; strict-rewrite nulls are removed as they stream; a whole answer's
//! reasoning state (and a Responses client's conversation) is kept for the next round.

use futures_util::StreamExt;

use std::sync::Arc;

use super::answer::{Answer, Headers};
use super::conversations::Keep;
use super::reasoning::Reasoning;
use crate::loopback::Sink;
use crate::model::{ChatRequest, Outcome, Provider, ProviderError};
use crate::providers::StreamDecoder;
use crate::respond::{Inbound, Meta, StreamWriter};
use crate::schema::NullFilter;

/// A streamed answer: a writer that pushes upstream bytes into the decoder and writes each new
/// delta in the client's format, run by the client's body as the client reads (what it wrote
/// while upstream had more ready goes out together). When the client goes away, the body and
/// the writer are dropped, and dropping the upstream response cancels the upstream request.
pub(super) fn stream(
    (inbound, meta): (Inbound, Meta),
    (provider, (kept, keep)): (Provider, (Arc<Reasoning>, Option<Keep>)),
    neutral: ChatRequest,
    resp: super::upstream::Response,
    mut headers: Headers,
) -> Answer {
    headers.push(("content-type".into(), inbound.stream_content_type().into()));
    headers.push(("cache-control".into(), "no-cache".into()));
    let sink = Sink::default();
    let out = sink.clone();
    let writer = async move {
        let mut writer = StreamWriter::new(inbound, meta);
        let mut decoder = StreamDecoder::new(provider, &neutral);
        let mut tracker = Tracker::new(provider, &neutral);
        tracker.client = super::inbound::provider(inbound);
        out.write(&writer.start());
        let mut chunks = resp;
        let mut bytes = Vec::new();
        while let Some(chunk) = chunks.next().await {
            // One event at a time: fragments upstream sent as separate events stay separate
            // downstream even when they arrive in one read.
            let failed = match chunk {
                Ok(c) => event_pieces(&c).find_map(|piece| match decoder.push(piece) {
                    Ok(()) => {
                        tracker.forward(&decoder, &mut writer, &mut bytes);
                        None
                    }
                    Err(e) => Some(format!("upstream {provider} stream undecodable: {e}")),
                }),
                Err(e) => Some(format!("upstream {provider} stream broke off: {e}")),
            };
            if let Some(message) = failed {
                let err = ProviderError {
                    status: 502,
                    message,
                    ..ProviderError::default()
                };
                bytes.extend(writer.error(&err));
                out.write(&bytes);
                return;
            }
            out.write(&bytes);
            bytes.clear();
        }
        let mut last = tracker.finish(&mut writer);
        last.extend(match decoder.finish() {
            Ok(o) => match &o.error {
                Some(err) => writer.error(err),
                // Upstream's stream ended before its terminal event: the answer is not whole,
                // so the client gets its format's error event, never a clean finish (clients
                // detect an error event; most take a stream that just ends as complete).
                None if truncated(&o) => writer.error(&ProviderError {
                    status: 502,
                    message: format!(
                        "upstream {provider} stream ended before its terminal event: the answer is incomplete"
                    ),
                    ..ProviderError::default()
                }),
                None => {
                    kept.remember(provider, &neutral, &o);
                    if let Some(keep) = keep {
                        keep.answered(&o);
                    }
                    writer.finish(&o)
                }
            },
            Err(e) => writer.error(&ProviderError {
                status: 502,
                message: format!("upstream {provider} stream undecodable: {e}"),
                ..ProviderError::default()
            }),
        });
        out.write(&last);
    };
    Answer::Stream {
        headers,
        body: crate::loopback::pulled(sink, writer),
    }
}

fn truncated(o: &Outcome) -> bool {
    o.diagnostics
        .iter()
        .any(|d| d.kind == crate::model::DiagnosticKind::StreamTruncated)
}

/// `chunk` cut after each blank line (the end of a Server-Sent Event, LF or CRLF); the rest last.
pub(super) fn event_pieces(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = chunk;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        // Both ends begin with a line feed: only those positions are looked at.
        let mut end = rest.len();
        let mut from = 0;
        while let Some(at) = rest[from..].iter().position(|&b| b == b'\n') {
            let i = from + at;
            match &rest[i..] {
                [b'\n', b'\n', ..] => end = i + 2,
                [b'\n', b'\r', b'\n', ..] => end = i + 3,
                _ => {
                    from = i + 1;
                    continue;
                }
            }
            break;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// What of the decoder's progress has been forwarded. Arguments of calls to tools the strict
/// rewrite changed go through the incremental restore (the buffered path restores on decode).
struct Tracker<'s> {
    provider: Provider,
    /// The client's API: the ids of the calls it gets are valid there and distinct.
    client: Provider,
    ids: Vec<String>,
    req: &'s ChatRequest,
    text_sent: Vec<usize>,
    args_sent: Vec<String>,
    filters: Vec<Option<NullFilter<'s>>>,
    /// Filtered bytes not yet forwarded (the end of an incomplete UTF-8 character).
    pending: Vec<Vec<u8>>,
}

impl<'s> Tracker<'s> {
    fn new(provider: Provider, req: &'s ChatRequest) -> Tracker<'s> {
        Tracker {
            provider,
            client: provider,
            ids: Vec::new(),
            req,
            text_sent: Vec::new(),
            args_sent: Vec::new(),
            filters: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Appends to `out` what the decoder has that was not forwarded yet.
    fn forward(&mut self, d: &StreamDecoder, w: &mut StreamWriter, out: &mut Vec<u8>) {
        let p = d.progress();
        for (i, piece) in p.text.iter().enumerate() {
            if self.text_sent.len() <= i {
                self.text_sent.push(0);
            }
            if let Some(rest) = piece.get(self.text_sent[i]..)
                && !rest.is_empty()
            {
                out.extend(w.text(rest));
                self.text_sent[i] = piece.len();
            }
        }
        for (k, c) in p.calls.iter().enumerate() {
            if k >= self.args_sent.len() {
                if c.name.is_empty() {
                    break; // a call is started once its name is known
                }
                let id = if c.id.is_empty() {
                    format!("call_{k}")
                } else {
                    c.id.to_string()
                };
                let id = crate::providers::call_ids::answer_id(self.client, &id, k, &self.ids);
                out.extend(w.call_start(&id, c.name, c.caller));
                self.ids.push(id);
                self.args_sent.push(String::new());
                self.filters.push(crate::schema::stream_filter(
                    self.provider,
                    self.req,
                    c.name,
                ));
                self.pending.push(Vec::new());
            }
            let sent = &mut self.args_sent[k];
            if c.arguments.len() > sent.len() && c.arguments.starts_with(sent.as_str()) {
                let rest = &c.arguments[sent.len()..];
                sent.push_str(rest);
                match &mut self.filters[k] {
                    Some(f) => {
                        let bytes = f.push(rest.as_bytes());
                        out.extend(self.send_args(k, bytes, w));
                    }
                    // Unfiltered text after nothing pending is whole characters: sent as it is.
                    None if self.pending[k].is_empty() => out.extend(w.call_args(k, rest)),
                    None => out.extend(self.send_args(k, rest.as_bytes().to_vec(), w)),
                }
            }
        }
    }

    /// Releases what the filters still hold (arguments that ended early).
    fn finish(&mut self, w: &mut StreamWriter) -> Vec<u8> {
        let mut out = Vec::new();
        for k in 0..self.filters.len() {
            let held = self.filters[k].as_mut().map(NullFilter::finish);
            out.extend(self.send_args(k, held.unwrap_or_default(), w));
            let rest = std::mem::take(&mut self.pending[k]);
            if !rest.is_empty() {
                out.extend(w.call_args(k, &String::from_utf8_lossy(&rest)));
            }
        }
        out
    }

    /// Forwards the complete UTF-8 characters of `bytes` (after what was pending) for call `k`.
    fn send_args(&mut self, k: usize, bytes: Vec<u8>, w: &mut StreamWriter) -> Vec<u8> {
        let pending = &mut self.pending[k];
        pending.extend(bytes);
        let valid = match std::str::from_utf8(pending) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        if valid == 0 {
            return Vec::new();
        }
        let tail = pending.split_off(valid);
        let text = std::mem::replace(pending, tail);
        w.call_args(k, std::str::from_utf8(&text).unwrap_or_default())
    }
}
