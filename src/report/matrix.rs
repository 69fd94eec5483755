//! The conformance matrix as data: rows case × tool_choice × mode, columns providers; each cell
//! says how the trial stands and where its cassette came from; stream ↔ buffered parity.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::case::{Mode, Trial};
use crate::cassette::ProvenanceKind;
use crate::contract::ContractVerdict;
use crate::harness::{ReplayStatus, ReplayedTrial};
use crate::model::Provider;

/// Where a trial stands. JSON names (kebab-case) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Fail,
    KnownFailure,
    /// Not applicable: the encoder refuses (fails closed by design), nothing is sent.
    /// `not-supported` before the one vocabulary.
    NotApplicable,
    Missing,
    Stale,
    Broken,
}

impl Status {
    pub const ALL: [Status; 7] = [
        Status::Pass,
        Status::Fail,
        Status::KnownFailure,
        Status::NotApplicable,
        Status::Missing,
        Status::Stale,
        Status::Broken,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::KnownFailure => "known-failure",
            Status::NotApplicable => "not-applicable",
            Status::Missing => "missing",
            Status::Stale => "stale",
            Status::Broken => "broken",
        }
    }

    /// Short label for grids.
    pub fn short(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::KnownFailure => "known",
            Status::NotApplicable => "n/a",
            Status::Missing => "missing",
            Status::Stale => "stale",
            Status::Broken => "broken",
        }
    }

    /// What the status means, for legends.
    pub fn meaning(self) -> &'static str {
        match self {
            Status::Pass => "the contract holds",
            Status::Fail => "the contract does not hold (first problem in the notes)",
            Status::KnownFailure => {
                "known provider non-conformance, marked in the case with a reason"
            }
            Status::NotApplicable => {
                "not applicable: the encoder refuses (fails closed by design), nothing is sent"
            }
            Status::Missing => "no cassette recorded",
            Status::Stale => "the cassette no longer matches its case or the encoder",
            Status::Broken => "the cassette cannot be read or replayed",
        }
    }

    /// Whether the trial was judged on its contract (parity can be checked).
    pub fn judged(self) -> bool {
        matches!(
            self,
            Status::Pass | Status::Fail | Status::KnownFailure | Status::NotApplicable
        )
    }
}

/// Stream ↔ buffered parity of a pair (same case, provider and choice).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "parity", content = "why", rename_all = "snake_case")]
pub enum Parity {
    Same,
    Differs(String),
}

/// One replayed trial in the matrix (the grid cell of its row and provider): its status, a
/// one-line detail, where its cassette came from, its calls and its stream/buffered parity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayEntry {
    pub trial: String,
    pub status: Status,
    /// One line: the first problem, the known-failure reason, the fail-closed code and message,
    /// or why the cassette is stale or broken.
    pub detail: Option<String>,
    pub provenance: Option<ProvenanceKind>,
    /// Tools called in the first exchange, when the trial was judged.
    pub calls: Option<Vec<String>>,
    /// Set on both cells of a stream/buffered pair when both were judged.
    pub parity: Option<Parity>,
    /// The outcomes of every exchange (for synthetic parity); not rendered.
    #[serde(skip)]
    pub outcomes: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub case: String,
    pub choice: String,
    pub mode: &'static str,
    pub cells: BTreeMap<Provider, ReplayEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayMatrix {
    pub providers: Vec<Provider>,
    pub rows: Vec<Row>,
    /// Case name → description, in row order.
    pub cases: Vec<(String, String)>,
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// The matrix entry of one replayed trial.
pub(crate) fn entry(result: &ReplayedTrial) -> ReplayEntry {
    let (status, detail) = match &result.status {
        Ok((v, _)) => match v {
            ContractVerdict::Pass => (Status::Pass, None),
            ContractVerdict::Fail { problems } => {
                (Status::Fail, problems.first().map(|p| first_line(p)))
            }
            ContractVerdict::KnownFailure { reason, .. } => {
                (Status::KnownFailure, Some(first_line(reason)))
            }
            ContractVerdict::KnownFailurePasses { reason, .. } => (
                Status::Fail,
                Some(format!(
                    "marked as a known failure ({}) but it passes now",
                    first_line(reason)
                )),
            ),
            ContractVerdict::NotApplicable { code, message } => (
                Status::NotApplicable,
                Some(format!("{code}: {}", first_line(message))),
            ),
        },
        Err(ReplayStatus::Missing) => (Status::Missing, None),
        Err(ReplayStatus::Stale(why)) => (Status::Stale, Some(first_line(why))),
        Err(ReplayStatus::Broken(why)) => (Status::Broken, Some(first_line(why))),
    };
    let snapshot = result.status.as_ref().ok().map(|(_, s)| s);
    let calls = snapshot.map(|s| {
        s.exchanges
            .first()
            .map(|e| {
                e.outcome
                    .tool_calls
                    .iter()
                    .map(|c| c.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    });
    let outcomes = snapshot.and_then(|s| {
        serde_json::to_value(s.exchanges.iter().map(|e| &e.outcome).collect::<Vec<_>>()).ok()
    });
    let outcomes = outcomes.map(|mut v| {
        strip_noise(&mut v);
        v
    });
    ReplayEntry {
        trial: result.trial.clone(),
        status,
        detail,
        provenance: result.provenance,
        calls,
        parity: None,
        outcomes,
    }
}

/// Removes the fields that are noise by nature (ids, usage, signatures: the drift report's
/// [`NOISE_KEYS`](crate::drift::shape::NOISE_KEYS), and a `redacted_thinking` block's opaque
/// `data`, an encrypted blob like a signature) before outcomes are compared.
pub(crate) fn strip_noise(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| !crate::drift::shape::NOISE_KEYS.contains(&k.as_str()));
            if map.get("type").and_then(Value::as_str) == Some("redacted_thinking") {
                map.remove("data");
            }
            map.values_mut().for_each(strip_noise);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_noise),
        _ => {}
    }
}

/// Builds the matrix from trials and their results (same order, same length).
pub fn build(trials: &[Trial], results: &[ReplayedTrial]) -> ReplayMatrix {
    let mut rows: Vec<Row> = Vec::new();
    let mut cases: Vec<(String, String)> = Vec::new();
    for (t, r) in trials.iter().zip(results) {
        if !cases.iter().any(|(n, _)| *n == t.case.name) {
            cases.push((t.case.name.clone(), t.case.file.description.clone()));
        }
        let (choice, mode) = (t.choice.slug(), t.mode.slug());
        let idx = match rows
            .iter()
            .position(|row| row.case == t.case.name && row.choice == choice && row.mode == mode)
        {
            Some(i) => i,
            None => {
                rows.push(Row {
                    case: t.case.name.clone(),
                    choice,
                    mode,
                    cells: BTreeMap::new(),
                });
                rows.len() - 1
            }
        };
        rows[idx].cells.insert(t.provider, entry(r));
    }
    // Rows in case order, then the case's choice order, buffered before stream.
    let order = |row: &Row| {
        let ci = cases
            .iter()
            .position(|(n, _)| *n == row.case)
            .unwrap_or(usize::MAX);
        let chi = trials
            .iter()
            .find(|t| t.case.name == row.case)
            .and_then(|t| t.case.choices.iter().position(|c| c.slug() == row.choice))
            .unwrap_or(usize::MAX);
        (ci, chi, Mode::from_slug(row.mode))
    };
    rows.sort_by_key(|r| order(r));
    let providers = Provider::ALL
        .into_iter()
        .filter(|p| trials.iter().any(|t| t.provider == *p))
        .collect();
    let mut m = ReplayMatrix {
        providers,
        rows,
        cases,
    };
    mark_parity(&mut m);
    m
}

/// Compares each buffered/stream pair: called tools and verdict must agree, and for two
/// synthetic cassettes the whole outcomes must be identical (noise fields aside).
pub fn parity(buffered: &ReplayEntry, stream: &ReplayEntry) -> Option<Parity> {
    if !buffered.status.judged() || !stream.status.judged() {
        return None;
    }
    if buffered.status != stream.status {
        return Some(Parity::Differs(format!(
            "verdict: buffered {}, stream {}",
            buffered.status.as_str(),
            stream.status.as_str()
        )));
    }
    if buffered.calls != stream.calls {
        let show =
            |c: &Option<Vec<String>>| format!("[{}]", c.as_deref().unwrap_or_default().join(", "));
        return Some(Parity::Differs(format!(
            "calls: buffered {}, stream {}",
            show(&buffered.calls),
            show(&stream.calls)
        )));
    }
    let synthetic = Some(ProvenanceKind::Synthetic);
    if buffered.provenance == synthetic
        && stream.provenance == synthetic
        && buffered.outcomes != stream.outcomes
    {
        let why = first_difference(buffered.outcomes.as_ref(), stream.outcomes.as_ref());
        return Some(Parity::Differs(format!(
            "synthetic outcomes differ at {why}"
        )));
    }
    Some(Parity::Same)
}

/// JSON pointer of the first difference between two values.
fn first_difference(a: Option<&Value>, b: Option<&Value>) -> String {
    fn walk(a: &Value, b: &Value, at: String) -> Option<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                x.keys()
                    .chain(y.keys())
                    .find_map(|k| match (x.get(k), y.get(k)) {
                        (Some(p), Some(q)) => walk(p, q, format!("{at}/{k}")),
                        _ => Some(format!("{at}/{k}")),
                    })
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| walk(p, q, format!("{at}/{i}"))),
            _ => (a != b).then_some(at),
        }
    }
    match (a, b) {
        (Some(a), Some(b)) => walk(a, b, String::new())
            .map_or_else(|| "/".into(), |p| if p.is_empty() { "/".into() } else { p }),
        _ => "/".into(),
    }
}

fn mark_parity(m: &mut ReplayMatrix) {
    for i in 0..m.rows.len() {
        if m.rows[i].mode != Mode::Stream.slug() {
            continue;
        }
        let Some(j) = m.rows.iter().position(|r| {
            r.case == m.rows[i].case
                && r.choice == m.rows[i].choice
                && r.mode == Mode::Buffered.slug()
        }) else {
            continue;
        };
        for p in m.providers.clone() {
            let (Some(b), Some(s)) = (m.rows[j].cells.get(&p), m.rows[i].cells.get(&p)) else {
                continue;
            };
            let par = parity(b, s);
            if let Some(c) = m.rows[j].cells.get_mut(&p) {
                c.parity.clone_from(&par);
            }
            if let Some(c) = m.rows[i].cells.get_mut(&p) {
                c.parity = par;
            }
        }
    }
}

/// Per provider: how many cells have each status, how many pairs are at parity, cassette origins.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProviderSummary {
    pub statuses: BTreeMap<Status, usize>,
    pub parity_same: usize,
    pub parity_differs: usize,
    pub recorded: usize,
    pub synthetic: usize,
    pub imported: usize,
}

impl ProviderSummary {
    pub fn count(&self, s: Status) -> usize {
        self.statuses.get(&s).copied().unwrap_or(0)
    }
}

pub fn summary(m: &ReplayMatrix, p: Provider) -> ProviderSummary {
    let mut s = ProviderSummary::default();
    for row in &m.rows {
        let Some(c) = row.cells.get(&p) else { continue };
        *s.statuses.entry(c.status).or_default() += 1;
        if row.mode == Mode::Stream.slug() {
            match &c.parity {
                Some(Parity::Same) => s.parity_same += 1,
                Some(Parity::Differs(_)) => s.parity_differs += 1,
                None => {}
            }
        }
        match c.provenance {
            Some(ProvenanceKind::Recorded) => s.recorded += 1,
            Some(ProvenanceKind::Synthetic) => s.synthetic += 1,
            Some(ProvenanceKind::Imported) => s.imported += 1,
            None => {}
        }
    }
    s
}

/// Short tag for a cassette's origin.
pub(crate) fn provenance_tag(p: Option<ProvenanceKind>) -> &'static str {
    match p {
        Some(ProvenanceKind::Recorded) => "rec",
        Some(ProvenanceKind::Synthetic) => "syn",
        Some(ProvenanceKind::Imported) => "imp",
        None => "",
    }
}

/// The matrix of the suite under `root`: every trial (or those whose name contains `filter`)
/// replayed from its cassette. Broken case files are left out here; the harness reports them.
pub fn matrix(root: &std::path::Path, filter: Option<&str>) -> ReplayMatrix {
    let trials: Vec<Trial> = crate::case::discover(root)
        .trials
        .into_iter()
        .filter(|t| filter.is_none_or(|f| t.name().contains(f)))
        .collect();
    let results = crate::harness::replay_all(root, &trials);
    build(&trials, &results)
}
