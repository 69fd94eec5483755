//! Loading and validating a case: the provider table (`cases/providers.toml`), tool files
//! (`cases/tools/*.json`), the case's hash, and the checks that span several fields (tool names,
//! patterns that must match a trial).

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};
use toml::Spanned;

use super::corpus::{Entry, PROVIDERS_FILE};
use super::file::{Case, CaseFile, Mode, ProviderConfig};
use super::trial::{pattern_matches, trial_keys};
use crate::located::Located;
use crate::model::Provider;
use crate::model::{HostedTool, PROGRAMMATIC, Tool};

/// A problem in a case, tool or provider file, located for the reader.
pub(crate) type CaseError = Located;

fn toml_error(path: &Path, source: &str, err: &toml::de::Error) -> CaseError {
    let offset = err.span().map_or(0, |s| s.start);
    Located::at_offset(path, source, offset, err.message().trim())
}

/// Loads `cases/providers.toml`.
pub fn load_providers(cases_dir: &Path) -> Result<BTreeMap<Provider, ProviderConfig>, CaseError> {
    let path = cases_dir.join(PROVIDERS_FILE);
    providers_from(&Entry::disk(&path, &path))
}

/// The provider table of the corpus of `root` (`cases/providers.toml`, else the embedded one).
pub fn providers_of(root: &Path) -> Result<BTreeMap<Provider, ProviderConfig>, CaseError> {
    providers_from(&super::corpus::Corpus::of(root, None)?.providers)
}

/// Loads a provider table from the corpus.
pub(crate) fn providers_from(
    entry: &Entry,
) -> Result<BTreeMap<Provider, ProviderConfig>, CaseError> {
    let path = &entry.shown;
    let source = entry.read("cannot read the provider table")?;
    let table: BTreeMap<Provider, ProviderConfig> =
        toml::from_str(&source).map_err(|e| toml_error(path, &source, &e))?;
    if let Some(missing) = Provider::ALL.iter().find(|p| !table.contains_key(p)) {
        return Err(Located::at_start(
            path,
            format!("no `[{missing}]` table: every provider needs a default model and base_url"),
        ));
    }
    Ok(table)
}

/// Loads one neutral tool file.
fn load_tool(entry: &Entry) -> Result<(Tool, String), CaseError> {
    let text = entry.read("cannot read tool file")?;
    let tool: Tool = serde_json::from_str(&text).map_err(|e| CaseError {
        path: entry.shown.clone(),
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

/// The case's name: its file stem, which becomes the first segment of test names.
fn case_name(path: &Path) -> Result<String, CaseError> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || !name.chars().all(ok) {
        return Err(Located::at_start(
            path,
            "case file names use only letters, digits, `_` and `-` (they become test names)",
        ));
    }
    Ok(name.to_string())
}

/// The case's tools, and the hash of what the case and its tools mean. Comments, blank lines,
/// key order and `subject` can change without making its cassettes stale.
fn load_tools(
    file: &CaseFile,
    source: &str,
    find_tool: &dyn Fn(&str) -> Result<Entry, String>,
    at: &impl Fn(&Spanned<String>, String) -> CaseError,
) -> Result<(Vec<Tool>, String), CaseError> {
    let mut hasher = Sha256::new();
    if let Ok(mut table) = toml::from_str::<toml::Table>(source) {
        // What the case is about changes no request nor answer: its cassettes stay fresh.
        table.remove("subject");
        // Nor which of a library's routes it runs on.
        table.remove("mcp");
        hasher.update(canonical(&serde_json::to_value(&table).unwrap_or_default()).as_bytes());
    }
    let mut tools = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for t in &file.tools {
        let name = t.get_ref();
        if seen.contains(&name.as_str()) {
            return Err(at(
                t,
                format!("tool `{name}` is listed twice: remove the repeat"),
            ));
        }
        seen.push(name);
        tools.push(named_tool(t, find_tool, at, &mut hasher)?);
    }
    Ok((tools, format!("sha256:{:x}", hasher.finalize())))
}

/// A deferred tool (its file's `defer_loading`) needs a tool search among the case's `hosted`
/// tools: nothing else could ever load it (class 28); a namespace is a name; a tool code may
/// call (`allowed_callers`) needs a programmatic runner (class 30).
fn deferred_tools(
    file: &CaseFile,
    tools: &[Tool],
    at: &impl Fn(&Spanned<String>, String) -> CaseError,
) -> Result<(), CaseError> {
    let searched = file
        .hosted
        .iter()
        .any(|h| matches!(h, HostedTool::ToolSearch { .. }));
    for (t, spanned) in tools.iter().zip(&file.tools) {
        if t.defer_loading && !searched {
            return Err(at(
                spanned,
                format!(
                    "tool `{}` is deferred (`defer_loading` in its file) but the case declares no tool search (`hosted = [{{ type = \"tool_search\", variant = … }}]`) to load it",
                    t.name
                ),
            ));
        }
        // A tool code may call needs the runner (class 30); its callers are neutral words.
        if let Some(c) =
            (t.allowed_callers.iter()).find(|c| !matches!(c.as_str(), "direct" | PROGRAMMATIC))
        {
            return Err(at(
                spanned,
                format!(
                    "tool `{}`: allowed caller `{c}` is `direct` (the model) or `programmatic` (code the model wrote)",
                    t.name
                ),
            ));
        }
        if t.programmable()
            && !(file.hosted.iter()).any(|h| matches!(h, HostedTool::Programmatic { .. }))
        {
            return Err(at(
                spanned,
                format!(
                    "tool `{}` may be called from code (`allowed_callers` in its file) but the case declares no runner (`hosted = [{{ type = \"programmatic\", variant = … }}]`) to run that code",
                    t.name
                ),
            ));
        }
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-');
        if let Some(space) = (t.namespace.as_ref()).filter(|n| n.is_empty() || !n.chars().all(ok)) {
            return Err(at(
                spanned,
                format!(
                    "tool `{}`: namespace `{space}` uses only letters, digits, `_` and `-`",
                    t.name
                ),
            ));
        }
    }
    Ok(())
}

/// Each tool search's variant names one: `tool_search` (Responses) or an Anthropic
/// `tool_search_tool_*` type; each programmatic runner's `programmatic_tool_calling` or an
/// Anthropic `code_execution_*` type; `err` places a message at a byte offset of the case's
/// source.
fn search_variants(
    file: &CaseFile,
    err: &impl Fn(usize, String) -> CaseError,
    source: &str,
) -> Result<(), CaseError> {
    for h in &file.hosted {
        // A variant some API's encoder writes (the providers' own tables), else the error.
        let (variant, known, what) = match h {
            HostedTool::ToolSearch { variant } => (
                variant,
                crate::providers::tool_search::has_variant as fn(Provider, &str) -> bool,
                (
                    "tool search",
                    "a tool search is `tool_search` (OpenAI Responses) or an Anthropic `tool_search_tool_*` type (e.g. `tool_search_tool_regex_20251119`)",
                ),
            ),
            HostedTool::Programmatic { variant } => (
                variant,
                crate::providers::programmatic::has_variant as fn(Provider, &str) -> bool,
                (
                    "programmatic runner",
                    "a runner is `programmatic_tool_calling` (OpenAI Responses) or an Anthropic `code_execution_*` type (e.g. `code_execution_20250825`)",
                ),
            ),
            HostedTool::WebSearch { .. } => continue,
        };
        if !Provider::ALL.iter().any(|p| known(*p, variant)) {
            let start = source.find(&format!("\"{variant}\"")).unwrap_or(0);
            let (kind, expected) = what;
            return Err(err(
                start,
                format!("{kind} variant `{variant}`: {expected}"),
            ));
        }
    }
    Ok(())
}

/// Reads the tool file `t` names, its text added to the case's hash.
fn named_tool(
    t: &Spanned<String>,
    find_tool: &dyn Fn(&str) -> Result<Entry, String>,
    at: &impl Fn(&Spanned<String>, String) -> CaseError,
    hasher: &mut Sha256,
) -> Result<Tool, CaseError> {
    let name = t.get_ref();
    // The name becomes a path under cases/tools/: nothing that could leave the folder or
    // hide in it (no separator, no leading dot, no `..`). Each provider's encoder refuses
    // a name its API does not accept (dots are Gemini's; 128 characters its limit).
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty()
        || name.len() > 128
        || !name.chars().all(ok)
        || name.starts_with('.')
        || name.contains("..")
    {
        return Err(at(
            t,
            format!(
                "tool name `{name}`: tool names use 1 to 128 letters, digits, `_`, `-` and `.`, never a leading dot or `..` (they name cases/tools/NAME.json)"
            ),
        ));
    }
    let entry = find_tool(name).map_err(|msg| at(t, msg))?;
    let (tool, text) = load_tool(&entry)?;
    if &tool.name != name {
        let msg = format!(
            "the tool's name is `{}` but its file is named for `{name}`",
            tool.name
        );
        return Err(Located::at_start(entry.shown, msg));
    }
    hasher.update(canonical(&serde_json::from_str(&text).unwrap_or_default()).as_bytes());
    Ok(tool)
}

/// Each round's tool changes: an added tool is read from its file (its text hashed) and must
/// not be in force already; a removed one must be in force; a result answers a call made with
/// the tools in force before its round's change.
fn round_tools(
    file: &mut CaseFile,
    tools: &[Tool],
    find_tool: &dyn Fn(&str) -> Result<Entry, String>,
    at: &impl Fn(&Spanned<String>, String) -> CaseError,
    hash: &mut String,
) -> Result<(), CaseError> {
    if !file.rounds.iter().any(super::file::Round::changes_tools) {
        return Ok(());
    }
    let mut hasher = Sha256::new();
    hasher.update(hash.as_bytes());
    let mut in_force: Vec<Tool> = tools.to_vec();
    for round in &mut file.rounds {
        let has = |set: &[Tool], n: &str| set.iter().any(|t| t.name == n);
        if let Some(r) = round
            .results
            .iter()
            .find(|r| !has(&in_force, r.tool.get_ref()))
        {
            let msg = format!(
                "result for `{}`, which is not among the tools in force for the calls it answers",
                r.tool.get_ref()
            );
            return Err(at(&r.tool, msg));
        }
        for r in &round.remove_tools {
            if !has(&in_force, r.get_ref()) {
                let msg = format!(
                    "remove_tools names `{}`, which is not in force",
                    r.get_ref()
                );
                return Err(at(r, msg));
            }
        }
        let mut added = Vec::new();
        for a in &round.add_tools {
            let removed = round
                .remove_tools
                .iter()
                .any(|r| r.get_ref() == a.get_ref());
            if (has(&in_force, a.get_ref()) && !removed) || has(&added, a.get_ref()) {
                let msg = format!(
                    "add_tools names `{}`, which is in force already",
                    a.get_ref()
                );
                return Err(at(a, msg));
            }
            added.push(named_tool(a, find_tool, at, &mut hasher)?);
        }
        round.added = added;
        round.apply_tools(&mut in_force);
    }
    *hash = format!("sha256:{:x}", hasher.finalize());
    Ok(())
}

/// Loads and validates one case file, its tools from `tools_dir`.
pub fn load_case(
    path: &Path,
    tools_dir: &Path,
    providers: &BTreeMap<Provider, ProviderConfig>,
) -> Result<Case, CaseError> {
    let find_tool = |name: &str| {
        let p = tools_dir.join(format!("{name}.json"));
        match std::fs::symlink_metadata(&p) {
            Ok(_) => Ok(Entry::disk(&p, &p)),
            Err(_) => Err(format!(
                "no tool file {} for tool `{name}`: add it, or fix the name",
                p.display()
            )),
        }
    };
    load_case_from(&Entry::disk(path, path), &find_tool, providers)
}

/// The formats a gateway's caller sends the case in: `inbound`, which must list every provider
/// of the case, else the providers.
fn inbound_of(
    file: &CaseFile,
    providers: &[Provider],
    err: &impl Fn(usize, String) -> Located,
) -> Result<Vec<Provider>, Located> {
    let Some(list) = &file.inbound else {
        return Ok(providers.to_vec());
    };
    let inbound: Vec<Provider> = list.iter().map(|p| *p.get_ref()).collect();
    if let Some(missing) = providers.iter().find(|p| !inbound.contains(p)) {
        let at = list.first().map_or(0, |p| p.span().start);
        let msg = format!(
            "`inbound` leaves out `{}`, one of the case's providers: add it (a case's own APIs are always formats a caller sends it in)",
            missing.slug()
        );
        return Err(err(at, msg));
    }
    Ok(inbound)
}

/// A model server's dialect (`[simulate] server`) is the Chat API's: the case must run there.
fn check_server_dialect(
    file: &CaseFile,
    providers: &[Provider],
    path: &Path,
) -> Result<(), Located> {
    if file.simulate.server.is_some() && !providers.contains(&Provider::OpenaiChat) {
        return Err(Located::at_start(
            path,
            "`[simulate] server` is a Chat Completions dialect: add `openai-chat` to `providers`",
        ));
    }
    Ok(())
}

/// Loads and validates one case file of the corpus (its `Case::path` is the path shown).
pub(crate) fn load_case_from(
    entry: &Entry,
    find_tool: &dyn Fn(&str) -> Result<Entry, String>,
    providers: &BTreeMap<Provider, ProviderConfig>,
) -> Result<Case, CaseError> {
    let path = entry.shown.as_path();
    let name = case_name(path)?;
    let source = entry.read("cannot read case file")?;
    let mut file: CaseFile = toml::from_str(&source).map_err(|e| toml_error(path, &source, &e))?;
    let err = |start: usize, msg: String| Located::at_offset(path, &source, start, msg);
    let at = |t: &Spanned<String>, m| err(t.span().start, m);
    let (tools, mut hash) = load_tools(&file, &source, find_tool, &at)?;
    deferred_tools(&file, &tools, &at)?;
    search_variants(&file, &err, &source)?;
    round_tools(&mut file, &tools, find_tool, &at, &mut hash)?;
    let added: Vec<&str> = (file.rounds.iter().flat_map(|r| &r.added))
        .map(|t| t.name.as_str())
        .collect();

    let tool_names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for (i, c) in file.choices.iter().enumerate() {
        if file.choices[..i].iter().any(|p| p.get_ref() == c.get_ref()) {
            let msg = format!(
                "tool choice `{}` is listed twice: remove the repeat",
                c.get_ref().slug()
            );
            return Err(err(c.span().start, msg));
        }
        if let Some(bad) = c
            .get_ref()
            .named_tools()
            .into_iter()
            .find(|n| !tool_names.contains(&n.as_str()))
        {
            let msg = format!(
                "tool choice names `{bad}`, which is not among the case's tools {tool_names:?}"
            );
            return Err(err(c.span().start, msg));
        }
    }
    if file.choices.is_empty() {
        return Err(Located::at_start(
            path,
            "`choices` is empty: a case needs at least one tool choice",
        ));
    }
    if !file.caller_tools.is_empty() && !file.rounds.is_empty() {
        return Err(Located::at_start(
            path,
            "`caller_tools` with `[[rounds]]`: only the first request carries the caller's tools",
        ));
    }
    for r in file.rounds.iter().flat_map(|round| &round.results) {
        let name = r.tool.get_ref().as_str();
        if !tool_names.contains(&name) && !added.contains(&name) {
            let msg = format!(
                "result for `{}`, which is not among the case's tools",
                r.tool.get_ref()
            );
            return Err(err(r.tool.span().start, msg));
        }
        if let Some(id) = &r.unknown_call_id {
            let v = id.get_ref();
            let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if v.is_empty() || v.len() > 64 || !v.chars().all(ok) {
                let msg = format!(
                    "unknown_call_id `{v}`: use 1 to 64 letters, digits, `_` and `-` (an id every provider's format accepts)"
                );
                return Err(err(id.span().start, msg));
            }
        }
    }

    let providers_list = file.providers.as_ref().map_or_else(
        || Provider::ALL.to_vec(),
        |list| list.iter().map(|p| *p.get_ref()).collect(),
    );
    check_server_dialect(&file, &providers_list, path)?;
    let mut models: BTreeMap<Provider, String> = providers_list
        .iter()
        .filter_map(|p| Some((*p, providers.get(p)?.model.clone())))
        .collect();
    models.extend(file.models.iter().map(|(k, m)| (k.0, m.get_ref().clone())));
    let case = Case {
        name,
        path: path.to_path_buf(),
        source: source.clone(),
        tools,
        inbound: inbound_of(&file, &providers_list, &err)?,
        providers: providers_list,
        choices: file.choices.iter().map(|c| c.get_ref().clone()).collect(),
        modes: file.modes.as_ref().map_or_else(
            || vec![Mode::Buffered, Mode::Stream],
            |list| list.iter().map(|m| *m.get_ref()).collect(),
        ),
        models,
        hash,
        file,
    };
    super::subject::check(&case, err)?;
    // Every pattern must match at least one trial: a stale note is an error, not silence.
    let keys = trial_keys(&case);
    let matches = |pattern: &str| keys.iter().any(|k| pattern_matches(pattern, k));
    let expect = case
        .file
        .expect
        .iter()
        .map(|e| (e.span(), &e.get_ref().trials, "expectation"));
    let known =
        (case.file.known_failure.iter()).map(|k| (k.span(), &k.get_ref().trials, "known_failure"));
    for (span, pattern, what) in expect.chain(known) {
        if !matches(pattern) {
            return Err(err(
                span.start,
                format!("{what} pattern `{pattern}` matches no trial of this case"),
            ));
        }
    }
    Ok(case)
}
