//! A trial of the engine: case × route × choice × mode, where a route is the wire format the
//! client speaks (`inbound`) and the provider the system under test must reach (`upstream`);
//! its identity (`RoutedTrialId`: key, name, table row, snapshot name), its first request, and
//! the expansion of cases into trials.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::case::{Case, ChoiceSpec, Mode};
use crate::model::Provider;

/// What kind of system a run is about: its trials are named `KIND::NAME::…`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SystemKind {
    /// An LLM gateway, reached over HTTP (`tooltape gateway`).
    Gateway,
    /// A client library or agent framework, reached through its driver (`tooltape client`).
    Client,
    /// A server that runs the model (vLLM, llama.cpp), reached over HTTP (`tooltape server`):
    /// it has no upstream; what it answers is what its model produced.
    Server,
}

impl SystemKind {
    pub fn slug(self) -> &'static str {
        match self {
            SystemKind::Gateway => "gateway",
            SystemKind::Client => "client",
            SystemKind::Server => "server",
        }
    }
}

/// One trial through a system under test: a case on a route, with a tool choice and a mode.
#[derive(Clone, Debug)]
pub struct RoutedTrial {
    pub case: Arc<Case>,
    pub route: Route,
    pub choice: ChoiceSpec,
    pub mode: Mode,
    /// For a case whose rounds change provider: the model of the route from the same inbound
    /// format to each provider a round goes to.
    pub round_models: Vec<(Provider, String)>,
}

/// Who a routed trial is: its case, route (`chat→anthropic`), tool choice (its slug) and mode.
/// Every name of the trial is made from these, never parsed back.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RoutedTrialId {
    pub case: String,
    pub route: String,
    pub choice: String,
    pub mode: Mode,
}

impl RoutedTrialId {
    /// `case::route::choice::mode`: what known-failure patterns match.
    pub fn key(&self) -> String {
        format!(
            "{}::{}::{}::{}",
            self.case,
            self.route,
            self.choice,
            self.mode.slug()
        )
    }

    /// `KIND::NAME::case::route::choice::mode` (`gateway::litellm::…`, `client::openai::…`).
    pub fn name(&self, kind: SystemKind, system: &str) -> String {
        format!("{}::{system}::{}", kind.slug(), self.key())
    }

    /// `case::choice::mode`: the trial table's row.
    pub fn row(&self) -> String {
        format!("{}::{}::{}", self.case, self.choice, self.mode.slug())
    }

    /// The snapshot's file stem: `case__inbound-to-upstream__choice__mode` (ASCII, no
    /// separators).
    pub fn snapshot_name(&self) -> String {
        self.key()
            .replace("::", "__")
            .replace('→', "-to-")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    /// The same trial in the other mode (a stream trial's buffered twin).
    pub fn in_mode(&self, mode: Mode) -> RoutedTrialId {
        RoutedTrialId {
            mode,
            ..self.clone()
        }
    }
}

impl RoutedTrial {
    /// Its identity: case, route, choice, mode.
    pub fn id(&self) -> RoutedTrialId {
        RoutedTrialId {
            case: self.case.name.clone(),
            route: self.route.name(),
            choice: self.choice.slug(),
            mode: self.mode,
        }
    }

    /// `case::route::choice::mode`: what known-failure patterns match.
    pub fn key(&self) -> String {
        self.id().key()
    }

    /// `KIND::NAME::case::route::choice::mode` (`gateway::litellm::…`, `client::openai::…`).
    pub fn name(&self, kind: SystemKind, system: &str) -> String {
        self.id().name(kind, system)
    }

    /// The client's side as a direct trial of `provider` (its expectations are the client's)
    /// and its first request, with the route's model.
    pub(crate) fn first_request(
        &self,
        provider: crate::model::Provider,
    ) -> (crate::case::Trial, crate::model::ChatRequest) {
        let base = crate::case::Trial {
            case: Arc::clone(&self.case),
            provider,
            choice: self.choice.clone(),
            mode: self.mode,
        };
        let mut req = base.first_request();
        req.model = self.route.model.clone();
        (base, req)
    }

    /// The model a round going to `provider` is sent with (the route's model when it has none).
    pub(crate) fn model_for(&self, provider: Provider) -> String {
        (self.round_models.iter())
            .find(|(p, _)| *p == provider)
            .map_or_else(|| self.route.model.clone(), |(_, m)| m.clone())
    }

    pub(crate) fn prompt(&self) -> String {
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

/// The models of the routes a case's rounds change provider to, from `route`'s inbound format
/// (a library's route speaks its upstream's own API: from it, the library's route to that
/// provider); `None` when the case cannot run on `route` (its first round already on the
/// provider the rounds go to, or no route there).
fn round_models(case: &Case, route: &Route, routes: &[Route]) -> Option<Vec<(Provider, String)>> {
    let moves = case.file.rounds.iter().filter_map(|r| r.provider.as_ref());
    let mut out: Vec<(Provider, String)> = Vec::new();
    for (i, p) in moves.map(|p| *p.get_ref()).enumerate() {
        if i == 0 && p == route.upstream {
            return None;
        }
        if p == route.upstream || out.iter().any(|(q, _)| *q == p) {
            continue;
        }
        let inbound = if route.is_library() { p } else { route.inbound };
        let to = (routes.iter()).find(|r| r.inbound == inbound && r.upstream == p && !r.mcp)?;
        out.push((p, to.model.clone()));
    }
    Some(out)
}

/// Every applicable trial: cases whose `inbound` lists the route's inbound format and whose
/// providers list its upstream (on an MCP route, cases whose tools are an MCP server's).
pub fn trials(cases: &[Arc<Case>], routes: &[Route], filter: Option<&str>) -> Vec<RoutedTrial> {
    let mut out = Vec::new();
    for case in cases {
        for route in routes {
            if !case.inbound.contains(&route.inbound)
                || !case.providers.contains(&route.upstream)
                || (route.mcp && !case.file.mcp)
            {
                continue;
            }
            let Some(round_models) = round_models(case, route, routes) else {
                continue;
            };
            for choice in &case.choices {
                for mode in &case.modes {
                    let t = RoutedTrial {
                        case: Arc::clone(case),
                        route: route.clone(),
                        choice: choice.clone(),
                        mode: *mode,
                        round_models: round_models.clone(),
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

/// One inbound format and one upstream provider.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The client's wire format: `chat`, `responses`, `messages`, `generate-content`.
    #[serde(deserialize_with = "inbound_format")]
    pub inbound: Provider,
    /// The provider the gateway forwards to (a `Provider` slug).
    pub upstream: Provider,
    /// The model name the client sends; the gateway maps it to the upstream model.
    pub model: String,
    /// Extra headers for this route's requests (`{{upstream}}` filled).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A name of its own (client mode's routes are named by the wire format the library speaks,
    /// or by the profile); not written in gateway profiles: set exactly on a library's routes.
    #[serde(skip)]
    pub label: Option<String>,
    /// A library's route whose tools come from an MCP server through the library's own MCP
    /// client (client mode, `mcp = true`): only cases whose tools are an MCP server's run on it.
    #[serde(skip)]
    pub mcp: bool,
}

impl Route {
    /// `chat→anthropic` (or the route's own label).
    pub fn name(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => format!("{}→{}", inbound_slug(self.inbound), self.upstream.slug()),
        }
    }

    /// A library's route (client mode): it speaks its upstream's own API, so a conversation
    /// continued on another provider goes on through the library's route to that provider.
    pub(crate) fn is_library(&self) -> bool {
        self.label.is_some()
    }
}

/// The profile spellings of the inbound wire formats (serde names only: the type is `Provider`).
const INBOUND: [(&str, Provider); 4] = [
    ("chat", Provider::OpenaiChat),
    ("responses", Provider::OpenaiResponses),
    ("messages", Provider::Anthropic),
    ("generate-content", Provider::Gemini),
];

/// The profile spelling of an inbound format: `chat`, `responses`, `messages`, `generate-content`.
pub(crate) fn inbound_slug(p: Provider) -> &'static str {
    INBOUND
        .iter()
        .find(|(_, q)| *q == p)
        .map_or("?", |(s, _)| s)
}

/// Reads an inbound format from its profile spelling.
fn inbound_format<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Provider, D::Error> {
    let s = String::deserialize(d)?;
    INBOUND
        .iter()
        .find(|(slug, _)| *slug == s)
        .map(|(_, p)| *p)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown inbound format `{s}`; expected one of chat, responses, messages, generate-content"
            ))
        })
}
