//! `tooltape mcp`: list an MCP server's tools and say, per tool and target, whether tooltape's
//! encoders send it as written, after a lossless or lossy rewrite, or refuse it.

use std::path::Path;
use std::time::{Duration, SystemTime};

use clap::{Args, ValueEnum};

use super::exit::{self, CliError, CommandResult};
use tooltape::mcp::{self, Limits, Listing, Report, Server, Target};

/// How the report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum McpFormat {
    Terminal,
    Md,
    /// One JSON document: `{server, targets, truncated, tools: [{name, verdicts}], summary}`.
    Json,
    /// JUnit XML: a test case per tool and target; refused fails, lossy is skipped.
    Junit,
}

#[derive(Args, Debug)]
pub struct McpArgs {
    /// A Streamable HTTP MCP endpoint instead of a command.
    #[arg(long, conflicts_with = "command")]
    pub url: Option<String>,
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: McpFormat,
    /// Exit 1 when a tool is refused by one of these targets (openai-chat, openai-chat-strict,
    /// openai-responses, openai-responses-strict, anthropic, anthropic-strict, gemini,
    /// text-protocol).
    #[arg(long, num_args = 1..)]
    pub require: Vec<String>,
    /// Seconds the server has to start and list its tools.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// With the global `--cases DIR`: replace case files there that differ from the ones
    /// written now (otherwise the command stops before writing anything).
    #[arg(long)]
    pub force: bool,
    /// The server's command and arguments, after `--` (stdio transport).
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// Runs `tooltape mcp`; `cases` is the global `--cases DIR`, where the tools are written as
/// case files.
pub fn run(a: &McpArgs, cases: Option<&Path>) -> CommandResult {
    let required = required_targets(&a.require)?;
    let server = match (&a.url, a.command.is_empty()) {
        (Some(url), _) => Server::Url(url.clone()),
        (None, false) => Server::Command(a.command.clone()),
        (None, true) => {
            return Err(CliError::Error(
                "give the server: `tooltape mcp -- COMMAND ARGS…` or `tooltape mcp --url URL`"
                    .into(),
            ));
        }
    };
    let limits = Limits {
        timeout: Duration::from_secs(a.timeout.max(1)),
        ..Limits::default()
    };
    let listing = mcp::list_tools(&server, limits).map_err(|e| {
        let mut m = e.message;
        if !e.stderr_tail.trim().is_empty() {
            m.push_str("\nthe server's stderr (its end):\n");
            m.push_str(e.stderr_tail.trim_end());
        }
        CliError::Error(m)
    })?;
    if let Some(dir) = cases {
        write_cases(dir, &listing, a.force)?;
    }
    let report = Report::of(&listing);
    let text = match a.format {
        McpFormat::Terminal => mcp::terminal(&report),
        McpFormat::Md => mcp::markdown(&report),
        McpFormat::Json => mcp::json(&report),
        McpFormat::Junit => mcp::junit(&report, &tooltape::clock::utc_iso(SystemTime::now())),
    };
    out!("{text}");
    let refusals = report.refusals_for(&required);
    for (tool, target, reason) in &refusals {
        eprintln!(
            "required target {} refuses {}: {}",
            target.slug(),
            mcp::printable(tool),
            mcp::printable(reason)
        );
    }
    exit::failed_if(!refusals.is_empty())
}

fn required_targets(words: &[String]) -> Result<Vec<Target>, CliError> {
    let mut out = Vec::new();
    for w in words {
        let Some(target) = Target::from_slug(w) else {
            let known: Vec<&str> = Target::ALL.into_iter().map(Target::slug).collect();
            return Err(CliError::Error(format!(
                "--require {w}: not a target; give one of {}",
                known.join(", ")
            )));
        };
        out.push(target);
    }
    Ok(out)
}

/// Writes the listing's case files under `dir`: nothing when a file there differs and `force`
/// is off; one line on stderr per tool left out and a count at the end.
fn write_cases(dir: &Path, listing: &Listing, force: bool) -> Result<(), CliError> {
    let (files, skipped) = mcp::case_files(listing);
    let differs = |f: &mcp::CaseFile| {
        std::fs::read_to_string(dir.join(&f.path)).is_ok_and(|old| old != f.text)
    };
    if !force && let Some(f) = files.iter().find(|f| differs(f)) {
        return Err(CliError::Error(format!(
            "{} exists and differs from the case written now; nothing written (--force replaces it)",
            dir.join(&f.path).display()
        )));
    }
    std::fs::create_dir_all(dir.join("tools"))
        .map_err(|e| format!("cannot create {}: {e}", dir.join("tools").display()))?;
    for f in &files {
        let path = dir.join(&f.path);
        std::fs::write(&path, &f.text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    for s in &skipped {
        eprintln!("no case for {}", mcp::printable(s));
    }
    eprintln!(
        "{}: {} case(s) and their tools written",
        dir.display(),
        files.len() / 2
    );
    Ok(())
}
