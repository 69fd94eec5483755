//! `tooltape parse-request --provider P [--path PATH] [--dialect D] [FILE]`: decodes one HTTP request of a
//! provider's wire format back to the neutral request and prints it as readable JSON.
//!
//! The input is either a whole request as cassettes store it (`{"method", "path", "query",
//! "body"}`) or a bare JSON body; a bare body is taken as `POST` to `--path`, or to the
//! provider's own path (Gemini has none without a model: `--path` is needed). `--path` may carry
//! a query (`…:streamGenerateContent?alt=sse`) and overrides a whole request's path.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ParseRequestArgs;
use super::exit::{CliError, CommandResult};
use super::select::{provider_arg, read_text};
use tooltape::providers::openai_chat::Dialect;
use tooltape::{HttpRequest, Provider};

/// Builds the request from the input text. `Err` is the message to print after `FILE:`: it
/// starts with `LINE:COL:` for input that is not JSON, with a space otherwise.
fn request_from(provider: Provider, text: &str, path: Option<&str>) -> Result<HttpRequest, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("{}:{}: not JSON: {e}", e.line(), e.column()))?;
    let whole = v.get("path").is_some_and(Value::is_string) && v.get("body").is_some();
    let mut req = if whole {
        let mut r: HttpRequest = serde_json::from_value(v)
            .map_err(|e| format!(" not a request (method, path, query, headers, body): {e}"))?;
        r.headers.clear();
        r
    } else {
        let default = match provider {
            Provider::OpenaiChat | Provider::TextProtocol => tooltape::providers::openai_chat::PATH,
            Provider::OpenaiResponses => tooltape::providers::openai_responses::PATH,
            Provider::Anthropic => tooltape::providers::anthropic::PATH,
            Provider::Gemini if path.is_none() => {
                return Err(
                    " a bare Gemini body needs --path /v1beta/models/MODEL:generateContent \
                            (the model and stream flag are in the path)"
                        .into(),
                );
            }
            Provider::Gemini => "",
        };
        HttpRequest::post(default, v)
    };
    if let Some(p) = path {
        let (p, q) = p.split_once('?').unwrap_or((p, ""));
        req.path = p.to_string();
        req.query = q
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (k.to_string(), v.to_string())
            })
            .collect::<BTreeMap<_, _>>();
    }
    Ok(req)
}

/// Runs `tooltape parse-request`: exit 0 with the JSON; 1 when the input is not a request of
/// that format (the message names the field); 2 for input that is not JSON.
pub(super) fn run(a: &ParseRequestArgs) -> CommandResult {
    let provider = provider_arg(&a.provider)?;
    let dialect = match a.dialect.as_deref() {
        None => None,
        Some(s) => Some(Dialect::from_slug(s).ok_or_else(|| {
            let all: Vec<&str> = Dialect::ALL.iter().map(|d| d.slug()).collect();
            format!("--dialect {s}: unknown; expected one of {}", all.join(", "))
        })?),
    };
    if dialect.is_some() && !matches!(provider, Provider::OpenaiChat | Provider::TextProtocol) {
        return Err(format!("--dialect is for --provider openai-chat, not {provider}").into());
    }
    let (name, text) = read_text(a.file.as_deref())?;
    let req =
        request_from(provider, &text, a.path.as_deref()).map_err(|e| format!("{name}:{e}"))?;
    let decoded = match (provider, dialect) {
        (Provider::OpenaiChat | Provider::TextProtocol, Some(d)) => {
            tooltape::providers::openai_chat::decode_request_as(&req, Some(d))
        }
        _ => tooltape::decode_request(provider, &req),
    };
    let d = decoded.map_err(|e| {
        CliError::FailedWith(format!("{name}: not a valid {provider} request: {e}"))
    })?;
    outln!(
        "{}",
        serde_json::to_string_pretty(&d.to_json()).unwrap_or_default()
    );
    Ok(())
}
