//! `cargo bench` (and `make bench`): speed figures against the project's targets.
//!
//! One bench target without libtest's harness: each section times the library through its
//! public API and adds aligned lines to a [`report::Report`]; the process exits 1 when a target
//! is missed. Run `make bench` (release profile, allocator settings) or
//! `cargo bench --bench bench -- --only SECTION`.

mod client;
mod gateway;
mod hop;
mod parse;
mod proxy;
mod record;
mod replay;
mod report;
mod schema;
mod streams;
mod textcall;

use report::Report;

/// Section names, in run order, as `--only NAME` takes them.
const SECTIONS: [&str; 14] = [
    "replay",
    "openai-chat",
    "parse",
    "openai-responses",
    "anthropic",
    "gemini",
    "textcall",
    "schema",
    "record",
    "proxy",
    "proxy-hostile",
    "hop",
    "gateway",
    "client",
];

fn main() {
    let only = match sections(std::env::args().skip(1)) {
        Ok(only) => only,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    // Cargo runs bench targets from the package root: cases/ and cassettes/ are found there.
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let report = run_all(&root, &only);
    for l in &report.lines {
        println!("{l}");
    }
    std::process::exit(i32::from(report.missed > 0));
}

/// The sections asked for with `--only NAME` (repeatable, or `--only=NAME`); every section when
/// none. `cargo bench` adds `--bench`, which is accepted and ignored; anything else is an error.
fn sections(args: impl Iterator<Item = String>) -> Result<Vec<String>, String> {
    let mut only = Vec::new();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        let name = match a.as_str() {
            "--bench" => continue,
            "--only" => args
                .next()
                .ok_or_else(|| "--only needs a section name".to_string())?,
            _ => match a.strip_prefix("--only=") {
                Some(n) => n.to_string(),
                None => {
                    return Err(format!(
                        "unexpected argument `{a}`; usage: cargo bench --bench bench -- [--only SECTION]..."
                    ));
                }
            },
        };
        if !SECTIONS.contains(&name.as_str()) {
            return Err(format!(
                "unknown bench section `{name}`; expected one of {}",
                SECTIONS.join(", ")
            ));
        }
        only.push(name);
    }
    Ok(only)
}

/// Every section in order, or only those named in `only` (names from [`SECTIONS`]).
/// Figures need a release build to mean anything.
fn run_all(root: &std::path::Path, only: &[String]) -> Report {
    let mut r = Report::default();
    if cfg!(debug_assertions) {
        r.note("WARNING: debug build; run `make bench` (release) for real figures");
    }
    r.note(&report::allocator_note(
        std::env::var("GLIBC_TUNABLES").ok().as_deref(),
    ));
    for name in SECTIONS {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        match name {
            "replay" => replay::section(root, &mut r),
            "openai-chat" => streams::openai_chat(&mut r),
            "parse" => parse::section(&mut r),
            "openai-responses" => streams::openai_responses(&mut r),
            "anthropic" => streams::anthropic(&mut r),
            "gemini" => streams::gemini(&mut r),
            "textcall" => textcall::section(&mut r),
            "schema" => schema::section(&mut r),
            "record" => record::section(&mut r),
            "proxy" => proxy::section(&mut r),
            "proxy-hostile" => proxy::hostile_section(&mut r),
            "hop" => hop::section(&mut r),
            "gateway" => gateway::section(root, &mut r),
            "client" => client::section(root, &mut r),
            _ => {}
        }
    }
    r.lines.push(String::new());
    r.lines.push(if r.missed == 0 {
        "all targets met".into()
    } else {
        format!("{} target(s) MISSED", r.missed)
    });
    r
}
