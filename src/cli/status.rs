//! `tooltape status` and `tooltape scan`: print the library's status report and secret scan.

use std::path::Path;
use tooltape::{Secrets, discover, scan_path, status_report};

/// `tooltape status [FILTER]`: prints the report; exit 0 (it informs, the harness judges).
pub fn run(root: &Path, filter: Option<&str>) -> i32 {
    let discovery = discover(root);
    out!("{}", status_report(root, &discovery, filter));
    0
}

/// `tooltape scan [PATH]`: scans every file under PATH (default `cassettes/` under `root`),
/// printing `path:line:col: what` per finding; exit 1 when anything is found.
pub fn run_scan(root: &Path, path: Option<&Path>) -> i32 {
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
            outln!("no cassettes/ folder: nothing to scan");
            return 0;
        }
        eprintln!("{}: no such file or folder", target.display());
        return 2;
    }
    let report = scan_path(root, &target, &Secrets::from_env());
    let (files, findings) = (report.files, report.findings.len());
    for (shown, x) in &report.findings {
        outln!("{}:{}:{}: {}", shown.display(), x.line, x.column, x.what);
    }
    if findings > 0 {
        eprintln!(
            "{findings} finding(s) in {files} file(s): remove the secret (re-record, or edit the file), and revoke the key if it was real"
        );
        return 1;
    }
    outln!("{files} file(s) scanned, no secrets found");
    0
}
