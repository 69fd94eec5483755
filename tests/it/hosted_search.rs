//! Hosted web search policy, end to end: REQUIRED never silently becomes AUTO, and the support
//! cache steps through expiry against the simulator with a manual clock.

use crate::scratch::repo;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tooltape::{
    ChatRequest, ChoiceSpec, Endpoint, HostedTool, Provider, SimConfig, Simulator, StrictPolicy,
    Tool, ToolChoice, capability::forces_search, capability::wire_tool_type, discover, encode,
    model::AllowedMode, model::Grounding, run::SupportCache, run::TrialRun, run_trial,
};

fn required_request(model: &str, choice: Option<ToolChoice>, with_function: bool) -> ChatRequest {
    let tools = if with_function {
        vec![Tool {
            allowed_callers: Vec::new(),
            output_schema: None,
            name: "get_weather".into(),
            description: None,
            parameters: serde_json::json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
            strict: None,
            eager_input_streaming: false,
            defer_loading: false,
            namespace: None,
        }]
    } else {
        Vec::new()
    };
    ChatRequest::new(model)
        .with_user("search")
        .with_tools(tools)
        .with_hosted(HostedTool::WebSearch {
            grounding: Grounding::Required,
            variant: None,
        })
        .with_choice(choice)
        .with_strict(StrictPolicy::Auto)
}

/// Every REQUIRED request either forces the search on the wire or is refused before sending:
/// over every shipped trial, and over a provider × model × tool_choice × thinking matrix.
#[test]
fn required_never_silently_becomes_auto() {
    let mut checked = 0;
    for trial in discover(repo())
        .trials
        .iter()
        .filter(|t| t.requires_grounding())
    {
        let req = trial.first_request();
        if let Ok(enc) = encode(trial.provider, &req) {
            assert!(
                forces_search(trial.provider, &enc.request.body),
                "{}: REQUIRED sent without forcing the search: {}",
                trial.name(),
                enc.request.body
            );
        }
        checked += 1;
    }
    assert!(checked >= 5, "no shipped REQUIRED trials found");
    let choices = [
        None,
        Some(ToolChoice::Auto),
        Some(ToolChoice::None),
        Some(ToolChoice::Required),
        Some(ToolChoice::Forced("get_weather".into())),
        Some(ToolChoice::Allowed {
            mode: AllowedMode::Auto,
            tools: vec!["get_weather".into()],
        }),
    ];
    let mut sent = 0;
    for provider in Provider::ALL {
        for model in [
            "gpt-5",
            "gpt-5-mini",
            "o3",
            "gpt-4.1",
            "claude-haiku-4-5",
            "gemini-3.8-flash",
        ] {
            for choice in &choices {
                for with_function in [false, true] {
                    for thinking in [None, Some(2048)] {
                        let mut req = required_request(model, choice.clone(), with_function);
                        req.thinking = thinking;
                        if let Ok(enc) = encode(provider, &req) {
                            sent += 1;
                            let forced = enc
                                .request
                                .body
                                .pointer("/tool_choice/type")
                                .and_then(|t| t.as_str());
                            assert!(
                                !(provider == Provider::Anthropic
                                    && enc.request.body.get("thinking").is_some()
                                    && matches!(forced, Some("tool" | "any"))),
                                "{model}: forced tool_choice sent with thinking: the API refuses it"
                            );
                            assert!(
                                forces_search(provider, &enc.request.body),
                                "{provider} {model} {choice:?} thinking={thinking:?}: REQUIRED sent without forcing the search: {}",
                                enc.request.body
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(
        sent > 0,
        "the matrix never produced a request: the test would prove nothing"
    );
}

/// The cache is consulted before the first attempt, remembers "unsupported" for 15 minutes,
/// then lets the variant be tried again.
#[test]
fn support_cache_expires_and_web_search_is_retried() {
    let trial = discover(repo())
        .trials
        .into_iter()
        .find(|t| t.name() == "web_search_fallback::openai-responses::omitted::buffered")
        .expect("the fallback case ships");
    assert_eq!(trial.choice, ChoiceSpec::Omitted);
    let now = Arc::new(Mutex::new(Instant::now()));
    let clock = Arc::clone(&now);
    let cache = SupportCache::with_clock(SupportCache::DEFAULT_TTL, move || *clock.lock().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let sim = Simulator::start(SimConfig::default()).await.unwrap();
        let scenario = trial.case.file.simulate.header_value();
        let endpoint = Endpoint {
            base_url: sim.base_url(),
            key: Some("test-key".into()),
            extra_headers: vec![("x-tooltape-scenario".into(), scenario)],
        };
        let client = tooltape::run::client(Duration::from_secs(10));
        let attempts = |r: &TrialRun| -> Vec<String> {
            r.exchanges
                .iter()
                .map(|e| {
                    wire_tool_type(Provider::OpenaiResponses, &e.encoded.request.body)
                        .unwrap_or_default()
                })
                .collect()
        };
        let first = run_trial(&client, &trial, &endpoint, &cache).await;
        assert_eq!(
            attempts(&first),
            ["web_search", "web_search_preview"],
            "cold cache: fallback"
        );
        *now.lock().unwrap() += Duration::from_secs(14 * 60);
        let second = run_trial(&client, &trial, &endpoint, &cache).await;
        assert_eq!(
            attempts(&second),
            ["web_search_preview"],
            "warm cache: straight to the preview variant"
        );
        *now.lock().unwrap() += Duration::from_secs(60);
        let third = run_trial(&client, &trial, &endpoint, &cache).await;
        assert_eq!(
            attempts(&third),
            ["web_search", "web_search_preview"],
            "after 15 minutes web_search is tried again"
        );
        assert_eq!(sim.requests_served(), 5);
    });
}
