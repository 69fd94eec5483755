//! The fuzz properties, one per decoder, shared by the cargo-fuzz targets
//! (`tests/fuzz/fuzz_targets/*.rs`) and their bounded deterministic random-input run in
//! `cargo test` (`tests/it/fuzz.rs`). Each takes arbitrary bytes and must not panic; the stream
//! decoders must also give the same outcome for the chunking the input chooses as for the
//! whole body. Memory is bounded by the runner (libFuzzer's `-rss_limit_mb`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tooltape::{
    ChatRequest, HttpRequest, HttpResponse, Provider, Proxy, ProxyConfig, StreamDecoder,
    StrictPolicy, Tool, ToolChoice,
};

/// Statuses a response input can have (its first byte's bits 4-5): success twice as often.
const STATUSES: [u16; 4] = [200, 200, 400, 500];

/// The request a response answers: two tools (one strict-rewritten on `auto`), streamed or not.
pub fn request(stream: bool) -> ChatRequest {
    ChatRequest::new("gpt-4o")
        .with_stream(stream)
        .with_tools([
            Tool {
                allowed_callers: Vec::new(),
                output_schema: None,
                name: "get_weather".into(),
                description: Some("Current weather".into()),
                parameters: json!({"type": "object", "properties": {
                "city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}),
                strict: None,
                eager_input_streaming: false,
                defer_loading: false,
                namespace: None,
            },
            Tool {
                allowed_callers: Vec::new(),
                output_schema: None,
                name: "search".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
                strict: None,
                eager_input_streaming: false,
                defer_loading: false,
                namespace: None,
            },
        ])
        .with_choice(ToolChoice::Auto)
        .with_strict(StrictPolicy::Auto)
}

/// Splits off byte 0 = how many chunk-length bytes follow (at most 16) and those lengths.
fn lengths(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return (&[], &[]);
    };
    rest.split_at(usize::from(n % 17).min(rest.len()))
}

/// Response decoders, buffered and streamed (every framing: SSE, Gemini's JSON array, the text
/// protocol's SSE). Byte 0: provider (bits 0-2, mod 5), streamed (bit 3), status (bits 4-5);
/// then the chunk lengths (see [`lengths`]); the rest is the body.
pub fn response(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let provider = Provider::ALL[usize::from(sel & 7) % Provider::ALL.len()];
    let stream = sel & 8 != 0;
    let status = STATUSES[usize::from(sel >> 4) % STATUSES.len()];
    let (cuts, body) = lengths(rest);
    let req = request(stream);
    let resp = HttpResponse {
        status,
        headers: BTreeMap::new(),
        body: body.to_vec(),
    };
    let whole = tooltape::decode(provider, &req, &resp);
    if !(stream && status == 200) {
        return;
    }
    let mut d = StreamDecoder::new(provider, &req);
    let mut rest = body;
    let mut i = 0;
    let chunked = loop {
        if rest.is_empty() {
            break d.finish();
        }
        let want = cuts
            .get(i % cuts.len().max(1))
            .map_or(1, |&l| usize::from(l).max(1));
        let (piece, tail) = rest.split_at(want.min(rest.len()));
        if let Err(e) = d.push(piece) {
            break Err(e);
        }
        let _ = d.progress().calls.len();
        rest = tail;
        i += 1;
    };
    assert_eq!(
        format!("{whole:?}"),
        format!("{chunked:?}"),
        "{provider}: the chunking {cuts:?} changed the outcome"
    );
}

/// The paths a request input is sent to (byte 0 picks one): every format's own, streamed or not.
const PATHS: [(Provider, &str, &str); 6] = [
    (Provider::OpenaiChat, "/v1/chat/completions", ""),
    (Provider::OpenaiResponses, "/v1/responses", ""),
    (Provider::Anthropic, "/v1/messages", ""),
    (
        Provider::Gemini,
        "/v1beta/models/gemini-3.8-flash:generateContent",
        "",
    ),
    (
        Provider::Gemini,
        "/v1beta/models/m:streamGenerateContent",
        "sse",
    ),
    (Provider::TextProtocol, "/v1/chat/completions", ""),
];

/// Request decoders (the four formats and the text protocol, which is read as Chat). Byte 0
/// picks the format and path; the rest is the body, decoded when it is JSON. A decoded request
/// must encode again or fail closed with a coded error, never panic.
pub fn request_decoder(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let (provider, path, alt) = PATHS[usize::from(sel) % PATHS.len()];
    let mut query = BTreeMap::new();
    if !alt.is_empty() {
        query.insert("alt".to_string(), alt.to_string());
    }
    let req = HttpRequest {
        method: "POST".into(),
        path: path.into(),
        query,
        headers: BTreeMap::new(),
        body,
    };
    if let Ok(decoded) = tooltape::decode_request(provider, &req) {
        let _ = decoded.to_json();
        let _ = tooltape::encode(provider, &decoded.request);
    }
}

thread_local! {
    /// This thread's scratch folder `tooltape-fuzz-…`, removed when the thread ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new()
        .prefix("tooltape-fuzz-")
        .tempdir()
        .expect("a folder in the temporary directory");
}

/// A scratch folder of this thread for `kind` (loaders read files).
fn scratch(kind: &str) -> PathBuf {
    let dir = SCRATCH.with(|d| d.path().join(kind));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// The repository root: the crate's folder (`cargo test`) or two above it (the fuzz crate).
fn repo() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("cases/providers.toml").is_file())
        .unwrap_or(here)
        .to_path_buf()
}

/// The case loader over `data` as `cases/fuzz.toml` (with the repository's tools and providers).
pub fn case(data: &[u8]) {
    let root = repo().join("cases");
    let Ok(providers) = tooltape::case::load_providers(&root) else {
        return;
    };
    let path = scratch("case").join("fuzz.toml");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let _ = tooltape::case::load_case(&path, &root.join("tools"), &providers);
}

/// The cassette loader over `data` as a cassette file; a loaded one's responses are rebuilt.
pub fn cassette(data: &[u8]) {
    let path = scratch("cassette").join("fuzz.json");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(Some((c, _))) = tooltape::cassette::load(&path) {
        for it in &c.interactions {
            let _ = it.response.to_http();
        }
        let _ = tooltape::cassette::to_text(&c);
    }
}

/// The gateway profile loader over `data` as `gateways/fuzz.toml`.
pub fn profile(data: &[u8]) {
    let root = scratch("profile");
    let _ = std::fs::create_dir_all(root.join("gateways"));
    if std::fs::write(root.join("gateways/fuzz.toml"), data).is_err() {
        return;
    }
    if let Ok(p) = tooltape::gateway::load_gateway(&root, "fuzz") {
        let _ = p.routes();
    }
}

/// The proxy's reading of a request (route, limits, JSON, rejections, decoder). Byte 0 picks
/// the method and path (the formats' own, and some that are not); the rest is the body. A
/// refusal must be a 4xx whose body is JSON (the client's envelope).
pub fn proxy_request(data: &[u8]) {
    use std::sync::OnceLock;
    static CONFIG: OnceLock<ProxyConfig> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let mut toml = String::from("max_json_depth = 24\n");
        for p in Provider::ALL {
            toml.push_str(&format!(
                "[[route]]\nmodel = \"to-{p}\"\nprovider = \"{p}\"\nbase_url = \"http://127.0.0.1:9\"\n"
            ));
        }
        ProxyConfig::parse(Path::new("fuzz.toml"), &toml).expect("the fuzz proxy config")
    });
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    const TARGETS: [(&str, &str, Option<&str>); 9] = [
        ("POST", "/v1/chat/completions", None),
        ("POST", "/chat/completions", None),
        ("POST", "/v1/responses", None),
        ("POST", "/v1/messages", None),
        ("POST", "/v1beta/models/to-gemini:generateContent", None),
        (
            "POST",
            "/v1beta/models/to-gemini:streamGenerateContent",
            Some("alt=sse"),
        ),
        ("GET", "/v1/messages", None),
        ("POST", "/v1/nothing", None),
        (
            "POST",
            "/v1beta/models/:generateContent",
            Some("alt=sse&key=k"),
        ),
    ];
    let (method, path, query) = TARGETS[usize::from(sel) % TARGETS.len()];
    if let Err((status, answer)) = Proxy::read_request(config, method, path, query, body) {
        assert!((400..500).contains(&status), "status {status}");
        assert!(
            serde_json::from_slice::<Value>(&answer).is_ok(),
            "a refusal that is not JSON: {}",
            String::from_utf8_lossy(&answer)
        );
    }
}

/// The MCP answer reader: `data` as one `tools/list` result (what a server sends, untrusted),
/// read as `tooltape mcp` reads each page, then every tool judged for every target, the report
/// rendered in its four forms and the tools written as case files. No panic; a verdict per
/// target for every tool kept; never more tools than the limit; the OpenAI strict transform
/// refuses with reasons or yields a schema its checker accepts, and Gemini's `parameters`, when
/// chosen, passes the `parameters` checker.
pub fn mcp_tools(data: &[u8]) {
    use tooltape::mcp::{self, Limits, Listing, Report, ServerInfo, Target};
    let limits = Limits {
        max_tools: 16,
        max_schema_bytes: 64 * 1024,
        ..Limits::default()
    };
    let Ok((tools, _cursor)) = mcp::read_tools_page(data, limits) else {
        return;
    };
    assert!(tools.len() <= limits.max_tools);
    let listing = Listing {
        server: ServerInfo {
            name: "fuzz".into(),
            version: "0".into(),
        },
        tools,
        truncated: None,
    };
    let report = Report::of(&listing);
    for t in &report.tools {
        assert_eq!(t.verdicts.len(), Target::ALL.len(), "{}", t.name);
    }
    for listed in &listing.tools {
        strict_holds(&listed.tool.parameters);
    }
    let _ = (
        mcp::json(&report),
        mcp::terminal(&report),
        mcp::markdown(&report),
    );
    let _ = mcp::junit(&report, "2026-01-01T00:00:00");
    let _ = mcp::case_files(&listing);
}

/// The strict transform's contract on any schema: refused with reasons, or accepted by the
/// checker; Gemini's `parameters` accepted by its checker.
fn strict_holds(schema: &serde_json::Value) {
    use tooltape::Provider;
    use tooltape::schema::{check, strict_parameters};
    match strict_parameters(Provider::OpenaiResponses, schema) {
        Ok(s) => assert_eq!(check(Provider::OpenaiResponses, &s.schema), [], "{schema}"),
        Err(reasons) => assert!(!reasons.is_empty(), "{schema}"),
    }
    if let Ok(s) = strict_parameters(Provider::Gemini, schema)
        && let Some(p) = s.schema.get("parameters")
    {
        assert_eq!(check(Provider::Gemini, p), [], "{schema}");
    }
}
