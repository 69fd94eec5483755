//! Gateway trials (case × route × choice × mode) and running them: the client request in the
//! route's inbound format, the recorded upstream exchange, the checks, the cell.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::check::{self, Finding, RequestView, Severity};
use super::events;
use super::profile::{LoadedProfile, Route};
use super::upstream::{Exchange, Upstream};
use crate::case::{Case, ChoiceSpec, Mode, Trial};
use crate::http::{HttpRequest, HttpResponse};
use crate::model::{ChatRequest, Outcome, Provider};
use crate::run::Endpoint;

/// One gateway trial.
#[derive(Clone, Debug)]
pub struct GatewayTrial {
    pub case: Arc<Case>,
    pub route: Route,
    pub choice: ChoiceSpec,
    pub mode: Mode,
}

impl GatewayTrial {
    /// `case::route::choice::mode`: what known-failure patterns match.
    pub fn key(&self) -> String {
        format!(
            "{}::{}::{}::{}",
            self.case.name,
            self.route.name(),
            self.choice.slug(),
            self.mode.slug()
        )
    }

    /// `gateway::NAME::case::route::choice::mode`.
    pub fn name(&self, gateway: &str) -> String {
        format!("gateway::{gateway}::{}", self.key())
    }

    /// `case::choice::mode`: the matrix row.
    pub fn row(&self) -> String {
        format!(
            "{}::{}::{}",
            self.case.name,
            self.choice.slug(),
            self.mode.slug()
        )
    }

    fn prompt(&self) -> String {
        self.case
            .file
            .messages
            .iter()
            .rev()
            .map(|m| m.content.clone())
            .next()
            .unwrap_or_default()
    }
}

/// Each case of a discovery once, in discovery order (a case expands into many trials).
pub fn cases_of(discovery: &crate::case::Discovery) -> Vec<Arc<Case>> {
    let mut cases: Vec<Arc<Case>> = Vec::new();
    for t in &discovery.trials {
        if !cases.iter().any(|c| Arc::ptr_eq(c, &t.case)) {
            cases.push(Arc::clone(&t.case));
        }
    }
    cases
}

/// Every applicable trial: cases that list both the route's inbound and upstream providers.
pub fn trials(cases: &[Arc<Case>], routes: &[Route], filter: Option<&str>) -> Vec<GatewayTrial> {
    let mut out = Vec::new();
    for case in cases {
        for route in routes {
            if !case.providers.contains(&route.inbound.0)
                || !case.providers.contains(&route.upstream)
            {
                continue;
            }
            for choice in &case.choices {
                for mode in &case.modes {
                    let t = GatewayTrial {
                        case: Arc::clone(case),
                        route: route.clone(),
                        choice: choice.clone(),
                        mode: *mode,
                    };
                    if filter.is_none_or(|f| t.key().contains(f)) {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

/// A matrix cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "kebab-case")]
pub enum Cell {
    Pass,
    Fail(String),
    /// A known failure (its reason).
    Known(String),
    /// The gateway refused cleanly with a 4xx naming the reason (nothing sent upstream).
    Unsupported(String),
    /// The client side cannot express this trial in the inbound format (the encoder refused).
    NotApplicable(String),
    Broken(String),
}

impl Cell {
    /// Whether this result is expected (exit status 0).
    pub fn expected(&self) -> bool {
        matches!(
            self,
            Cell::Pass | Cell::Known(_) | Cell::Unsupported(_) | Cell::NotApplicable(_)
        )
    }
}

/// Everything one trial produced: the snapshot's content.
#[derive(Clone, Debug, Serialize)]
pub struct TrialResult {
    pub name: String,
    #[serde(skip)]
    pub key: String,
    #[serde(skip)]
    pub row: String,
    #[serde(skip)]
    pub route: String,
    pub client_request: Value,
    pub upstream_request: Option<Value>,
    pub upstream_answer: Option<String>,
    pub downstream_status: Option<u16>,
    pub downstream_outcome: Option<Outcome>,
    pub findings: Vec<Finding>,
    pub cell: Cell,
    /// tooltape's own time for this trial (encode, decode, checks), excluding the wait.
    #[serde(skip)]
    pub own_time: Duration,
    #[serde(skip)]
    pub downstream_body: Vec<u8>,
    /// One entry per request the client sent through the gateway (first exchange, then rounds).
    #[serde(skip)]
    pub requests: Vec<RequestTiming>,
}

/// One client request's times, paired with what the upstream held for that same request: the
/// exchanges recorded while it was the only request in flight with its trial's prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestTiming {
    /// Client: send → answer complete.
    pub client: Duration,
    /// Sum of the upstream's hold times over this request's exchanges; `None` when nothing was
    /// sent upstream or an exchange's time is missing.
    pub upstream: Option<Duration>,
    /// Client: send → first tool-call delta decoded (streamed answers only).
    pub first_call: Option<Duration>,
    pub streamed: bool,
    /// Exchanges the gateway made upstream for this request (retries count).
    pub exchanges: usize,
}

impl RequestTiming {
    fn of(timing: crate::run::Timing, streamed: bool, exchanges: &[Exchange]) -> RequestTiming {
        let upstream = if exchanges.is_empty() {
            None
        } else {
            exchanges
                .iter()
                .map(Exchange::held)
                .sum::<Option<Duration>>()
        };
        RequestTiming {
            client: timing.complete,
            upstream,
            first_call: timing.first_call,
            streamed,
            exchanges: exchanges.len(),
        }
    }

    /// The gateway's added time in milliseconds: client time minus upstream time (negative only
    /// if the gateway answered before upstream finished, e.g. a cached answer).
    pub fn added_ms(&self) -> Option<f64> {
        self.upstream
            .map(|u| (self.client.as_secs_f64() - u.as_secs_f64()) * 1000.0)
    }
}

/// What upstream answered, decoded. The client reads its answer as `inbound` (its decoder drops a null the strict rewrite of its
/// own request added for an optional property), so the expected outcome gets the same reading:
/// a transparent gateway's answer, as the client sees it.
fn upstream_outcome(
    target: Provider,
    inbound: Provider,
    req: &crate::model::ChatRequest,
    ex: &Exchange,
) -> Option<Outcome> {
    let mut neutral = req.clone();
    neutral.stream = ex.streamed;
    let resp = HttpResponse {
        status: ex.status,
        headers: ex.headers.clone(),
        body: ex.body(),
    };
    let mut outcome = crate::providers::decode(target, &neutral, &resp).ok()?;
    crate::schema::restore_optional(inbound, &neutral, &mut outcome);
    Some(outcome)
}

/// Runs one trial against the gateway at `gateway_url`, upstream recorded by `upstream`.
pub(super) async fn run_one(
    client: &reqwest::Client,
    profile: &LoadedProfile,
    upstream: &Upstream,
    gateway_url: &str,
    trial: &GatewayTrial,
) -> TrialResult {
    let t0 = Instant::now();
    let inbound = trial.route.inbound.0;
    let target = trial.route.upstream;
    let base = Trial {
        case: Arc::clone(&trial.case),
        provider: inbound,
        choice: trial.choice.clone(),
        mode: trial.mode,
    };
    let mut req = base.first_request();
    req.model = trial.route.model.clone();
    let mut result = TrialResult {
        name: trial.name(&profile.name),
        key: trial.key(),
        row: trial.row(),
        route: trial.route.name(),
        client_request: Value::Null,
        upstream_request: None,
        upstream_answer: None,
        downstream_status: None,
        downstream_outcome: None,
        findings: Vec::new(),
        cell: Cell::Pass,
        own_time: Duration::ZERO,
        downstream_body: Vec::new(),
        requests: Vec::new(),
    };
    let encoded = match crate::providers::encode(inbound, &req) {
        Ok(e) => e,
        Err(e) => {
            result.cell =
                Cell::NotApplicable(format!("the {} encoder refuses: {e}", inbound.slug()));
            return result;
        }
    };
    result.client_request =
        serde_json::json!({"path": encoded.request.path_and_query(), "body": encoded.request.body});
    let mut headers: Vec<(String, String)> = profile.profile.headers.clone().into_iter().collect();
    headers.extend(trial.route.headers.iter().map(|(k, v)| {
        (
            k.clone(),
            super::profile::fill(v, &[("upstream", upstream.base_url().as_str())]),
        )
    }));
    let endpoint = Endpoint {
        base_url: gateway_url.to_string(),
        key: None,
        extra_headers: headers,
    };
    // The client's request is one its own API rejects, as the case expects: the gateway must
    // answer that API's 4xx (itself, or upstream's mapped back), and upstream findings that
    // only restate the client's invalid content are not the gateway's.
    let invalid = client_fault(&base, &encoded.request.body);
    let prompt = trial.prompt();
    upstream.open(&prompt, &trial.case.file.simulate);
    let mut waited = Instant::now();
    let sent = crate::run::send_timed(client, &endpoint, inbound, &req, &encoded.request).await;
    let exchanges = upstream.close(&prompt);
    let wait = waited.elapsed();
    waited = Instant::now();
    let (response, outcome) = match sent {
        Ok((response, outcome, timing)) => {
            result
                .requests
                .push(RequestTiming::of(timing, req.stream, &exchanges));
            (response, outcome)
        }
        Err(e) => {
            result.cell = Cell::Broken(e);
            result.own_time = t0.elapsed().saturating_sub(wait);
            return result;
        }
    };
    result.downstream_status = Some(response.status);
    result.downstream_outcome = outcome.as_ref().ok().cloned();
    result.downstream_body = response.body.clone();
    let Some(ex) = exchanges.last() else {
        if invalid {
            let mut findings = check::invalid_request(
                response.status,
                outcome.as_ref().map_err(ToString::to_string),
            );
            result.cell = cell_of(&mut findings);
            result.findings = findings;
            result.own_time = t0.elapsed().saturating_sub(wait);
            return result;
        }
        let message = outcome
            .as_ref()
            .ok()
            .and_then(|o| o.error.as_ref().map(|e| e.message.clone()))
            .unwrap_or_else(|| {
                String::from_utf8_lossy(&response.body)
                    .chars()
                    .take(200)
                    .collect()
            });
        result.cell = if (400..500).contains(&response.status) {
            Cell::Unsupported(format!("{}: {}", response.status, clip(&message)))
        } else {
            Cell::Broken(format!(
                "nothing sent upstream; answered {}: {}",
                response.status,
                clip(&message)
            ))
        };
        result.own_time = t0.elapsed().saturating_sub(wait);
        return result;
    };
    let sent_body: Value = serde_json::from_slice(&ex.request.body).unwrap_or(Value::Null);
    let actual_target = target_of_path(&ex.request.path, target);
    result.upstream_request = Some(serde_json::json!({
        "method": ex.request.method, "path": ex.request.path, "query": ex.request.query, "body": sent_body
    }));
    result.upstream_answer = Some(String::from_utf8_lossy(&ex.body()).into_owned());
    // Upstream: by meaning, both ends read by the project's request decoders.
    let mut decode_findings = Vec::new();
    // What the client sent, as sent (its strict flags and sanitized schemas included).
    // The gateway only sees this request: the project's own encoder is judged on it too (a
    // Responses client's strict-rewritten tools, an Anthropic client's allowed subset).
    // A wire carries no strict policy (decoded requests say `Off`): the case's applies.
    let client_req = crate::providers::decode_request(inbound, &encoded.request).map_or_else(
        |_| req.clone(),
        |d| ChatRequest {
            strict: req.strict,
            ..d.request
        },
    );
    let client_view = RequestView::of(&client_req);
    let sent_http = HttpRequest {
        method: ex.request.method.clone(),
        path: ex.request.path.clone(),
        query: ex.request.query.clone(),
        headers: Default::default(),
        body: sent_body.clone(),
    };
    let sent_view = match crate::providers::decode_request(actual_target, &sent_http) {
        Ok(d) => RequestView::of(&d.request),
        Err(e) => {
            decode_findings.push(Finding {
                severity: Severity::Breaking,
                side: "upstream",
                message: format!(
                    "the request sent to {} is not a well-formed request of its format: {e}",
                    actual_target.slug()
                ),
            });
            RequestView::default()
        }
    };
    let ours = crate::providers::encode(actual_target, &client_req)
        .ok()
        .and_then(|e| crate::providers::decode_request(actual_target, &e.request).ok())
        .map(|d| RequestView::of(&d.request));
    // An invalid tool the client's own API rejects too is the client's fault, not the gateway's.
    let rejection = crate::simulate::wire_rejection(actual_target, &sent_body).filter(|_| {
        !(invalid && crate::simulate::wire_rejection(inbound, &encoded.request.body).is_some())
    });
    let mut findings = decode_findings;
    if actual_target == Provider::TextProtocol {
        // Tools and choice travel as injected prose: the instructions must be the ones
        // `src/inject/` builds for the client's request as sent (its tools as on the wire), as
        // the project's encoder sends them.
        let ours_body = crate::providers::encode(actual_target, &client_req)
            .ok()
            .map(|e| e.request.body);
        findings.extend(check::injected(&sent_body, ours_body.as_ref()));
        findings.extend(check::results(
            &client_view,
            &check::text_protocol_view(&sent_body),
        ));
    } else {
        findings.extend(check::upstream(
            &client_view,
            &sent_view,
            ours.as_ref(),
            actual_target,
            rejection,
            base.requires_grounding(),
        ));
    }
    if actual_target != target {
        findings.push(Finding {
            // Chat Completions and Responses are the same vendor's two APIs: a bridge choice.
            severity: if is_openai(actual_target) && is_openai(target) {
                Severity::Cosmetic
            } else {
                Severity::Breaking
            },
            side: "upstream",
            message: format!(
                "sent to {} instead of {}",
                actual_target.slug(),
                target.slug()
            ),
        });
    }
    // An upstream error the case did not provoke: upstream refused what the gateway sent (its
    // key, its request), so nothing the trial is about was exercised.
    // For a client request invalid in its own API, only upstream's refusal of that same content
    // is provoked: a refusal of anything else (a field the gateway left out) is the gateway's.
    let provoked = trial.case.file.simulate.error.is_some()
        || if invalid {
            crate::simulate::request_rejection(actual_target, &sent_body).is_some()
        } else {
            trial
                .case
                .file
                .expect
                .iter()
                .any(|e| e.get_ref().error_status.is_some())
        };
    if ex.status >= 400 && !provoked {
        findings.push(Finding {
            severity: Severity::Breaking,
            side: "upstream",
            message: format!(
                "upstream refused the gateway's request with {}: {}",
                ex.status,
                clip(&error_message(&ex.body()))
            ),
        });
    }
    // Downstream: against what upstream answered.
    let expected = upstream_outcome(actual_target, inbound, &req, ex);
    if invalid {
        findings.extend(check::invalid_request(
            response.status,
            outcome.as_ref().map_err(ToString::to_string),
        ));
    } else {
        findings.extend(check::downstream(
            inbound,
            response.status,
            outcome.as_ref().map_err(ToString::to_string),
            ex.status,
            expected.as_ref(),
        ));
    }
    if !invalid && req.stream && response.is_success() && ex.status < 400 {
        let got = events::shape(inbound, &response.body);
        let up = ex
            .streamed
            .then(|| events::shape(actual_target, &ex.body()));
        let broken = expected.as_ref().and_then(check::broken).is_some();
        findings.extend(check::stream(&got, up.as_ref(), inbound, broken));
    }
    // Follow-up rounds: the tool results sent back through the gateway, checked upstream (a
    // result must answer a call of the conversation the gateway sent).
    if !invalid
        && response.is_success()
        && let Ok(first) = &outcome
        && first.error.is_none()
    {
        let (calls, rounds) = (first.clone(), &trial.case.file.rounds);
        let mut prev = req.clone();
        let mut last = calls;
        for (n, round) in rounds.iter().enumerate() {
            if last.tool_calls.is_empty() {
                break;
            }
            let next = crate::run::follow_up(prev, &last, round, &trial.choice);
            let Ok(enc) = crate::providers::encode(inbound, &next) else {
                break;
            };
            let round_invalid = client_fault(&base, &enc.request.body);
            upstream.open(&prompt, &trial.case.file.simulate);
            let w = Instant::now();
            let sent =
                crate::run::send_timed(client, &endpoint, inbound, &next, &enc.request).await;
            let exchanges = upstream.close(&prompt);
            waited += w.elapsed();
            let sent = sent.map(|(response, outcome, timing)| {
                result
                    .requests
                    .push(RequestTiming::of(timing, next.stream, &exchanges));
                (response, outcome)
            });
            let Some(ex) = exchanges.last() else {
                if round_invalid {
                    findings.extend(round_answer(n, &sent, None));
                } else {
                    findings.push(Finding {
                        severity: Severity::Breaking,
                        side: "upstream",
                        message: format!("round {}: nothing sent upstream", n + 1),
                    });
                }
                break;
            };
            let body: Value = serde_json::from_slice(&ex.request.body).unwrap_or(Value::Null);
            let target = target_of_path(&ex.request.path, target);
            let http = HttpRequest {
                method: ex.request.method.clone(),
                path: ex.request.path.clone(),
                query: ex.request.query.clone(),
                headers: Default::default(),
                body,
            };
            let client_view = crate::providers::decode_request(inbound, &enc.request)
                .map_or_else(|_| RequestView::of(&next), |d| RequestView::of(&d.request));
            // The text protocol carries calls and results as prose in a Chat Completions body.
            let sent_view = if target == Provider::TextProtocol {
                Some(check::text_protocol_view(&http.body))
            } else {
                crate::providers::decode_request(target, &http)
                    .ok()
                    .map(|d| RequestView::of(&d.request))
            };
            if let Some(sent_view) = sent_view {
                for mut f in check::upstream(&client_view, &sent_view, None, target, None, false)
                    .into_iter()
                    .filter(|f| f.message.contains("tool result"))
                {
                    f.message = format!("round {}: {}", n + 1, f.message);
                    findings.push(f);
                }
            }
            if round_invalid {
                if ex.status >= 400
                    && crate::simulate::request_rejection(target, &http.body).is_none()
                {
                    findings.push(Finding {
                        severity: Severity::Breaking,
                        side: "upstream",
                        message: format!(
                            "round {}: upstream refused the gateway's request with {}: {}",
                            n + 1,
                            ex.status,
                            clip(&error_message(&ex.body()))
                        ),
                    });
                }
                findings.extend(round_answer(n, &sent, None));
                break;
            }
            findings.extend(round_answer(n, &sent, Some(ex.status)));
            last = match sent {
                Ok((_, Ok(o))) if o.error.is_none() => o,
                _ => break,
            };
            prev = next;
        }
    }
    result.cell = cell_of(&mut findings);
    result.findings = findings;
    result.own_time = t0.elapsed().saturating_sub(wait) + waited.elapsed();
    result
}

/// The cell of a trial's findings (sorted, most severe first): the first non-cosmetic one fails.
fn cell_of(findings: &mut [Finding]) -> Cell {
    findings.sort_by_key(|f| f.severity);
    match findings.iter().find(|f| f.severity != Severity::Cosmetic) {
        Some(first) => Cell::Fail(format!("{}: {}", first.side, first.message)),
        None => Cell::Pass,
    }
}

/// Whether `body`, a request of the trial's format (its provider is the route's inbound), is
/// the client's own fault: the case expects a 4xx for that format and the format's API rejects
/// the request's own content (an invalid tool, a result answering no call), by the simulator's
/// rules. Errors the scenario provokes upstream come with valid requests and are not this.
pub(super) fn client_fault(trial: &Trial, body: &Value) -> bool {
    trial.expectations().iter().any(|e| {
        e.get_ref()
            .error_status
            .is_some_and(|s| (400..500).contains(&s))
    }) && crate::simulate::request_rejection(trial.provider, body).is_some()
}

/// Downstream check of a follow-up round's answer. `upstream`: `None` when the client's request
/// was invalid in its own API (the answer must be its 4xx error); else the status upstream gave
/// the round, where an error the gateway makes of a success is breaking.
fn round_answer(
    n: usize,
    sent: &Result<(HttpResponse, Result<Outcome, crate::model::DecodeError>), String>,
    upstream: Option<u16>,
) -> Vec<Finding> {
    let round = |f: Finding| Finding {
        message: format!("round {}: {}", n + 1, f.message),
        ..f
    };
    let (response, outcome) = match sent {
        Ok(r) => r,
        Err(e) => {
            return vec![Finding {
                severity: Severity::Breaking,
                side: "downstream",
                message: format!("round {}: no answer: {}", n + 1, clip(e)),
            }];
        }
    };
    let got = outcome.as_ref().map_err(ToString::to_string);
    let Some(up) = upstream else {
        return check::invalid_request(response.status, got)
            .into_iter()
            .map(round)
            .collect();
    };
    let error = got.as_ref().ok().and_then(|o| o.error.as_ref());
    if up < 400 && (!response.is_success() || error.is_some()) {
        let message = error.map_or_else(|| error_message(&response.body), |e| e.message.clone());
        return vec![round(Finding {
            severity: Severity::Breaking,
            side: "downstream",
            message: format!(
                "gateway answered {} ({}) to an upstream success",
                response.status,
                clip(&message)
            ),
        })];
    }
    Vec::new()
}

/// The message of an error envelope (`error.message`, `message`, `error` as a string), else the
/// body; without request ids, so that a known failure's reason stays the same between runs.
fn error_message(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let v = v.as_array().and_then(|a| a.first()).unwrap_or(&v);
    ["/error/message", "/message", "/error"]
        .iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_str))
        .map_or_else(
            || String::from_utf8_lossy(body).into_owned(),
            str::to_string,
        )
}

fn clip(s: &str) -> String {
    let c: String = s.chars().take(160).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}

/// Applies the profile's known failures: a failing trial it names is `Known`; a passing one
/// fails until the entry is removed, unless the entry is `flaky` (the gateway fails it only
/// sometimes).
pub(super) fn apply_known(profile: &LoadedProfile, r: &mut TrialResult) {
    let Some(k) = profile.known_failure(&r.key) else {
        return;
    };
    let at = profile.locate(k.span());
    match &r.cell {
        Cell::Fail(_) | Cell::Broken(_) => r.cell = Cell::Known(k.get_ref().reason.clone()),
        Cell::Pass if !k.get_ref().flaky => {
            r.cell = Cell::Fail(format!("{at}: known failure now passes: remove it"));
        }
        _ => {}
    }
}

/// Stream and buffered agree: the stream trial of a (case, route, choice) makes the same calls.
pub(super) fn cross_mode(results: &mut [TrialResult]) {
    let mut buffered: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in results.iter() {
        if let (Some(stem), Some(o)) = (r.key.strip_suffix("::buffered"), &r.downstream_outcome)
            && matches!(r.cell, Cell::Pass)
        {
            buffered.insert(
                stem.to_string(),
                o.tool_calls.iter().map(|c| c.name.clone()).collect(),
            );
        }
    }
    for r in results.iter_mut() {
        let Some(stem) = r.key.strip_suffix("::stream") else {
            continue;
        };
        let (Some(b), Some(o)) = (buffered.get(stem), &r.downstream_outcome) else {
            continue;
        };
        let s: Vec<String> = o.tool_calls.iter().map(|c| c.name.clone()).collect();
        if &s != b && matches!(r.cell, Cell::Pass) {
            let message = format!(
                "stream calls [{}] differ from buffered [{}]",
                s.join(", "),
                b.join(", ")
            );
            r.findings.push(Finding {
                severity: Severity::Behaviour,
                side: "downstream",
                message: message.clone(),
            });
            r.cell = Cell::Fail(format!("downstream: {message}"));
        }
    }
}

/// Runs every trial: trials sharing a prompt one after another (the upstream attributes
/// requests by prompt), prompts in parallel up to `concurrency`.
pub async fn run_all(
    profile: Arc<LoadedProfile>,
    upstream: &Arc<Upstream>,
    gateway_url: &str,
    trials: Vec<GatewayTrial>,
    concurrency: usize,
) -> Vec<TrialResult> {
    let client = crate::run::client(Duration::from_secs(60));
    let mut groups: BTreeMap<String, Vec<(usize, GatewayTrial)>> = BTreeMap::new();
    for (i, t) in trials.into_iter().enumerate() {
        groups.entry(t.prompt()).or_default().push((i, t));
    }
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (_, group) in groups {
        let (client, upstream, sem, url, profile) = (
            client.clone(),
            Arc::clone(upstream),
            Arc::clone(&sem),
            gateway_url.to_string(),
            Arc::clone(&profile),
        );
        set.spawn(async move {
            let mut out = Vec::new();
            for (i, t) in group {
                let Ok(_permit) = sem.acquire().await else {
                    break;
                };
                let mut r = run_one(&client, &profile, &upstream, &url, &t).await;
                apply_known(&profile, &mut r);
                out.push((i, r));
            }
            out
        });
    }
    let mut all = Vec::new();
    while let Some(done) = set.join_next().await {
        if let Ok(v) = done {
            all.extend(v);
        }
    }
    all.sort_by_key(|(i, _)| *i);
    let mut results: Vec<TrialResult> = all.into_iter().map(|(_, r)| r).collect();
    cross_mode(&mut results);
    results
}

/// The API a request path belongs to (a gateway may bridge to another API of the same vendor),
/// from the one route table.
fn provider_for_path(path: &str) -> Option<Provider> {
    crate::providers::route("POST", path, &Default::default()).map(|r| r.provider)
}

/// The provider a request to `path` was sent to. The text protocol travels over a Chat
/// Completions path: a chat request to a text-protocol route is judged as the text protocol.
fn target_of_path(path: &str, target: Provider) -> Provider {
    match provider_for_path(path) {
        Some(Provider::OpenaiChat) if target == Provider::TextProtocol => target,
        p => p.unwrap_or(target),
    }
}

fn is_openai(p: Provider) -> bool {
    matches!(p, Provider::OpenaiChat | Provider::OpenaiResponses)
}
