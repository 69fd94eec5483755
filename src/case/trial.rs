//! Expansion of a case into trials (provider × tool_choice × mode), and the trial's identity:
//! one [`TrialId`] owns its name, its cassette path and its snapshot name, and reads them back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::Spanned;

use super::file::{Case, ChoiceSpec, Expectation, KnownFailure, Mode, Role};
use crate::located::line_col;
use crate::model::Provider;
use crate::model::{ChatRequest, Grounding, HostedTool, Message};

/// Who a trial is: `case::provider::choice::mode`. Its test name, cassette path and snapshot
/// name are all made here, and read back here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrialId {
    pub case: String,
    pub provider: Provider,
    pub choice: ChoiceSpec,
    pub mode: Mode,
}

impl TrialId {
    /// `case::provider::choice::mode`: the test name.
    pub fn name(&self) -> String {
        format!("{}::{}", self.case, self.key())
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

    /// `case::choice::mode`: a row of a matrix whose columns are providers.
    pub fn row(&self) -> String {
        format!(
            "{}::{}::{}",
            self.case,
            self.choice.slug(),
            self.mode.slug()
        )
    }

    /// `cassettes/<provider>/<case>/<choice>-<mode>.json`, relative to the project root.
    pub fn cassette_path(&self) -> PathBuf {
        PathBuf::from("cassettes")
            .join(self.provider.slug())
            .join(&self.case)
            .join(format!("{}-{}.json", self.choice.slug(), self.mode.slug()))
    }

    /// `<case>__<provider>__<choice>__<mode>`: the snapshot name (file `tests/snapshots/<name>.snap`).
    pub fn snapshot_name(&self) -> String {
        self.name().replace("::", "__")
    }

    /// The snapshot's file name: `<snapshot name>.snap`.
    pub fn snapshot_file(&self) -> String {
        format!("{}.snap", self.snapshot_name())
    }

    fn from_parts(case: &str, provider: &str, choice: &str, mode: &str) -> Option<TrialId> {
        Some(TrialId {
            case: (!case.is_empty()).then(|| case.to_string())?,
            provider: Provider::from_slug(provider)?,
            choice: ChoiceSpec::from_slug(choice)?,
            mode: Mode::from_slug(mode)?,
        })
    }

    /// Reads `case::provider::choice::mode` back.
    pub fn from_name(name: &str) -> Option<TrialId> {
        let parts: Vec<&str> = name.split("::").collect();
        match parts[..] {
            [case, provider, choice, mode] => TrialId::from_parts(case, provider, choice, mode),
            _ => None,
        }
    }

    /// Reads a cassette path back: `[…/]cassettes/<provider>/<case>/<choice>-<mode>.json`, or
    /// the same relative to a cassette folder (`<provider>/<case>/<choice>-<mode>.json`).
    pub fn from_cassette_path(path: &Path) -> Option<TrialId> {
        let parts: Vec<&str> = path.iter().map(|s| s.to_str()).collect::<Option<_>>()?;
        let [.., provider, case, file] = parts[..] else {
            return None;
        };
        let (choice, mode) = file.strip_suffix(".json")?.rsplit_once('-')?;
        TrialId::from_parts(case, provider, choice, mode)
    }

    /// Reads a snapshot file name back: `<case>__<provider>__<choice>__<mode>.snap`.
    pub fn from_snapshot_file(file: &str) -> Option<TrialId> {
        TrialId::from_name(&file.strip_suffix(".snap")?.replace("__", "::"))
    }
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
    /// Who this trial is (name, cassette path, snapshot name).
    pub fn id(&self) -> TrialId {
        TrialId {
            case: self.case.name.clone(),
            provider: self.provider,
            choice: self.choice.clone(),
            mode: self.mode,
        }
    }

    /// `case::provider::choice::mode`.
    pub fn name(&self) -> String {
        self.id().name()
    }

    /// `provider::choice::mode`: what expectation and known-failure patterns match.
    pub fn key(&self) -> String {
        self.id().key()
    }

    /// `cassettes/<provider>/<case>/<choice>-<mode>.json`, relative to the project root.
    pub fn cassette_path(&self) -> PathBuf {
        self.id().cassette_path()
    }

    /// Snapshot name (file `tests/snapshots/<name>.snap`).
    pub fn snapshot_name(&self) -> String {
        self.id().snapshot_name()
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
            .map(|m| {
                let content = m.content.clone();
                match m.role.get_ref() {
                    Role::System => Message::System { content },
                    Role::Developer => Message::Developer { content },
                    Role::User => Message::User { content },
                }
            })
            .collect();
        ChatRequest {
            server: crate::model::ServerContext::default(),
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
        self.matching(&self.case.file.expect, |e| &e.trials)
            .collect()
    }

    /// The known-failure note for this trial, with its span.
    pub fn known_failure(&self) -> Option<&Spanned<KnownFailure>> {
        self.matching(&self.case.file.known_failure, |k| &k.trials)
            .next()
    }

    /// The case file's `entries` whose `trials` pattern matches this trial, in file order.
    fn matching<'a, T>(
        &self,
        entries: &'a [Spanned<T>],
        trials: fn(&T) -> &String,
    ) -> impl Iterator<Item = &'a Spanned<T>> {
        let key = self.key();
        entries
            .iter()
            .filter(move |e| pattern_matches(trials(e.get_ref()), &key))
    }

    /// `path:line:col` of a span in the case file.
    pub fn locate(&self, span: std::ops::Range<usize>) -> String {
        let (l, c) = line_col(&self.case.source, span.start);
        format!("{}:{l}:{c}", self.case.path.display())
    }

    /// `path:line:col` of this trial's tool-choice entry in its case file.
    pub fn choice_location(&self) -> String {
        self.case
            .file
            .choices
            .iter()
            .find(|c| c.get_ref() == &self.choice)
            .map_or_else(
                || format!("{}:1:1", self.case.path.display()),
                |c| self.locate(c.span()),
            )
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

/// The ids of a case's trials, in a stable order (provider, then choice, then mode).
pub(crate) fn trial_ids(case: &Case) -> Vec<TrialId> {
    let mut out = Vec::new();
    for &provider in &case.providers {
        for choice in &case.choices {
            for &mode in &case.modes {
                out.push(TrialId {
                    case: case.name.clone(),
                    provider,
                    choice: choice.clone(),
                    mode,
                });
            }
        }
    }
    out
}

/// `provider::choice::mode` of every trial of a case: what its patterns must match.
pub(super) fn trial_keys(case: &Case) -> Vec<String> {
    trial_ids(case).iter().map(TrialId::key).collect()
}

/// Expands a case into its trials, in a stable order.
pub(crate) fn trials(case: &Arc<Case>) -> Vec<Trial> {
    trial_ids(case)
        .into_iter()
        .map(|id| Trial {
            case: Arc::clone(case),
            provider: id.provider,
            choice: id.choice,
            mode: id.mode,
        })
        .collect()
}
