//! How a case file is written: the serde types of `cases/*.toml` and `cases/providers.toml`,
//! with spans kept for `path:line:col` errors. Roles, providers, modes and tool choices are
//! parsed into their types here, so a bad value fails at deserialization, where its span is.
//! Also the loaded `Case` those files become.

use std::collections::BTreeMap;
use std::path::PathBuf;

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toml::Spanned;

use crate::model::Provider;
use crate::model::{HostedTool, StrictPolicy, Tool, ToolChoice};
use crate::scenario::Scenario;

/// How a case file is written. Every table rejects unknown fields.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// What the case checks, one sentence (shown in snapshots and reports).
    pub description: String,
    /// Tool names; each is `cases/tools/<name>.json`.
    #[serde(default)]
    pub tools: Vec<Spanned<String>>,
    /// Hosted (server-side) tools, e.g. `{ type = "web_search", grounding = "required" }`.
    #[serde(default)]
    pub hosted: Vec<HostedTool>,
    /// Tools the caller declares that the neutral request cannot carry (OpenAI `custom`
    /// tools), per inbound format, written in that format's wire form (`[caller_tools]
    /// openai-chat = [{ type = "custom", custom = { … } }]`). Only a gateway's caller sends
    /// them (added to its request's `tools`); direct trials cannot (`CALLER_TOOLS_NOT_CARRIED`).
    #[serde(default)]
    pub caller_tools: BTreeMap<Provider, Vec<serde_json::Value>>,
    /// Providers; default: every provider.
    #[serde(default)]
    pub providers: Option<Vec<Spanned<Provider>>>,
    /// Gateway mode: the formats a caller sends the case in; default: `providers`. Lists every
    /// provider of `providers`, and may add others: a case about what one API answers runs on
    /// each gateway route from any of them to it.
    #[serde(default)]
    pub inbound: Option<Vec<Spanned<Provider>>>,
    /// Client mode: the case's tools are an MCP server's (class 27's real servers, class 35's
    /// results), so it also runs on a library's MCP routes (`mcp = true` in its profile), where
    /// tooltape serves them and their results over MCP and the library takes them through its
    /// own MCP client. Changes no request: cassettes stay fresh.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mcp: bool,
    /// Tool choices: `omitted`, `auto`, `none`, `required`, `forced-NAME`,
    /// `allowed-auto-A+B`, `allowed-required-A+B`.
    pub choices: Vec<Spanned<ChoiceSpec>>,
    /// `buffered`, `stream`; default both.
    #[serde(default)]
    pub modes: Option<Vec<Spanned<Mode>>>,
    /// The parallel-calls switch; absent: the field is not sent.
    #[serde(default)]
    pub parallel: Option<bool>,
    #[serde(default)]
    pub strict: StrictPolicy,
    /// Extended thinking budget in tokens.
    #[serde(default)]
    pub thinking: Option<u32>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Which of the options the case sets are what it is about (`subject.rs`); absent: all of
    /// them. An option set but not listed is left out of a trial whose way cannot carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Vec<Spanned<super::option::CaseOption>>>,
    /// Per-provider model overrides (`models = { openai-responses = "gpt-5" }`).
    #[serde(default)]
    pub models: BTreeMap<ModelsKey, Spanned<String>>,
    pub messages: Vec<CaseMessage>,
    /// Tool results to send back after each round of calls (multi-turn).
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// How a client whose format is Responses continues each round; absent: it sends the whole
    /// conversation again. Other formats always send the whole conversation.
    #[serde(default)]
    pub continue_with: Option<ContinueWith>,
    /// What the provider simulator does for this case's synthetic cassettes.
    #[serde(default)]
    pub simulate: Scenario,
    /// Expected outcomes that differ from the plain tool_choice contract, per trial pattern.
    #[serde(default)]
    pub expect: Vec<Spanned<Expectation>>,
    /// Known provider non-conformance, per trial pattern, with a reason.
    #[serde(default)]
    pub known_failure: Vec<Spanned<KnownFailure>>,
}

/// How a Responses client continues a round.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ContinueWith {
    /// Only the round's new items (its `function_call_output`s) and `previous_response_id`
    /// naming the last answer: the earlier context lives server-side (class 22).
    PreviousResponseId,
    /// The whole conversation with `store: true`, each reasoning item the model answered sent
    /// back as an `item_reference` to its id, which the server resolves (class 19).
    ItemReference,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseMessage {
    pub role: Spanned<Role>,
    pub content: String,
}

/// Who says a case message (tool results go in `[[rounds]]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    Developer,
    User,
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Slug(|s: &str| match s {
            "system" => Ok(Role::System),
            "developer" => Ok(Role::Developer),
            "user" => Ok(Role::User),
            _ => Err(format!(
                "unknown role `{s}`; case messages are system, developer or user (tool rounds go in [[rounds]])"
            )),
        }))
    }
}

/// One round of tool results, matched to the model's calls by tool name, in order; each is sent
/// under the id of the call it answers unless it names another (`unknown_call_id`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    pub results: Vec<RoundResult>,
    /// This round goes to another upstream provider (a conversation continued there, as agent
    /// frameworks do on fallback): in gateway mode on the route of the same inbound format to
    /// it. Direct trials run it on their own provider.
    #[serde(default)]
    pub provider: Option<Spanned<Provider>>,
    /// Tools put in force from this round's request on (each `cases/tools/<name>.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_tools: Vec<Spanned<String>>,
    /// Tools taken out of force from this round's request on (named among those in force).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_tools: Vec<Spanned<String>>,
    /// The definitions of `add_tools`, read when the case is loaded.
    #[serde(skip)]
    pub added: Vec<Tool>,
}

impl Round {
    /// Whether this round changes the tools in force.
    pub fn changes_tools(&self) -> bool {
        !self.add_tools.is_empty() || !self.remove_tools.is_empty()
    }

    /// The tools in force once this round's changes apply to `tools`: the removed ones taken
    /// out, the added ones appended in the order written (an added tool already in force is
    /// replaced by its definition).
    pub fn apply_tools(&self, tools: &mut Vec<Tool>) {
        tools.retain(|t| {
            !self.remove_tools.iter().any(|r| r.get_ref() == &t.name)
                && !self.added.iter().any(|a| a.name == t.name)
        });
        tools.extend(self.added.iter().cloned());
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoundResult {
    pub tool: Spanned<String>,
    pub content: ResultContent,
    #[serde(default)]
    pub is_error: bool,
    /// Send this result under this id instead of the id of the call it answers: an id no call
    /// had, so the request holds a result for an unknown id (the call stays unanswered).
    /// 1 to 64 letters, digits, `_` and `-` (every provider's id alphabet).
    #[serde(default)]
    pub unknown_call_id: Option<Spanned<String>>,
}

/// A round result's content: a string, or parts (`{ type = "text", text }`, `{ type = "image",
/// media_type, data }` with base64 data, `{ type = "image_url", url }`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ResultContent {
    Text(String),
    Parts(Vec<crate::model::ResultPart>),
}

impl ResultContent {
    /// The neutral `(content, parts)` of a tool message.
    pub fn neutral(&self) -> (String, Vec<crate::model::ResultPart>) {
        match self {
            ResultContent::Text(t) => (t.clone(), Vec::new()),
            ResultContent::Parts(p) => (crate::providers::joined_text(p), p.clone()),
        }
    }
}

/// What a trial must show instead of (or besides) the plain contract.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Expectation {
    /// Trial pattern `provider::choice::mode`, `*` matching within a segment; default all.
    #[serde(default = "any_trial")]
    pub trials: String,
    /// Encoding fails closed with this error code: nothing is sent ("not supported by design").
    pub encode_error: Option<String>,
    /// The trial's last exchange answers with this HTTP status (an error the case provokes on
    /// purpose; the first exchange unless earlier ones succeed, see `exchanges`).
    pub error_status: Option<u16>,
    /// The error message contains this text.
    pub error_contains: Option<String>,
    /// Names of the tool calls of the first exchange, in order.
    pub calls: Option<Vec<String>>,
    /// Diagnostic kinds that must appear (first exchange).
    pub diagnostics: Option<Vec<String>>,
    /// The final exchange's text contains this.
    pub final_text_contains: Option<String>,
    /// How many exchanges the trial has (attempts replaced by a variant fallback not counted).
    pub exchanges: Option<usize>,
    /// How many HTTP interactions the trial has, fallback attempts included.
    pub attempts: Option<usize>,
    /// Hosted search outcome: `effective` (searched, results with citations) or the code that
    /// `why_not_grounded` starts with (`GROUNDING_EMPTY_RESULTS`, `GROUNDING_NOT_ATTEMPTED`, ...).
    pub grounding: Option<String>,
    /// The first exchange's normalized finish: `tool_calls`, `stop`, `length`, `content_filter`, `other`.
    pub finish: Option<String>,
    /// The first exchange reports token usage (`true`) or none (`false`).
    pub usage: Option<bool>,
    /// The arguments of the first exchange's calls, in order, exactly.
    pub arguments: Option<Vec<serde_json::Value>>,
}

/// A known failure, in a case file (`[[known_failure]]`, provider trial patterns) and in a
/// gateway or client profile (`case::route::choice::mode` patterns): the one type for both.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    /// The trials it covers, `*` matching within a segment; default: every trial.
    #[serde(default = "any_trial")]
    pub trials: String,
    /// What was observed (the finding), and where it is tracked.
    pub reason: String,
    /// The system under test fails it only sometimes (a race on its side): a pass is then not
    /// an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
}

fn any_trial() -> String {
    "*::*::*".into()
}

/// `buffered` or `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Buffered,
    Stream,
}

impl Mode {
    pub fn slug(self) -> &'static str {
        match self {
            Mode::Buffered => "buffered",
            Mode::Stream => "stream",
        }
    }

    pub fn from_slug(s: &str) -> Option<Mode> {
        match s {
            "buffered" => Some(Mode::Buffered),
            "stream" => Some(Mode::Stream),
            _ => None,
        }
    }
}

impl Serialize for Mode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.slug())
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Slug(|s: &str| {
            Mode::from_slug(s)
                .ok_or_else(|| format!("unknown mode `{s}`; expected buffered or stream"))
        }))
    }
}

/// A tool choice variant of a case: a [`ToolChoice`] or the field left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChoiceSpec {
    Omitted,
    Choice(ToolChoice),
}

impl ChoiceSpec {
    pub fn slug(&self) -> String {
        match self {
            ChoiceSpec::Omitted => "omitted".into(),
            ChoiceSpec::Choice(c) => c.slug(),
        }
    }

    pub fn from_slug(s: &str) -> Option<ChoiceSpec> {
        if s == "omitted" {
            return Some(ChoiceSpec::Omitted);
        }
        ToolChoice::from_slug(s).map(ChoiceSpec::Choice)
    }

    pub fn tool_choice(&self) -> Option<ToolChoice> {
        match self {
            ChoiceSpec::Omitted => None,
            ChoiceSpec::Choice(c) => Some(c.clone()),
        }
    }

    /// The tools a forced or allowed choice names.
    pub fn named_tools(&self) -> Vec<&String> {
        match self {
            ChoiceSpec::Choice(ToolChoice::Forced(n)) => vec![n],
            ChoiceSpec::Choice(ToolChoice::Allowed { tools, .. }) => tools.iter().collect(),
            _ => vec![],
        }
    }
}

impl Serialize for ChoiceSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.slug())
    }
}

impl<'de> Deserialize<'de> for ChoiceSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Slug(|s: &str| {
            ChoiceSpec::from_slug(s).ok_or_else(|| format!(
                "unknown tool choice `{s}`; write omitted, auto, none, required, forced-NAME, allowed-auto-A+B or allowed-required-A+B"
            ))
        }))
    }
}

/// A provider named as a key of a case's `models` table (its error says where it was).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ModelsKey(pub Provider);

impl<'de> Deserialize<'de> for ModelsKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Slug(|s: &str| {
            Provider::from_slug(s).map(ModelsKey).ok_or_else(|| {
                let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
                format!(
                    "unknown provider `{s}` in models; expected one of {}",
                    all.join(", ")
                )
            })
        }))
    }
}

/// Default model and base URL per provider (`cases/providers.toml`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub model: String,
    pub base_url: String,
}

/// Reads a string value through `parse`. The error is raised inside the visitor, while the
/// deserializer still knows where the value is, so it says `path:line:col` of the value itself.
struct Slug<F>(F);

impl<'de, T, F: FnOnce(&str) -> Result<T, String>> Visitor<'de> for Slug<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        (self.0)(s).map_err(E::custom)
    }
}

/// A loaded, validated case.
#[derive(Clone, Debug)]
pub struct Case {
    /// File stem: the first segment of every trial name.
    pub name: String,
    pub path: PathBuf,
    pub source: String,
    pub file: CaseFile,
    pub tools: Vec<Tool>,
    pub providers: Vec<Provider>,
    /// The formats a gateway's caller sends the case in (`providers` and any the case adds).
    pub inbound: Vec<Provider>,
    pub choices: Vec<ChoiceSpec>,
    pub modes: Vec<Mode>,
    /// Model per provider (case override, else providers.toml).
    pub models: BTreeMap<Provider, String>,
    /// sha256 of the case file and every tool file it names.
    pub hash: String,
}
