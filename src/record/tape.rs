//! A model server's own exchanges on tape: each trial's requests and answers kept as a cassette
//! of its own (`tooltape server NAME --record DIR`), and a loopback server that answers a later
//! run from those cassettes, each request checked against the one recorded (`--replay DIR`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::cassette::{self, Cassette, Interaction, Provenance, ServerProvenance, StoredResponse};
use crate::http::{HttpRequest, HttpResponse};
use crate::redact::Secrets;
use crate::replay;

/// The header a replayed request carries: which cassette (`case::route::choice::mode`) and which
/// of its interactions (`#N`, 0-based) the replay server answers with.
const TAPE_HEADER: &str = "x-tooltape-tape";

/// Where a trial's cassette lives under the tape's folder, by the trial's key
/// (`case::route::choice::mode`): `ROUTE/CASE/CHOICE-MODE.json`.
pub fn cassette_place(key: &str) -> PathBuf {
    let parts: Vec<&str> = key.split("::").collect();
    match parts.as_slice() {
        [case, route, choice, mode] => Path::new(route)
            .join(case)
            .join(format!("{choice}-{mode}.json")),
        _ => PathBuf::from(format!("{}.json", key.replace("::", "-"))),
    }
}

/// What every cassette of a recording says of where its answers came from; each route's
/// settings are filled in per cassette.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `server llama-cpp 11434.0.0`, or the `--url` recorded.
    pub source: String,
    pub server: ServerProvenance,
    /// Each route's model name and the settings its bodies carried.
    pub routes: BTreeMap<String, (String, Value)>,
}

/// A tape: recording a run, or replaying one.
pub struct Tape {
    dir: PathBuf,
    /// The server profile's name: a cassette's trial is `server::NAME::KEY`.
    server: String,
    kind: Kind,
}

enum Kind {
    Record {
        recorded: Mutex<Recorded>,
        /// Each trial's interactions so far, by key; `None` once it broke.
        kept: Mutex<BTreeMap<String, Option<Vec<Interaction>>>>,
    },
    Replay {
        /// The cassettes by key, each with its text (for positions).
        cassettes: BTreeMap<String, Cassette>,
        /// How many of each cassette's interactions were asked for.
        served: Mutex<BTreeMap<String, usize>>,
        server: tokio::sync::Mutex<Option<MockServer>>,
    },
}

impl fmt::Debug for Tape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Record { .. } => "record",
            Kind::Replay { .. } => "replay",
        };
        write!(f, "Tape({kind} {})", self.dir.display())
    }
}

/// What a finished tape did: a summary line, or the problems found (each `path:line: …`).
pub type Finished = Result<String, Vec<String>>;

impl Tape {
    /// A tape that keeps each trial's exchanges and writes them to `dir` when the run ends.
    pub fn recording(dir: &Path, recorded: Recorded) -> Tape {
        Tape {
            dir: dir.to_path_buf(),
            server: recorded.server.name.clone(),
            kind: Kind::Record {
                recorded: Mutex::new(recorded),
                kept: Mutex::default(),
            },
        }
    }

    /// A tape that answers server `server`'s trials from the cassettes under `dir` (every
    /// `*.json` below it, each in the place its trial gives it). A cassette that does not load,
    /// was recorded from another server, or stands in the wrong place, is an error naming it.
    pub fn replaying(dir: &Path, server: &str) -> Result<Tape, String> {
        if !dir.is_dir() {
            return Err(format!(
                "{}: no such folder of cassettes (record one: tooltape server NAME --record {0})",
                dir.display()
            ));
        }
        let mut cassettes = BTreeMap::new();
        for file in crate::harness::files_under(dir, "json") {
            let (c, _) = cassette::load(&file)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("{}: vanished while reading", file.display()))?;
            let Some(key) = c.trial.strip_prefix(&format!("server::{server}::")) else {
                return Err(format!(
                    "{}:3:3: the cassette's trial `{}` is not one of server {server}'s: replay it with the profile it was recorded from",
                    file.display(),
                    c.trial
                ));
            };
            let key = key.to_string();
            let place = file.strip_prefix(dir).unwrap_or(&file);
            if cassette_place(&key) != place {
                return Err(format!(
                    "{}:3:3: the cassette's trial `{}` belongs at {}: move it, or record again",
                    file.display(),
                    c.trial,
                    dir.join(cassette_place(&key)).display()
                ));
            }
            cassettes.insert(key, c);
        }
        Ok(Tape {
            dir: dir.to_path_buf(),
            server: server.to_string(),
            kind: Kind::Replay {
                cassettes,
                served: Mutex::default(),
                server: tokio::sync::Mutex::new(None),
            },
        })
    }

    /// Whether this tape answers in the server's place (the server is neither installed nor
    /// started).
    pub fn replays(&self) -> bool {
        matches!(self.kind, Kind::Replay { .. })
    }

    /// Replay: the loopback server answering from the cassettes, started on first use.
    /// Recording: `None` (requests go to the server).
    pub async fn url(&self) -> Option<String> {
        let Kind::Replay {
            cassettes, server, ..
        } = &self.kind
        else {
            return None;
        };
        let mut server = server.lock().await;
        if server.is_none() {
            let s = MockServer::builder()
                .disable_request_recording()
                .start()
                .await;
            let templates = (cassettes.iter())
                .map(|(k, c)| {
                    let t = c.interactions.iter().map(|i| replay::template(&i.response));
                    (k.clone(), t.collect())
                })
                .collect();
            Mock::given(wiremock::matchers::any())
                .respond_with(Hub { templates })
                .mount(&s)
                .await;
            *server = Some(s);
        }
        server.as_ref().map(MockServer::uri)
    }

    /// Recording: the model file the server runs (its name, SHA-256 and package), for every
    /// cassette's provenance.
    pub fn model_file(&self, file: &Path, package: &str) {
        let Kind::Record { recorded, .. } = &self.kind else {
            return;
        };
        let sha256 = sha256_of(file).ok();
        let mut r = recorded.lock().unwrap_or_else(|e| e.into_inner());
        r.server.model_file = file.file_name().map(|n| n.to_string_lossy().into_owned());
        r.server.model_sha256 = sha256;
        r.server.model_package = Some(package.to_string());
    }

    /// Before a request is sent. Replay: the header that names its recorded answer, or why it
    /// cannot be replayed (no cassette, more requests than recorded, a request that differs from
    /// the recorded one). Recording: nothing.
    pub fn before(
        &self,
        key: &str,
        request: &HttpRequest,
    ) -> Result<Option<(String, String)>, String> {
        let Kind::Replay {
            cassettes, served, ..
        } = &self.kind
        else {
            return Ok(None);
        };
        let path = self.dir.join(cassette_place(key));
        let again = format!(
            "record it: tooltape server {} --record {}",
            self.server,
            self.dir.display()
        );
        let Some(c) = cassettes.get(key) else {
            return Err(format!(
                "{}: no cassette for this trial: {again}",
                path.display()
            ));
        };
        let n = {
            let mut served = served.lock().unwrap_or_else(|e| e.into_inner());
            let n = served.entry(key.to_string()).or_insert(0);
            *n += 1;
            *n - 1
        };
        let Some(recorded) = c.interactions.get(n) else {
            return Err(format!(
                "{}: request {} was not recorded (the cassette holds {}): {again}",
                path.display(),
                n + 1,
                c.interactions.len()
            ));
        };
        let mut body = request.body.clone();
        crate::redact::redact_json(&mut body, &Secrets::default());
        let want = &recorded.request;
        if want.method != request.method || want.path != request.path || want.body != body {
            let line = cassette::request_line(&cassette::to_text(c), n);
            return Err(format!(
                "{}:{line}: request {} differs from the one recorded (a case, the profile or tooltape changed):\n{}{again}",
                path.display(),
                n + 1,
                replay::json_diff(&want.body, &body)
            ));
        }
        Ok(Some((TAPE_HEADER.to_string(), format!("{key}#{n}"))))
    }

    /// After a request was answered. Recording: keeps the exchange as the trial's next
    /// interaction. Replay: nothing.
    pub fn after(&self, key: &str, request: &HttpRequest, answer: Option<(&HttpResponse, bool)>) {
        let Kind::Record { kept, .. } = &self.kind else {
            return;
        };
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        let entry = kept
            .entry(key.to_string())
            .or_insert_with(|| Some(Vec::new()));
        match (answer, entry.as_mut()) {
            (Some((response, stream)), Some(list)) => list.push(Interaction {
                request: request.clone(),
                response: StoredResponse::from_http(response, stream),
            }),
            // No answer to keep (a transport error, a timeout): the trial is not kept.
            (None, _) => *entry = None,
            (Some(_), None) => {}
        }
    }

    /// The run ended with the trials `ran` (keys), `complete` when no filter chose among them.
    /// Recording: writes each trial's cassette (redacted, scanned, atomic). Replay: a recorded
    /// interaction no request asked for, and (complete runs) a cassette no trial owns, are
    /// errors.
    pub async fn finish(&self, ran: &[String], complete: bool, secrets: &Secrets) -> Finished {
        match &self.kind {
            Kind::Record { recorded, kept } => {
                let recorded = recorded.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let kept = std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()));
                write_all((&self.dir, &self.server), &recorded, kept, secrets)
            }
            Kind::Replay {
                cassettes,
                served,
                server,
            } => {
                if let Some(s) = server.lock().await.take() {
                    // As `ReplayServer::close`: the pool's lock, taken with the budget lifted.
                    tokio::task::unconstrained(async move { drop(s) }).await;
                }
                let served = served.lock().unwrap_or_else(|e| e.into_inner()).clone();
                unused(&self.dir, cassettes, &served, (ran, complete))
            }
        }
    }
}

/// Writes every kept trial's cassette under `dir`; a trial that broke is named, not written.
fn write_all(
    (dir, server): (&Path, &str),
    recorded: &Recorded,
    kept: BTreeMap<String, Option<Vec<Interaction>>>,
    secrets: &Secrets,
) -> Finished {
    let (mut written, mut broke, mut problems) = (0, Vec::new(), Vec::new());
    for (key, interactions) in kept {
        let Some(interactions) = interactions.filter(|i| !i.is_empty()) else {
            broke.push(key);
            continue;
        };
        let route = key.split("::").nth(1).unwrap_or_default();
        let (model, settings) = (recorded.routes.get(route)).cloned().unwrap_or_default();
        let answered_model = (interactions.first())
            .and_then(|i| i.response.body.as_ref())
            .and_then(|b| b.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let c = Cassette {
            tooltape: cassette::FORMAT,
            trial: format!("server::{server}::{key}"),
            provenance: Provenance {
                kind: cassette::ProvenanceKind::Recorded,
                date: cassette::today(),
                model,
                answered_model,
                tooltape: env!("CARGO_PKG_VERSION").to_string(),
                case_hash: None,
                source: Some(recorded.source.clone()),
                server: Some(ServerProvenance {
                    route: route.to_string(),
                    settings,
                    ..recorded.server.clone()
                }),
            },
            interactions,
        };
        let rel = cassette_place(&key);
        let shown = dir.join(&rel);
        match super::trial::write_cassette(&shown, &shown, c, secrets) {
            Ok(()) => written += 1,
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut s = format!("recorded {written} cassettes into {}", dir.display());
    if !broke.is_empty() {
        s.push_str(&format!(
            "; {} trials not kept (a request got no answer): {}",
            broke.len(),
            broke.join(", ")
        ));
    }
    Ok(s)
}

/// Replay's closing check: interactions recorded and never asked for, cassettes no trial owns.
fn unused(
    dir: &Path,
    cassettes: &BTreeMap<String, Cassette>,
    served: &BTreeMap<String, usize>,
    (ran, complete): (&[String], bool),
) -> Finished {
    let mut problems = Vec::new();
    for (key, c) in cassettes {
        let path = dir.join(cassette_place(key));
        let asked = served.get(key).copied().unwrap_or(0);
        if !ran.contains(key) {
            if complete {
                problems.push(format!(
                    "{}:1: orphaned cassette: no trial of this run owns it (delete it, or record again)",
                    path.display()
                ));
            }
        } else if asked < c.interactions.len() {
            let line = cassette::request_line(&cassette::to_text(c), asked);
            problems.push(format!(
                "{}:{line}: interactions {} to {} were recorded and never asked for: record again",
                path.display(),
                asked + 1,
                c.interactions.len()
            ));
        }
    }
    if problems.is_empty() {
        let n: usize = served.values().sum();
        Ok(format!("replayed {n} requests from {}", dir.display()))
    } else {
        Err(problems)
    }
}

/// Every file below `dir`, its subfolders' too.
fn all_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            all_files(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// Answers a replayed request with the interaction its header names.
struct Hub {
    templates: BTreeMap<String, Vec<ResponseTemplate>>,
}

impl Respond for Hub {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let named = (req.headers.get(TAPE_HEADER))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit_once('#'))
            .and_then(|(key, n)| Some((key, n.parse::<usize>().ok()?)));
        let found = named.and_then(|(key, n)| self.templates.get(key)?.get(n));
        match found {
            Some(t) => t.clone(),
            None => ResponseTemplate::new(599)
                .set_body_string("tooltape replay: no recorded interaction for this request"),
        }
    }
}

/// A file's SHA-256 as `sha256:HEX`, read in pieces (a model file is hundreds of megabytes); a
/// model folder's (vLLM loads one) over its files in name order, each its path below the
/// folder, a NUL, then its bytes.
fn sha256_of(model: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    if model.is_dir() {
        let mut files = Vec::new();
        all_files(model, &mut files)?;
        files.sort();
        for f in files {
            let rel = f.strip_prefix(model).unwrap_or(&f);
            hasher.update(rel.to_string_lossy().as_bytes());
            hasher.update([0]);
            std::io::copy(&mut std::fs::File::open(&f)?, &mut hasher)?;
        }
    } else {
        std::io::copy(&mut std::fs::File::open(model)?, &mut hasher)?;
    }
    Ok(format!("sha256:{:x}", hasher.finalize()))
}

#[cfg(test)]
mod tests;
