//! Size limits that keep the code readable: no function in `src/` over 120 lines (150 in
//! `tests/`), no file of code in `src/` over 700 lines, `src/cli/mod.rs` (argument types and
//! dispatch only) under 300 lines, ARCHITECTURE.md under 150 lines of at most 160 characters,
//! at most 60 names at the library's root, none renamed (the rest lives in its façade modules).

use crate::scratch::repo;
use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 120;
const MAX_CLI_MOD_LINES: usize = 300;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(first line, length, name)` of every function whose body is a block: from its `fn` line to
/// the `}` at the same indentation (the code is rustfmt-formatted).
fn functions(src: &str) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = &line[..line.len() - line.trim_start().len()];
        let name = line
            .trim_start()
            .split_once("fn ")
            .filter(|(before, _)| {
                before.is_empty()
                    || before
                        .split_whitespace()
                        .all(|w| w.starts_with("pub") || ["async", "const", "unsafe"].contains(&w))
            })
            .map(|(_, after)| after.split(['(', '<']).next().unwrap_or("").to_string());
        let Some(name) = name else {
            i += 1;
            continue;
        };
        let Some(open) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with(';')
        }) else {
            break;
        };
        if !lines[open].trim_end().ends_with('{') {
            i = open + 1;
            continue;
        }
        let close = format!("{indent}}}");
        let end = (open..lines.len())
            .find(|&j| lines[j] == close)
            .unwrap_or(lines.len() - 1);
        out.push((i + 1, end - i + 1, name));
        i = end + 1;
    }
    out
}

/// Every function under `dir` longer than `max` lines, as `path:line: fn NAME is N lines`
/// followed by `fix`; with the count of files read.
fn long_functions(dir: &str, max: usize, fix: &str) -> (usize, Vec<String>) {
    let mut files = Vec::new();
    rust_files(&repo().join(dir), &mut files);
    files.sort();
    let mut long = Vec::new();
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        for (line, len, name) in functions(&src) {
            if len > max {
                let rel = path.strip_prefix(repo()).unwrap().display();
                long.push(format!(
                    "{rel}:{line}: fn {name} is {len} lines (at most {max}): {fix}"
                ));
            }
        }
    }
    (files.len(), long)
}

#[test]
fn no_function_in_src_is_longer_than_120_lines() {
    let (files, long) = long_functions("src", MAX_FN_LINES, "split it into named steps");
    assert!(files > 100, "only {files} files under src/");
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// Functions under `tests/` are held to a limit of their own (the one above is `src/`'s): a test
/// that needs more is split into named helpers (the mutant suite's stream mutations: one a mutant).
const MAX_TEST_FN_LINES: usize = 150;

#[test]
fn no_function_in_tests_is_longer_than_150_lines() {
    let (files, long) = long_functions("tests", MAX_TEST_FN_LINES, "split it into named helpers");
    assert!(files > 30, "only {files} files under tests/");
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// A file of code (not a unit test's: `tests.rs` or under a `tests/` folder) holds one concern.
const MAX_FILE_LINES: usize = 700;

#[test]
fn no_file_of_code_in_src_is_longer_than_700_lines() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    let is_test = |p: &Path| {
        p.file_name().is_some_and(|n| n == "tests.rs")
            || p.components().any(|c| c.as_os_str() == "tests")
    };
    let mut long: Vec<String> = files
        .iter()
        .filter(|p| !is_test(p.strip_prefix(repo()).unwrap()))
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            let rel = p.strip_prefix(repo()).unwrap().display();
            (n > MAX_FILE_LINES).then(|| {
                format!("{rel}:1: {n} lines (at most {MAX_FILE_LINES}): split it by concern into child modules")
            })
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn the_function_reader_measures_bodies() {
    let src = "fn a() {\n    x();\n}\n\npub(crate) async fn b<T>(\n    t: T,\n) -> u8 {\n    1\n}\n    fn c();\nimpl X {\n    pub fn d(&self) {\n        if y {\n        }\n    }\n}\n";
    let got = functions(src);
    assert_eq!(
        got,
        vec![
            (1, 3, "a".to_string()),
            (5, 5, "b".to_string()),
            (12, 4, "d".to_string())
        ]
    );
}

#[test]
fn cli_mod_holds_only_arguments_and_dispatch() {
    let text = std::fs::read_to_string(repo().join("src/cli/mod.rs")).unwrap();
    let n = text.lines().count();
    assert!(
        n < MAX_CLI_MOD_LINES,
        "src/cli/mod.rs: {n} lines (under {MAX_CLI_MOD_LINES}): move command bodies to their own module in src/cli/"
    );
}

#[test]
fn the_architecture_map_stays_short() {
    let text = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n < 150,
        "ARCHITECTURE.md: {n} lines (under 150): keep the map short, details in module docs"
    );
    // Short without packing: no line over 160 characters.
    let wide: Vec<String> = (text.lines().enumerate())
        .filter(|(_, l)| l.chars().count() > 160)
        .map(|(i, l)| {
            format!(
                "ARCHITECTURE.md:{}: {} characters (at most 160)",
                i + 1,
                l.chars().count()
            )
        })
        .collect();
    assert!(
        wide.is_empty(),
        "{}\n  fix: say less there; the module's `//!` docs hold the rest",
        wide.join("\n")
    );
}

/// The names `src/lib.rs` puts at the crate root: its `pub mod`s and every item of its `pub use`s.
fn root_names(lib: &str) -> Vec<String> {
    let code: String = lib
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = Vec::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        if let Some(m) = stmt.strip_prefix("pub mod ") {
            names.push(m.trim().to_string());
        } else if let Some(u) = stmt.strip_prefix("pub use ") {
            let items = match u.split_once('{') {
                Some((_, list)) => list.trim_end_matches('}').to_string(),
                None => u.rsplit("::").next().unwrap_or(u).to_string(),
            };
            names.extend(
                items
                    .split(',')
                    .map(|i| i.split(" as ").last().unwrap_or(i).trim().to_string())
                    .filter(|i| !i.is_empty()),
            );
        }
    }
    names
}

#[test]
fn the_crate_root_holds_at_most_60_names_and_renames_none() {
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let names = root_names(&lib);
    assert!(
        names.len() > 20,
        "src/lib.rs: only {} names read",
        names.len()
    );
    assert!(
        names.len() <= 60,
        "src/lib.rs: {} names at the crate root (at most 60): export the rest from a façade module\n{}",
        names.len(),
        names.join(", ")
    );
    assert!(
        !lib.lines()
            .any(|l| l.contains("pub use") && l.contains(" as ")),
        "src/lib.rs: a `pub use … as …` rename: export the item under its own name from its module"
    );
}

#[test]
fn root_names_are_read_from_mods_and_uses() {
    let lib = "//! doc\npub mod a;\nmod b;\npub use x::{One, two as Three,\n    Four};\npub use y::Five;\n";
    assert_eq!(root_names(lib), ["a", "One", "Three", "Four", "Five"]);
}
