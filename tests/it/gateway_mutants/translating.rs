//! The gateway mutant that translates: tooltape's own proxy library served in-process over routes
//! that change format (`tests/translating-gateway.toml`), with a forwarding layer written here
//! between it and the recording upstream. The faithful layer forwards unchanged and must pass
//! every trial. The mutant layer remembers, per conversation, the reasoning state the last
//! upstream answered with, and when a round of that conversation goes to another API it puts
//! that state into the new API's own field (an Anthropic signature as a Gemini
//! `thoughtSignature`, a Gemini signature as an Anthropic `thinking` block's), as a gateway
//! that caches signatures by conversation does whatever the provider (BerriAI/litellm#15601):
//! the bug the driver mutant `foreign-reasoning` commits. It must fail exactly the rounds
//! continued on another provider (class 20), with the `reasoning` finding.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::{Value, json};
use tooltape::engine::{Cell, TrialResult};
use tooltape::{
    Case, ChatRequest, HttpRequest, HttpResponse, Message, Provider, Proxy, ProxyConfig, discover,
    runtime,
};

use super::{Facts, Format, facts, first_finding, format_of};
use crate::loopback_proxy::{ProxyBody, UpstreamAnswer, read, respond, send, serve};
use crate::scratch::Scratch;

/// The translating routes: Messages, Responses and generateContent callers to each upstream the
/// cases name.
const PROFILE: &str = include_str!("../../translating-gateway.toml");

/// Reasoning carried back on one provider (the mutant must leave it alone), and the two
/// conversations continued on another provider (round 2 on Gemini, on Anthropic).
const CASES: [&str; 3] = [
    "c19_reasoning_state_kept",
    CONTINUE_ON_GEMINI,
    CONTINUE_ON_ANTHROPIC,
];
const CONTINUE_ON_GEMINI: &str = "c20_continue_on_other_provider";
const CONTINUE_ON_ANTHROPIC: &str = "c20_continue_on_anthropic";

/// The proxy's routes, one per upstream, each pointed at the forwarding layer (`{{layer}}`);
/// Gemini's upstream model validates thought signatures (Gemini 3), as `gateways/tooltape.toml`.
const PROXY: &str = r#"listen = "127.0.0.1:0"
upstream_timeout_secs = 60

[[route]]
model = "tt-anthropic"
provider = "anthropic"
base_url = "{{layer}}"
key = "sk-test"

[[route]]
model = "tt-openai-responses"
provider = "openai-responses"
base_url = "{{layer}}"
key = "sk-test"

[[route]]
model = "tt-gemini"
provider = "gemini"
upstream_model = "gemini-3.8-flash"
base_url = "{{layer}}"
key = "sk-test"
"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layer {
    Faithful,
    ForeignReasoning,
}

impl Layer {
    const ALL: [Layer; 2] = [Layer::Faithful, Layer::ForeignReasoning];

    fn slug(self) -> String {
        format!("{self:?}")
    }

    fn name(self) -> &'static str {
        match self {
            Layer::Faithful => "faithful (tooltape's proxy, forwarded unchanged)",
            Layer::ForeignReasoning => {
                "the first provider's reasoning state sent to the next as its own (a signature as Gemini's `thoughtSignature`, as an Anthropic `thinking` block's)"
            }
        }
    }

    /// What a failing trial's findings must contain.
    fn finding(self) -> &'static str {
        match self {
            Layer::Faithful => "",
            Layer::ForeignReasoning => "as its own",
        }
    }

    /// The kinds of finding a trial this layer fails may carry: its own (`reasoning`), and the
    /// upstream's refusal of the state it cannot verify (the 400 the API answers; the simulator
    /// answers it as documented). Anything else would be a second bug.
    fn allows(self, kind: &str) -> bool {
        match self {
            Layer::Faithful => false,
            Layer::ForeignReasoning => matches!(kind, "reasoning" | "refused"),
        }
    }

    /// Whether the trial (as the faithful run saw it) is one this layer must fail: a round that
    /// goes on on another provider after a first answer with calls; every first provider of
    /// these cases answers with reasoning state (a signed thinking block, an encrypted reasoning
    /// item, a signed call). A conversation that stays on one provider is left alone.
    fn should_fail(self, t: &Facts) -> bool {
        match self {
            Layer::Faithful => false,
            Layer::ForeignReasoning => {
                matches!(t.case.as_str(), CONTINUE_ON_GEMINI | CONTINUE_ON_ANTHROPIC) && t.calls > 0
            }
        }
    }
}

/// Per conversation (its first user text, by which the recording upstream attributes requests
/// to trials, one trial per prompt in flight): the API that last answered it with reasoning
/// state, and the first signed or encrypted value of that state.
type Memory = Arc<Mutex<HashMap<String, (Provider, String)>>>;

fn api_of(fmt: Format) -> Provider {
    match fmt {
        Format::Chat => Provider::OpenaiChat,
        Format::Responses => Provider::OpenaiResponses,
        Format::Messages => Provider::Anthropic,
        Format::Gemini => Provider::Gemini,
    }
}

/// The conversation a request body in `api`'s form belongs to: its first user text.
fn conversation(api: Provider, path: &str, body: &Value) -> Option<String> {
    let decoded = tooltape::decode_request(api, &HttpRequest::post(path, body.clone())).ok()?;
    decoded.request.messages.iter().find_map(|m| match m {
        Message::User { content } => Some(content.clone()),
        _ => None,
    })
}

/// The first signed or encrypted value of the reasoning state `api` answered with (thinking
/// signatures, redacted_thinking data, encrypted_content, thought signatures), decoded by the
/// library's response decoders.
fn sealed(api: Provider, stream: bool, answer: &UpstreamAnswer) -> Option<String> {
    let neutral = ChatRequest::new("m").with_stream(stream);
    let resp = HttpResponse {
        status: answer.status,
        headers: [("content-type".to_string(), answer.ctype.clone())].into(),
        body: answer.body.clone(),
    };
    let outcome = tooltape::decode(api, &neutral, &resp).ok()?;
    let fields = ["signature", "data", "encrypted_content", "thoughtSignature"];
    (outcome.opaque.iter())
        .flat_map(|item| fields.iter().filter_map(|k| item.get(*k)?.as_str()))
        .map(str::to_string)
        .chain(
            outcome
                .tool_calls
                .iter()
                .filter_map(|c| c.thought_signature.clone()),
        )
        .find(|v| !v.is_empty())
}

/// The mutation: `sealed` (another API's reasoning state) put into `api`'s own field of every
/// assistant turn with calls in the request body. The cases continue on Gemini and Anthropic
/// only; another target is left as it is.
fn forge(api: Provider, sealed: &str, body: &mut Value) {
    match api {
        Provider::Gemini => {
            let turns = body["contents"].as_array_mut().into_iter().flatten();
            for turn in turns.filter(|t| t["role"] == "model") {
                let parts = turn["parts"].as_array_mut().into_iter().flatten();
                for part in parts.filter(|p| p.get("functionCall").is_some()) {
                    part["thoughtSignature"] = json!(sealed);
                }
            }
        }
        Provider::Anthropic => {
            let turns = body["messages"].as_array_mut().into_iter().flatten();
            for turn in turns.filter(|t| t["role"] == "assistant") {
                let Some(blocks) = turn["content"].as_array_mut() else {
                    continue;
                };
                if blocks.iter().any(|b| b["type"] == "tool_use") {
                    let forged = json!({"type": "thinking", "thinking": "", "signature": sealed});
                    blocks.insert(0, forged);
                }
            }
        }
        _ => {}
    }
}

/// The forwarding layer between the proxy and the recording upstream.
async fn forward(
    layer: Layer,
    memory: Memory,
    upstream: Arc<String>,
    client: reqwest::Client,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    let (parts, bytes) = read(req).await;
    let path = parts.uri.path().to_string();
    let (api, mut body) = match (format_of(&path), serde_json::from_slice::<Value>(&bytes)) {
        (Some(fmt), Ok(v)) => (api_of(fmt), v),
        _ => {
            return match send(&client, &upstream, &parts, bytes).await {
                Ok(a) => respond(a.status, &a.ctype, a.body),
                Err(refused) => refused,
            };
        }
    };
    let stream = body["stream"] == true || path.contains(":streamGenerateContent");
    let key = conversation(api, &path, &body);
    let mut out = bytes;
    let remembered = key.as_ref().and_then(|k| {
        let memory = memory.lock().unwrap_or_else(PoisonError::into_inner);
        memory.get(k).cloned()
    });
    if let (Layer::ForeignReasoning, Some((from, state))) = (layer, remembered)
        && from != api
    {
        forge(api, &state, &mut body);
        out = serde_json::to_vec(&body).unwrap_or_default();
    }
    let answer = match send(&client, &upstream, &parts, out).await {
        Ok(a) => a,
        Err(refused) => return refused,
    };
    if let (Some(k), Some(state)) = (key, sealed(api, stream, &answer)) {
        let mut memory = memory.lock().unwrap_or_else(PoisonError::into_inner);
        memory.insert(k, (api, state));
    }
    respond(answer.status, &answer.ctype, answer.body)
}

/// A scratch root with the chosen cases and the profile.
fn project() -> Scratch {
    let root = Scratch::with_cases("translating-mutants", &CASES);
    std::fs::write(root.join("translating.toml"), PROFILE).unwrap();
    root
}

/// The trials through tooltape's proxy, with `layer` between it and the recording upstream.
fn run_layer(root: &Path, cases: &[Arc<Case>], layer: Layer) -> Vec<TrialResult> {
    let path = root.join("translating.toml");
    let profile = Arc::new(
        tooltape::gateway::load_gateway(root, path.to_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let trials = tooltape::engine::trials(cases, &profile.routes(), None);
    runtime().block_on(async {
        let upstream = Arc::new(tooltape::engine::Upstream::start().await.unwrap());
        let memory = Memory::default();
        let addr = serve(upstream.base_url(), move |u, c, r| {
            forward(layer, Arc::clone(&memory), u, c, r)
        })
        .await;
        let config = PROXY.replace("{{layer}}", &format!("http://{addr}"));
        let config = ProxyConfig::parse(Path::new("proxy.toml"), &config).unwrap();
        let proxy = Proxy::start(config).await.unwrap();
        let url = Some(proxy.base_url());
        crate::scratch::run_through(Arc::clone(&profile), trials, &upstream, url, root).await
    })
}

/// What the translating run adds to the mutant suite: its section of `docs/gateways/mutants.md`,
/// its snapshots (the faithful run's continued trials, the mutant's first failing trial) and
/// its problems (a trial failed or passed against expectation, or without the finding).
pub(super) struct Section {
    pub table: String,
    pub snaps: Vec<(String, String)>,
    pub problems: Vec<String>,
}

pub(super) fn run() -> Section {
    let root = project();
    let discovery = discover(&root);
    assert!(discovery.broken.is_empty(), "{:?}", discovery.broken);
    let cases = tooltape::engine::cases_of(&discovery);
    let faithful = run_layer(&root, &cases, Layer::Faithful);
    let facts: Vec<Facts> = faithful.iter().map(facts).collect();
    let total = faithful.len();
    let mut s = Section {
        table: format!(
            "\n## Translating routes\n\n\
             Each row is a forwarding layer written in `tests/it/gateway_mutants/translating.rs`\n\
             between tooltape's own proxy library (served in-process) and the recording upstream,\n\
             over the translating routes of `tests/translating-gateway.toml` (messages, responses\n\
             and generate-content callers to anthropic, openai-responses and gemini), and the cases\n\
             `c19_reasoning_state_kept` (reasoning carried back, the provider unchanged),\n\
             `c20_continue_on_other_provider` and `c20_continue_on_anthropic` (round 2 on another\n\
             provider than round 1), both modes.\n\n\
             {total} trials per proxy.\n\n\
             | mutant | trials failed | finding expected | first finding |\n| --- | --- | --- | --- |\n"
        ),
        snaps: Vec::new(),
        problems: Vec::new(),
    };
    for layer in Layer::ALL {
        let results = if layer == Layer::Faithful {
            faithful.clone()
        } else {
            run_layer(&root, &cases, layer)
        };
        assert_eq!(results.len(), total);
        judge(layer, &results, &facts, &mut s);
    }
    s
}

/// One layer's row, snapshots and problems.
fn judge(layer: Layer, results: &[TrialResult], facts: &[Facts], s: &mut Section) {
    let total = results.len();
    let (mut failed, mut first) = (0, None);
    for (r, f) in results.iter().zip(facts) {
        assert_eq!(r.id.key(), f.key);
        let fails = r.cell != Cell::Pass;
        let should = layer.should_fail(f);
        let continued = matches!(f.case.as_str(), CONTINUE_ON_GEMINI | CONTINUE_ON_ANTHROPIC);
        if layer == Layer::Faithful && continued {
            let name = format!("Translating__{}", r.id.snapshot_name());
            s.snaps.push((name, tooltape::report::suite::snapshot(r)));
        }
        if fails {
            failed += 1;
            if first.is_none() {
                let name = format!("{}__{}", layer.slug(), r.id.snapshot_name());
                s.snaps.push((name, tooltape::report::suite::snapshot(r)));
                first = Some(first_finding(r));
            }
        }
        if fails != should {
            let want = if should { "fail" } else { "pass" };
            let got = first_finding(r);
            s.problems.push(format!(
                "{}: {} should {want}: {got}",
                layer.name(),
                r.id.key()
            ));
        } else if fails
            && let Some(other) = r.findings.iter().find(|x| !layer.allows(x.kind.slug()))
        {
            s.problems.push(format!(
                "{}: {} fails with another finding than its own: {}",
                layer.name(),
                r.id.key(),
                other.message
            ));
        } else if fails
            && !r
                .findings
                .iter()
                .any(|x| x.message.contains(layer.finding()))
        {
            s.problems.push(format!(
                "{}: {} fails without the finding `{}`: {:?}",
                layer.name(),
                r.id.key(),
                layer.finding(),
                r.findings
            ));
        }
    }
    let expected = facts.iter().filter(|f| layer.should_fail(f)).count();
    if layer != Layer::Faithful {
        assert!(expected > 0, "{} has no trial to fail", layer.name());
    }
    let finding = match layer.finding() {
        "" => "—".to_string(),
        f => format!("`{f}`"),
    };
    let first = first.map_or("—".to_string(), |s| {
        format!("`{}`", s.replace('|', "\\|"))
    });
    let name = layer.name();
    s.table.push_str(&format!(
        "| {name} | {failed} of {total} | {finding} | {first} |\n"
    ));
}
