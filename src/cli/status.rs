//! `tooltape status` and `tooltape scan`: print the library's status report and secret scan.

use super::cases::Corpus;
use super::exit::{self, CliError, CommandResult};
use clap::Args;
use std::path::{Path, PathBuf};
use tooltape::{redact::Secrets, status::scan_path};

#[derive(Args, Debug)]
pub struct ScanArgs {
    /// A cassette file or folder (default: cassettes/ under --root).
    pub path: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Only trials whose name contains this.
    pub filter: Option<String>,
}

/// `tooltape status [FILTER]`: prints the report, broken files included; exit 1 when the suite
/// has broken files (a case, a tool, the provider table, a cassette, an orphan), else 0.
pub fn run(corpus: Corpus<'_>, filter: Option<&str>) -> CommandResult {
    let discovery = corpus.discover();
    let r = tooltape::status::report(corpus.root, &discovery, filter);
    out!("{}", r.text);
    exit::failed_if(r.broken_files > 0)
}

/// `tooltape scan [PATH]`: scans every file under PATH (default `cassettes/` under `root`),
/// printing `path:line:col: what` per finding; exit 1 when anything is found.
pub fn run_scan(root: &Path, path: Option<&Path>) -> CommandResult {
    let target = path.map_or_else(
        || root.join("cassettes"),
        |p| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                root.join(p)
            }
        },
    );
    if !target.exists() {
        if path.is_none() {
            return Err(CliError::FailedWith(format!(
                "{}: no cassettes/ folder: nothing was scanned (run from the project root, or pass --root or a PATH)",
                target.display()
            )));
        }
        return Err(format!("{}: no such file or folder", target.display()).into());
    }
    let report = scan_path(root, &target, &Secrets::from_env());
    let (files, findings) = (report.files, report.findings.len());
    for (shown, x) in &report.findings {
        outln!("{}:{}:{}: {}", shown.display(), x.line, x.column, x.what);
    }
    for (shown, why) in &report.unreadable {
        eprintln!("{}:1:1: not scanned: {why}", shown.display());
    }
    if files == 0 && report.unreadable.is_empty() {
        return Err(CliError::FailedWith(format!(
            "{}: no files to scan: a scan of nothing is not a pass (is this the cassette folder?)",
            target.display()
        )));
    }
    if findings > 0 {
        return Err(CliError::FailedWith(format!(
            "{findings} finding(s) in {files} file(s): remove the secret (re-record, or edit the file), and revoke the key if it was real"
        )));
    }
    if !report.unreadable.is_empty() {
        return Err(CliError::FailedWith(format!(
            "{} file(s) could not be scanned: fix or remove them",
            report.unreadable.len()
        )));
    }
    outln!("{files} file(s) scanned, no secrets found");
    Ok(())
}
