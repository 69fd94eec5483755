//! Case files (`cases/*.toml`, tools in `cases/tools/*.json`): strict loading with positions,
//! and expansion into trials (provider × tool_choice × mode).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use toml::Spanned;

use crate::model::Provider;
use crate::model::{ChatRequest, Grounding, HostedTool, Message, StrictPolicy, Tool, ToolChoice};
use crate::scenario::Scenario;

/// The file in `cases/` that configures providers rather than describing a case.
pub const PROVIDERS_FILE: &str = "providers.toml";

/// A problem in a case, tool or provider file, located for the reader.
pub type CaseError = crate::located::Located;

/// 1-based line and column of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// How a case file is written. Every table rejects unknown fields.
#[derive(Debug, Deserialize, Serialize)]
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
    /// Provider slugs; default: every provider.
    #[serde(default)]
    pub providers: Option<Vec<Spanned<String>>>,
    /// Tool choice slugs: `omitted`, `auto`, `none`, `required`, `forced-NAME`,
    /// `allowed-auto-A+B`, `allowed-required-A+B`.
    pub choices: Vec<Spanned<String>>,
    /// `buffered`, `stream`; default both.
    #[serde(default)]
    pub modes: Option<Vec<Spanned<String>>>,
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
    /// Per-provider model overrides (`models = { openai-responses = "gpt-5" }`).
    #[serde(default)]
    pub models: BTreeMap<String, Spanned<String>>,
    pub messages: Vec<CaseMessage>,
    /// Tool results to send back after each round of calls (multi-turn).
    #[serde(default)]
    pub rounds: Vec<Round>,
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

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseMessage {
    pub role: Spanned<String>,
    pub content: String,
}

/// One round of tool results, matched to the model's calls by tool name, in order.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    pub results: Vec<RoundResult>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoundResult {
    pub tool: Spanned<String>,
    pub content: String,
    #[serde(default)]
    pub is_error: bool,
}

/// What a trial must show instead of (or besides) the plain contract.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Trial pattern `provider::choice::mode`, `*` matching within a segment; default all.
    #[serde(default = "any_trial")]
    pub trials: String,
    /// Encoding fails closed with this error code: nothing is sent ("not supported by design").
    #[serde(default)]
    pub encode_error: Option<String>,
    /// The first exchange answers with this HTTP status (an error the case provokes on purpose).
    #[serde(default)]
    pub error_status: Option<u16>,
    /// The error message contains this text.
    #[serde(default)]
    pub error_contains: Option<String>,
    /// Names of the tool calls of the first exchange, in order.
    #[serde(default)]
    pub calls: Option<Vec<String>>,
    /// Diagnostic kinds that must appear (first exchange).
    #[serde(default)]
    pub diagnostics: Option<Vec<String>>,
    /// The final exchange's text contains this.
    #[serde(default)]
    pub final_text_contains: Option<String>,
    /// How many exchanges the trial has (attempts replaced by a variant fallback not counted).
    #[serde(default)]
    pub exchanges: Option<usize>,
    /// How many HTTP interactions the trial has, fallback attempts included.
    #[serde(default)]
    pub attempts: Option<usize>,
    /// Hosted search outcome: `effective` (searched, results with citations) or the code that
    /// `why_not_grounded` starts with (`GROUNDING_EMPTY_RESULTS`, `GROUNDING_NOT_ATTEMPTED`, ...).
    #[serde(default)]
    pub grounding: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    #[serde(default = "any_trial")]
    pub trials: String,
    pub reason: String,
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
}

/// Default model and base URL per provider (`cases/providers.toml`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub model: String,
    pub base_url: String,
}

/// A loaded, validated case.
#[derive(Debug)]
pub struct Case {
    /// File stem: the first segment of every trial name.
    pub name: String,
    pub path: PathBuf,
    pub source: String,
    pub file: CaseFile,
    pub tools: Vec<Tool>,
    pub providers: Vec<Provider>,
    pub choices: Vec<ChoiceSpec>,
    pub modes: Vec<Mode>,
    /// Model per provider (case override, else providers.toml).
    pub models: BTreeMap<Provider, String>,
    /// sha256 of the case file and every tool file it names.
    pub hash: String,
}

/// One test: a case on one provider with one tool choice in one mode.
#[derive(Clone, Debug)]
pub struct Trial {
    pub case: Arc<Case>,
    pub provider: Provider,
    pub choice: ChoiceSpec,
    pub mode: Mode,
}

impl Trial {
    /// `case::provider::choice::mode`.
    pub fn name(&self) -> String {
        format!("{}::{}", self.case.name, self.key())
    }

    /// `provider::choice::mode`: what expectation and known-failure patterns match.
    pub fn key(&self) -> String {
        format!(
            "{}::{}::{}",
            self.provider.slug(),
            self.choice.slug(),
            self.mode.slug()
        )
    }

    /// `cassettes/<provider>/<case>/<choice>-<mode>.json`, relative to the project root.
    pub fn cassette_path(&self) -> PathBuf {
        PathBuf::from("cassettes")
            .join(self.provider.slug())
            .join(&self.case.name)
            .join(format!("{}-{}.json", self.choice.slug(), self.mode.slug()))
    }

    /// Snapshot name (file `tests/snapshots/<name>.snap`).
    pub fn snapshot_name(&self) -> String {
        self.name().replace("::", "__")
    }

    pub fn model(&self) -> &str {
        self.case
            .models
            .get(&self.provider)
            .map_or("", String::as_str)
    }

    /// The neutral request of the first exchange.
    pub fn first_request(&self) -> ChatRequest {
        let file = &self.case.file;
        let messages = file
            .messages
            .iter()
            .map(|m| match m.role.get_ref().as_str() {
                "system" => Message::System {
                    content: m.content.clone(),
                },
                "developer" => Message::Developer {
                    content: m.content.clone(),
                },
                _ => Message::User {
                    content: m.content.clone(),
                },
            })
            .collect();
        ChatRequest {
            model: self.model().to_string(),
            messages,
            tools: self.case.tools.clone(),
            hosted: file.hosted.clone(),
            tool_choice: self.choice.tool_choice(),
            parallel_tool_calls: file.parallel,
            stream: self.mode == Mode::Stream,
            max_tokens: file.max_tokens,
            strict: file.strict,
            thinking: file.thinking,
        }
    }

    /// Expectations whose pattern matches this trial.
    pub fn expectations(&self) -> Vec<&Spanned<Expectation>> {
        let key = self.key();
        self.case
            .file
            .expect
            .iter()
            .filter(|e| pattern_matches(&e.get_ref().trials, &key))
            .collect()
    }

    /// The known-failure note for this trial, with its span.
    pub fn known_failure(&self) -> Option<&Spanned<KnownFailure>> {
        let key = self.key();
        self.case
            .file
            .known_failure
            .iter()
            .find(|k| pattern_matches(&k.get_ref().trials, &key))
    }

    /// `path:line:col` of a span in the case file.
    pub fn locate(&self, span: std::ops::Range<usize>) -> String {
        let (l, c) = line_col(&self.case.source, span.start);
        format!("{}:{l}:{c}", self.case.path.display())
    }

    /// Whether the first exchange asks for hosted web search in REQUIRED mode.
    pub fn requires_grounding(&self) -> bool {
        self.case.file.hosted.iter().any(|h| {
            matches!(
                h,
                HostedTool::WebSearch {
                    grounding: Grounding::Required,
                    ..
                }
            )
        })
    }
}

/// Matches `provider::choice::mode` against a pattern whose segments may use `*` wildcards.
/// A pattern with fewer segments matches any value for the missing ones.
pub fn pattern_matches(pattern: &str, key: &str) -> bool {
    let pats: Vec<&str> = pattern.split("::").collect();
    let keys: Vec<&str> = key.split("::").collect();
    pats.len() <= keys.len() && pats.iter().zip(&keys).all(|(p, k)| glob(p, k))
}

fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(after) = text.strip_prefix(head) else {
                return false;
            };
            if rest.is_empty() {
                return true;
            }
            (0..=after.len())
                .filter(|&i| after.is_char_boundary(i))
                .any(|i| glob(rest, &after[i..]))
        }
    }
}

fn toml_error(path: &Path, source: &str, err: &toml::de::Error) -> CaseError {
    let (line, column) = err.span().map_or((1, 1), |s| line_col(source, s.start));
    CaseError {
        path: path.to_path_buf(),
        line,
        column,
        message: err.message().trim().to_string(),
    }
}

fn spanned_error(
    path: &Path,
    source: &str,
    span: std::ops::Range<usize>,
    message: String,
) -> CaseError {
    let (line, column) = line_col(source, span.start);
    CaseError {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// Loads `cases/providers.toml`.
pub fn load_providers(cases_dir: &Path) -> Result<BTreeMap<Provider, ProviderConfig>, CaseError> {
    let path = cases_dir.join(PROVIDERS_FILE);
    let source = std::fs::read_to_string(&path).map_err(|e| CaseError {
        path: path.clone(),
        line: 1,
        column: 1,
        message: format!("cannot read the provider table: {e}"),
    })?;
    let raw: BTreeMap<String, Spanned<ProviderConfig>> =
        toml::from_str(&source).map_err(|e| toml_error(&path, &source, &e))?;
    let mut out = BTreeMap::new();
    for (name, cfg) in raw {
        let Some(p) = Provider::from_slug(&name) else {
            return Err(spanned_error(
                &path,
                &source,
                cfg.span(),
                format!(
                    "unknown provider `{name}`; expected one of {}",
                    provider_list()
                ),
            ));
        };
        out.insert(p, cfg.into_inner());
    }
    if let Some(missing) = Provider::ALL.iter().find(|p| !out.contains_key(p)) {
        return Err(CaseError {
            path,
            line: 1,
            column: 1,
            message: format!(
                "no `[{missing}]` table: every provider needs a default model and base_url"
            ),
        });
    }
    Ok(out)
}

fn provider_list() -> String {
    Provider::ALL
        .iter()
        .map(|p| p.slug())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Loads one neutral tool file.
pub fn load_tool(path: &Path) -> Result<(Tool, String), CaseError> {
    let text = std::fs::read_to_string(path).map_err(|e| CaseError {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        message: format!("cannot read tool file: {e}"),
    })?;
    let tool: Tool = serde_json::from_str(&text).map_err(|e| CaseError {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: format!("invalid tool definition: {e}"),
    })?;
    Ok((tool, text))
}

/// Compact JSON with object keys sorted at every level.
fn canonical(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Loads and validates one case file.
pub fn load_case(
    path: &Path,
    tools_dir: &Path,
    providers: &BTreeMap<Provider, ProviderConfig>,
) -> Result<Case, CaseError> {
    let source = std::fs::read_to_string(path).map_err(|e| CaseError {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        message: format!("cannot read case file: {e}"),
    })?;
    let file: CaseFile = toml::from_str(&source).map_err(|e| toml_error(path, &source, &e))?;
    let err = |span: std::ops::Range<usize>, msg: String| spanned_error(path, &source, span, msg);
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(CaseError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message:
                "case file names use only letters, digits, `_` and `-` (they become test names)"
                    .into(),
        });
    }

    // The hash covers what the case means, not how it is written: comments, blank lines and
    // key order can change without making its cassettes stale.
    let mut hasher = Sha256::new();
    if let Ok(table) = toml::from_str::<toml::Table>(&source) {
        hasher.update(canonical(&serde_json::to_value(&table).unwrap_or_default()).as_bytes());
    }
    let mut tools = Vec::new();
    for t in &file.tools {
        let tool_path = tools_dir.join(format!("{}.json", t.get_ref()));
        if !tool_path.is_file() {
            return Err(err(
                t.span(),
                format!(
                    "no tool file {} for tool `{}`: add it, or fix the name",
                    tool_path.display(),
                    t.get_ref()
                ),
            ));
        }
        let (tool, text) = load_tool(&tool_path)?;
        if &tool.name != t.get_ref() {
            return Err(CaseError {
                path: tool_path.clone(),
                line: 1,
                column: 1,
                message: format!(
                    "the tool's name is `{}` but its file is named for `{}`",
                    tool.name,
                    t.get_ref()
                ),
            });
        }
        hasher.update(canonical(&serde_json::from_str(&text).unwrap_or_default()).as_bytes());
        tools.push(tool);
    }
    let hash = format!("sha256:{:x}", hasher.finalize());

    let providers_list = match &file.providers {
        None => Provider::ALL.to_vec(),
        Some(list) => {
            let mut out = Vec::new();
            for p in list {
                let Some(prov) = Provider::from_slug(p.get_ref()) else {
                    return Err(err(
                        p.span(),
                        format!(
                            "unknown provider `{}`; expected one of {}",
                            p.get_ref(),
                            provider_list()
                        ),
                    ));
                };
                out.push(prov);
            }
            out
        }
    };
    let tool_names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut choices = Vec::new();
    for c in &file.choices {
        let Some(spec) = ChoiceSpec::from_slug(c.get_ref()) else {
            return Err(err(
                c.span(),
                format!(
                    "unknown tool choice `{}`; write omitted, auto, none, required, forced-NAME, allowed-auto-A+B or allowed-required-A+B",
                    c.get_ref()
                ),
            ));
        };
        let named: Vec<&String> = match &spec {
            ChoiceSpec::Choice(ToolChoice::Forced(n)) => vec![n],
            ChoiceSpec::Choice(ToolChoice::Allowed { tools, .. }) => tools.iter().collect(),
            _ => vec![],
        };
        if let Some(bad) = named.iter().find(|n| !tool_names.contains(&n.as_str())) {
            return Err(err(
                c.span(),
                format!(
                    "tool choice names `{bad}`, which is not among the case's tools {tool_names:?}"
                ),
            ));
        }
        choices.push(spec);
    }
    if choices.is_empty() {
        return Err(CaseError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: "`choices` is empty: a case needs at least one tool choice".into(),
        });
    }
    let modes = match &file.modes {
        None => vec![Mode::Buffered, Mode::Stream],
        Some(list) => {
            let mut out = Vec::new();
            for m in list {
                out.push(Mode::from_slug(m.get_ref()).ok_or_else(|| {
                    err(
                        m.span(),
                        format!(
                            "unknown mode `{}`; expected buffered or stream",
                            m.get_ref()
                        ),
                    )
                })?);
            }
            out
        }
    };
    for m in &file.messages {
        if !["system", "developer", "user"].contains(&m.role.get_ref().as_str()) {
            return Err(err(
                m.role.span(),
                format!(
                    "unknown role `{}`; case messages are system, developer or user (tool rounds go in [[rounds]])",
                    m.role.get_ref()
                ),
            ));
        }
    }
    for round in &file.rounds {
        for r in &round.results {
            if !tool_names.contains(&r.tool.get_ref().as_str()) {
                return Err(err(
                    r.tool.span(),
                    format!(
                        "result for `{}`, which is not among the case's tools",
                        r.tool.get_ref()
                    ),
                ));
            }
        }
    }
    let mut models = BTreeMap::new();
    for p in &providers_list {
        let Some(cfg) = providers.get(p) else {
            continue;
        };
        models.insert(*p, cfg.model.clone());
    }
    for (slug, model) in &file.models {
        let Some(p) = Provider::from_slug(slug) else {
            return Err(err(
                model.span(),
                format!(
                    "unknown provider `{slug}` in models; expected one of {}",
                    provider_list()
                ),
            ));
        };
        models.insert(p, model.get_ref().clone());
    }

    let case = Case {
        name,
        path: path.to_path_buf(),
        source: source.clone(),
        tools,
        providers: providers_list,
        choices,
        modes,
        models,
        hash,
        file,
    };
    // Every pattern must match at least one trial: a stale note is an error, not silence.
    let keys: Vec<String> = expand_keys(&case);
    for e in &case.file.expect {
        if !keys.iter().any(|k| pattern_matches(&e.get_ref().trials, k)) {
            return Err(err(
                e.span(),
                format!(
                    "expectation pattern `{}` matches no trial of this case",
                    e.get_ref().trials
                ),
            ));
        }
    }
    for k in &case.file.known_failure {
        if !keys
            .iter()
            .any(|key| pattern_matches(&k.get_ref().trials, key))
        {
            return Err(err(
                k.span(),
                format!(
                    "known_failure pattern `{}` matches no trial of this case",
                    k.get_ref().trials
                ),
            ));
        }
    }
    Ok(case)
}

fn expand_keys(case: &Case) -> Vec<String> {
    let mut keys = Vec::new();
    for p in &case.providers {
        for c in &case.choices {
            for m in &case.modes {
                keys.push(format!("{}::{}::{}", p.slug(), c.slug(), m.slug()));
            }
        }
    }
    keys
}

/// Expands a case into its trials, in a stable order.
pub fn trials(case: &Arc<Case>) -> Vec<Trial> {
    let mut out = Vec::new();
    for &provider in &case.providers {
        for choice in &case.choices {
            for &mode in &case.modes {
                out.push(Trial {
                    case: Arc::clone(case),
                    provider,
                    choice: choice.clone(),
                    mode,
                });
            }
        }
    }
    out
}

/// Everything found under a project root: trials of good cases, and the errors of broken files.
#[derive(Debug, Default)]
pub struct Discovery {
    pub trials: Vec<Trial>,
    /// (case name, error): a broken case still becomes a (failing) test.
    pub broken: Vec<(String, CaseError)>,
}

/// Finds every case under `root/cases` (sorted) and expands it.
pub fn discover(root: &Path) -> Discovery {
    let cases_dir = root.join("cases");
    let mut d = Discovery::default();
    let providers = match load_providers(&cases_dir) {
        Ok(p) => p,
        Err(e) => {
            d.broken.push(("providers".into(), e));
            return d;
        }
    };
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&cases_dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "toml")
                    && p.file_name().is_some_and(|n| n != PROVIDERS_FILE)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let tools_dir = cases_dir.join("tools");
    for f in files {
        let rel = f.strip_prefix(root).unwrap_or(&f).to_path_buf();
        match load_case(&root.join(&rel), &tools_dir, &providers) {
            Ok(mut case) => {
                case.path = rel;
                d.trials.extend(trials(&Arc::new(case)));
            }
            Err(mut e) => {
                if let Ok(p) = e.path.strip_prefix(root) {
                    e.path = p.to_path_buf();
                }
                let name = f
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("case")
                    .to_string();
                d.broken.push((name, e));
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(pattern_matches("*::*::*", "gemini::auto::stream"));
        assert!(pattern_matches("gemini", "gemini::auto::stream"));
        assert!(pattern_matches(
            "gemini::forced-*",
            "gemini::forced-get_weather::buffered"
        ));
        assert!(!pattern_matches(
            "gemini::forced-*",
            "gemini::auto::buffered"
        ));
        assert!(pattern_matches("*::*::stream", "anthropic::none::stream"));
        assert!(!pattern_matches(
            "openai-*::*::stream",
            "anthropic::none::stream"
        ));
    }

    /// A throwaway project root with the real provider table and tools, plus `cases/NAME.toml`.
    fn project_with(name: &str, case_text: &str) -> PathBuf {
        let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
        let root =
            std::env::temp_dir().join(format!("tooltape-case-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("cases/tools")).unwrap();
        std::fs::copy(
            real.join(PROVIDERS_FILE),
            root.join("cases").join(PROVIDERS_FILE),
        )
        .unwrap();
        std::fs::copy(
            real.join("tools/get_weather.json"),
            root.join("cases/tools/get_weather.json"),
        )
        .unwrap();
        std::fs::write(root.join(format!("cases/{name}.toml")), case_text).unwrap();
        root
    }

    fn broken(name: &str, text: &str) -> String {
        let root = project_with(name, text);
        let d = discover(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert!(d.trials.is_empty(), "expected {name} to be rejected");
        assert_eq!(d.broken.len(), 1);
        d.broken[0].1.to_string()
    }

    const GOOD: &str = "description = \"d\"\ntools = [\"get_weather\"]\nchoices = [\"auto\"]\n[[messages]]\nrole = \"user\"\ncontent = \"hi\"\n";

    #[test]
    fn a_good_case_expands_into_named_trials() {
        let root = project_with("good", GOOD);
        let d = discover(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert!(d.broken.is_empty(), "{:?}", d.broken);
        let names: Vec<String> = d.trials.iter().map(Trial::name).collect();
        assert_eq!(names.len(), 10);
        assert_eq!(names[0], "good::openai-chat::auto::buffered");
        assert_eq!(
            d.trials[1].cassette_path(),
            PathBuf::from("cassettes/openai-chat/good/auto-stream.json")
        );
    }

    #[test]
    fn unknown_field_is_reported_with_line_and_column() {
        let msg = broken("typo", &format!("{GOOD}\n[[expect]]\ncals = [\"x\"]\n"));
        assert!(
            msg.starts_with("cases/typo.toml:9:1: unknown field `cals`"),
            "{msg}"
        );
    }

    #[test]
    fn semantic_errors_point_at_the_value() {
        let msg = broken(
            "badtool",
            &GOOD.replace("[\"get_weather\"]", "[\"get_wether\"]"),
        );
        assert!(
            msg.starts_with("cases/badtool.toml:2:10: no tool file"),
            "{msg}"
        );
        let msg = broken(
            "badchoice",
            &GOOD.replace("[\"auto\"]", "[\"forced-nope\"]"),
        );
        assert!(
            msg.starts_with("cases/badchoice.toml:3:12: tool choice names `nope`"),
            "{msg}"
        );
        let msg = broken(
            "badkf",
            &format!("{GOOD}[[known_failure]]\ntrials = \"gemini::none\"\nreason = \"r\"\n"),
        );
        assert!(
            msg.starts_with(
                "cases/badkf.toml:7:1: known_failure pattern `gemini::none` matches no trial"
            ),
            "{msg}"
        );
        let msg = broken("syntax", "description = \"unterminated\n");
        assert!(msg.starts_with("cases/syntax.toml:1:"), "{msg}");
    }

    #[test]
    fn case_hash_ignores_comments_and_order_but_not_meaning() {
        let hash = |text: &str| {
            let root = project_with("hashing", text);
            let d = discover(&root);
            std::fs::remove_dir_all(&root).unwrap();
            d.trials[0].case.hash.clone()
        };
        let base = hash(GOOD);
        let reordered = "choices = [\"auto\"]\n# a comment\ntools = [\"get_weather\"]\ndescription = \"d\"\n\n[[messages]]\ncontent = \"hi\"\nrole = \"user\"\n";
        assert_eq!(hash(reordered), base);
        assert_ne!(hash(&GOOD.replace("\"hi\"", "\"hello\"")), base);
    }

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("ab\ncdé\nx", 7), (2, 4));
        assert_eq!(line_col("ab\ncdé\nx", 8), (3, 1));
        assert_eq!(line_col("ab", 0), (1, 1));
    }
}
