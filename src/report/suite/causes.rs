//! Root causes as a maintainer reads them: the `--findings` list, the suite document's leading
//! section (the causes as a table, then each one's reproducer) and the ready-to-file issue of
//! `--report-bug`, for gateways and libraries alike. The causes themselves are the engine's
//! (`engine::causes`).

use std::fmt::Write as _;

use crate::engine::{RootCause, System, SystemKind};
use crate::text::md_cell;

/// The `--findings` list: one block per cause.
pub fn terminal(causes: &[RootCause], trials: usize) -> String {
    let total: usize = causes.iter().map(|c| c.trials.len()).sum();
    let mut s = format!(
        "{total} failing trials of {trials} in {} root causes\n",
        causes.len()
    );
    for c in causes {
        let _ = writeln!(
            s,
            "\n{}  {}  {} trials  {}\n  {}",
            c.id,
            c.severity.as_str(),
            c.trials.len(),
            c.routes.join(", "),
            c.title
        );
        match &c.known {
            Some(k) => {
                let _ = writeln!(
                    s,
                    "  known ({}): {}{}",
                    k.at,
                    k.audit
                        .map(|v| format!("{}: ", v.as_str()))
                        .unwrap_or_default(),
                    k.tracker.as_deref().unwrap_or(&k.reason)
                );
            }
            None => {
                let _ = writeln!(s, "  smallest trial: {}", c.reproducer.trial);
            }
        }
    }
    s
}

/// The audit column: the verdict with its tracker, or what is left to do.
fn audit(c: &RootCause) -> String {
    match &c.known {
        Some(k) => {
            let v = k.audit.map_or("not audited", |v| v.as_str());
            match &k.tracker {
                Some(t) => format!("{v} ({t}): {}", k.reason),
                None => format!("{v}: {}", k.reason),
            }
        }
        None => "not a known failure".into(),
    }
}

/// The document's leading section: the causes as a table, then each one's reproducer.
pub fn markdown(kind: SystemKind, causes: &[RootCause], trials: usize) -> String {
    let total: usize = causes.iter().map(|c| c.trials.len()).sum();
    let mut s = String::from("## Root causes\n\n");
    let _ = writeln!(
        s,
        "{total} failing trials of {trials} collapse into {} root causes (findings grouped by side, kind and detail, tool and case names abstracted). `tooltape {} NAME --report-bug ID` prints one as an issue.\n",
        causes.len(),
        kind.slug()
    );
    let _ = writeln!(s, "| id | cause | severity | trials | routes | audit |");
    let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- |");
    for c in causes {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} |",
            c.id,
            md_cell(&c.title),
            c.severity.as_str(),
            c.trials.len(),
            md_cell(&c.routes.join(", ")),
            md_cell(&audit(c))
        );
    }
    for c in causes {
        let _ = writeln!(s, "\n### `{}`\n", c.id);
        let _ = writeln!(s, "{}\n", md_cell(&c.title));
        let _ = writeln!(s, "Expected: {}\n", c.reproducer.expected);
        let _ = writeln!(
            s,
            "<details><summary>Reproducer: <code>{}</code></summary>\n",
            c.reproducer.trial
        );
        let _ = writeln!(s, "```sh\n{}\n```\n\n</details>", c.reproducer.command);
    }
    s.push('\n');
    s
}

/// A fenced block, its fence longer than any backtick run inside.
fn fenced(lang: &str, text: &str) -> String {
    let mut fence = String::from("```");
    while text.contains(&fence) {
        fence.push('`');
    }
    format!("{fence}{lang}\n{text}\n{fence}\n")
}

/// A ready-to-file Markdown issue for one cause of `system`.
pub fn report_bug<S: System>(system: &S, c: &RootCause) -> String {
    let r = &c.reproducer;
    let (kind, name) = (system.kind(), system.name());
    let mut s = format!("## {}\n\n", c.title);
    let _ = writeln!(
        s,
        "Found by tooltape's {} suite against {}. Severity: {}. {} trial(s) fail with it, on {}.\n",
        kind.slug(),
        system.description(),
        c.severity.as_str(),
        c.trials.len(),
        c.routes.join(", ")
    );
    let _ = writeln!(s, "### Expected\n\n{}\n", r.expected);
    let _ = writeln!(s, "### Reproduce\n\n{}\n", how_to_reproduce(kind));
    s.push_str(&fenced("sh", &r.command));
    let _ = writeln!(s, "\n### {}\n", sent_heading(kind));
    match &r.upstream_request {
        Some(v) => s.push_str(&fenced(
            "json",
            &serde_json::to_string_pretty(v).unwrap_or_default(),
        )),
        None => s.push_str("Nothing.\n"),
    }
    if let Some(a) = &r.upstream_answer {
        let _ = writeln!(s, "\n### {}\n", answered_heading(kind));
        s.push_str(&fenced("", a));
    }
    match r.downstream_status {
        Some(n) => {
            let _ = writeln!(s, "\n### What the client got (HTTP {n})\n");
        }
        None if kind == SystemKind::Client => {
            let _ = writeln!(s, "\n### What the library handed its caller\n");
        }
        None => {
            let _ = writeln!(s, "\n### What the client got (HTTP none)\n");
        }
    }
    s.push_str(&fenced("", &r.downstream_answer));
    let _ = writeln!(s, "\n### Trials\n");
    for t in c.trials.iter().take(20) {
        let _ = writeln!(s, "- `{t}`");
    }
    if c.trials.len() > 20 {
        let _ = writeln!(s, "- … and {} more", c.trials.len() - 20);
    }
    let _ = writeln!(
        s,
        "\n<sub>tooltape root cause `{}` of `{}s/{name}.toml`.</sub>",
        c.id,
        kind.slug()
    );
    s
}

/// The heading of what went upstream (for a model server: what it was sent, its own exchange).
fn sent_heading(kind: SystemKind) -> &'static str {
    match kind {
        SystemKind::Gateway => "What the gateway sent upstream",
        SystemKind::Client => "What the library sent upstream",
        SystemKind::Server => "What the server was sent",
    }
}

/// The heading of what upstream answered (for a model server: what its model produced).
fn answered_heading(kind: SystemKind) -> &'static str {
    match kind {
        SystemKind::Server => "What the server answered",
        SystemKind::Gateway | SystemKind::Client => "What upstream answered",
    }
}

/// How a maintainer replays a reproducer without tooltape.
fn how_to_reproduce(kind: SystemKind) -> &'static str {
    match kind {
        SystemKind::Gateway => {
            "Start the gateway (`$GATEWAY` is its base URL) with its upstream pointed at a server on `$UPSTREAM` that answers what is shown below, then send:"
        }
        SystemKind::Client => {
            "Call the library as its driver does (the driver protocol's trial below; `base_url` is a server that answers what is shown below), or run the trial with tooltape:"
        }
        SystemKind::Server => {
            "Start the server as its profile does (`$SERVER` is its base URL; the model, the template and the flags are in the profile), then send:"
        }
    }
}
