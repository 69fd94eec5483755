//! Stream framing shared by the simulator and the proxy: one SSE event, and the Responses API's
//! typed events with increasing `sequence_number`s.

use serde_json::{Value, json};

/// One SSE event: optional `event:` line, one `data:` line, blank line (LF framing).
pub(crate) fn sse(event: Option<&str>, data: &impl serde::Serialize) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    if let Some(e) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(e.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    // Written in place: a `Value` (or a borrowed struct) cannot fail to serialize.
    let _ = serde_json::to_writer(&mut out, data);
    out.extend_from_slice(b"\n\n");
    out
}

/// Typed Responses events with `event:` lines and increasing `sequence_number`s.
#[derive(Default)]
pub(crate) struct ResponsesEvents {
    pub chunks: Vec<Vec<u8>>,
    seq: usize,
}

impl ResponsesEvents {
    pub(crate) fn push(&mut self, kind: &str, fields: Value) {
        let mut data = json!({"type": kind, "sequence_number": self.seq});
        if let (Some(o), Value::Object(f)) = (data.as_object_mut(), fields) {
            o.extend(f);
        }
        self.seq += 1;
        self.chunks.push(sse(Some(kind), &data));
    }

    /// The events pushed since the last call, as one byte run.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.chunks).concat()
    }
}
