//! `tooltape parse`: one raw response body (JSON, SSE, a Gemini stream) decoded and printed as
//! the outcome's JSON, the same JSON form `convert` and the tests read.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::ParseArgs;
use super::exit::CommandResult;
use super::select::{input_name, provider_arg, read_input};
use super::text_protocol;
use tooltape::{ChatRequest, Outcome, Provider, StreamDecoder, decode};

/// A neutral request with nothing but the stream flag (for decoding a body on its own).
pub fn bare_request(stream: bool) -> ChatRequest {
    ChatRequest::empty("", stream)
}

/// The parse contract's JSON: calls, text and finish reasons, or the error alone.
pub fn outcome_json(o: &Outcome) -> Value {
    serde_json::to_value(OutcomeJson(o)).unwrap_or_default()
}

/// The parse contract's JSON, serialized straight from the outcome: `parse` prints outcomes of
/// thousands of calls, and building a `Value` first copied every argument tree.
struct OutcomeJson<'a>(&'a Outcome);

impl serde::Serialize for OutcomeJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let o = self.0;
        if let Some(e) = &o.error {
            #[derive(serde::Serialize)]
            struct ErrorJson<'a> {
                status: u16,
                #[serde(rename = "type")]
                kind: &'a Option<String>,
                code: &'a Option<String>,
                message: &'a str,
            }
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry(
                "error",
                &ErrorJson {
                    status: e.status,
                    kind: &e.kind,
                    code: &e.code,
                    message: &e.message,
                },
            )?;
            return m.end();
        }
        #[derive(serde::Serialize)]
        struct CallJson<'a> {
            id: &'a str,
            name: &'a str,
            arguments: &'a Value,
        }
        let calls: Vec<CallJson<'_>> = o
            .tool_calls
            .iter()
            .map(|c| CallJson {
                id: &c.id,
                name: &c.name,
                arguments: &c.arguments,
            })
            .collect();
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("tool_calls", &calls)?;
        m.serialize_entry("text", &o.text)?;
        m.serialize_entry("finish_reason", &o.finish)?;
        m.serialize_entry("raw_finish_reason", &o.raw_finish)?;
        m.end()
    }
}

/// Prints the parse contract's JSON on one line.
fn print_outcome(o: &Outcome) {
    match serde_json::to_string(&OutcomeJson(o)) {
        Ok(text) => outln!("{text}"),
        Err(_) => outln!("{}", outcome_json(o)),
    }
}

/// Decodes a 2xx stream as it is read, 64 KiB at a time (the decoders give the same outcome for
/// any chunking): the body is never held whole, so a 22 MB stream costs no 22 MB of fresh pages.
fn parse_stream(provider: Provider, file: Option<&Path>, name: &str) -> CommandResult {
    let mut input: Box<dyn Read> = match file {
        Some(p) => Box::new(
            tooltape::input::Bounded::open(p)
                .map_err(|e| format!("{}: cannot read: {e}", p.display()))?,
        ),
        None => Box::new(std::io::stdin().lock()),
    };
    let mut decoder = StreamDecoder::new(provider, &bare_request(true));
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{name}: cannot read: {e}").into()),
        };
        if let Err(e) = decoder.push(&buf[..n]) {
            return Err(format!("{name}: {e}").into());
        }
    }
    match decoder.finish() {
        Ok(o) => {
            print_outcome(&o);
            Ok(())
        }
        Err(e) => Err(format!("{name}: {e}").into()),
    }
}

/// Runs `tooltape parse`.
pub(super) fn parse(a: &ParseArgs) -> CommandResult {
    let provider = provider_arg(&a.provider)?;
    let name = input_name(a.file.as_deref());
    if a.stream && (200..300).contains(&a.status) && provider != Provider::TextProtocol {
        return parse_stream(provider, a.file.as_deref(), &name);
    }
    let body = read_input(a.file.as_deref())?;
    if provider == Provider::TextProtocol {
        let req_path = a.request.as_ref().ok_or_else(|| {
            "parse --provider text-protocol needs --request REQ.json (it configures the parser)"
                .to_string()
        })?;
        let req = tooltape::input::read_to_string(req_path)
            .map_err(|e| format!("{}: cannot read: {e}", req_path.display()))?;
        return text_protocol::run(&req, &body, a.stream, &name);
    }
    let resp = tooltape::HttpResponse {
        status: a.status,
        headers: Default::default(),
        body,
    };
    match decode(provider, &bare_request(a.stream), &resp) {
        Ok(o) => {
            print_outcome(&o);
            Ok(())
        }
        Err(e) => Err(format!("{name}: {e}").into()),
    }
}
