//! The crate's shape, read from its own source: no import cycles between files, no import from
//! a lower layer to a higher one, and ARCHITECTURE.md's codemap naming every part of `src/`.
//!
//! Layers come from the codemap itself (its `layer` column), so the document and the check
//! cannot drift apart. A module's own tests (`tests.rs`, `tests/`, `testkit.rs`) are exempt.

use crate::scratch::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One `use` or inline path reference: the file it stands in, its line, the path's segments.
struct Reference {
    line: usize,
    segments: Vec<String>,
}

/// A source file of the crate with its module path (`["providers", "anthropic"]`).
struct SourceFile {
    rel: String,
    module: Vec<String>,
    refs: Vec<Reference>,
}

fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == "tests.rs"
        || name == "testkit.rs"
        || rel.contains("/tests/")
        || rel.contains("/snapshots/")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Source with comments, string and char literals blanked (newlines kept, so lines still count),
/// and `#[cfg(test)]` items removed.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        out.push(b'\n');
                    }
                    i += 1;
                }
            }
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'_')
        {
            // raw string r"…" / r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == b'\n' {
                    out.push(b'\n');
                }
                j += 1;
            }
            out.extend_from_slice(b"\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                if i < b.len() && b[i] == b'\n' {
                    out.push(b'\n');
                }
                i += 1;
            }
            out.extend_from_slice(b"\"\"");
            i += 1;
        } else if c == b'\'' {
            // a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            let close = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                let ch = std::str::from_utf8(&b[i + 1..b.len().min(i + 6)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&b[i + 1..b.len().min(i + 5)]).ok())
                    .and_then(|s| s.chars().next());
                ch.filter(|c| !c.is_ascii())
                    .map(|c| i + 1 + c.len_utf8())
                    .filter(|&p| b.get(p) == Some(&b'\''))
            };
            match close {
                Some(p) => {
                    out.extend_from_slice(b"' '");
                    i = p + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    let text = String::from_utf8(out).expect("blanking keeps UTF-8");
    strip_cfg_test(&text)
}

/// Removes `#[cfg(test)]` items (a `mod x;`, a `mod x { … }`, a `use …;`, a `fn …{…}`).
fn strip_cfg_test(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        // the item ends at the first `;` before any `{`, or at the `}` closing the first `{`.
        let semi = item.find(';');
        let brace = item.find('{');
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, ch) in item[b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => item.len(),
        };
        out.extend(item[..end].chars().filter(|&c| c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn ident_at(s: &[u8], mut i: usize) -> (String, usize) {
    let start = i;
    while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
        i += 1;
    }
    (String::from_utf8_lossy(&s[start..i]).into_owned(), i)
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Expands a use tree starting at `i` (after `use`), pushing every full path; returns the end.
fn use_tree(s: &[u8], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        i = skip_ws(s, i);
        if s.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = skip_ws(s, i);
                if s.get(i) == Some(&b'}') {
                    return i + 1;
                }
                i = use_tree(s, i, &path, out);
                i = skip_ws(s, i);
                match s.get(i) {
                    Some(b',') => i += 1,
                    Some(b'}') => return i + 1,
                    _ => return i,
                }
            }
        }
        if s.get(i) == Some(&b'*') {
            out.push(path);
            return i + 1;
        }
        let (id, j) = ident_at(s, i);
        if id.is_empty() {
            out.push(path);
            return j;
        }
        i = j;
        if id != "self" || path.is_empty() {
            path.push(id);
        }
        i = skip_ws(s, i);
        if s.get(i) == Some(&b':') && s.get(i + 1) == Some(&b':') {
            i += 2;
            continue;
        }
        if s[i..].starts_with(b"as") {
            i = skip_ws(s, i + 2);
            let (_, j) = ident_at(s, i);
            i = j;
        }
        out.push(path);
        return i;
    }
}

fn references(code: &str) -> Vec<Reference> {
    let s = code.as_bytes();
    let line_of = |pos: usize| code[..pos].bytes().filter(|&c| c == b'\n').count() + 1;
    let mut refs = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let boundary =
            i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_' || s[i - 1] == b':');
        if !boundary || !(s[i].is_ascii_alphabetic() || s[i] == b'_') {
            i += 1;
            continue;
        }
        let (word, j) = ident_at(s, i);
        if word == "use" {
            let mut paths = Vec::new();
            let end = use_tree(s, j, &[], &mut paths);
            for segments in paths {
                refs.push(Reference {
                    line: line_of(i),
                    segments,
                });
            }
            i = end.max(j);
        } else if matches!(word.as_str(), "crate" | "super" | "self") && s.get(j) == Some(&b':') {
            let mut segments = vec![word];
            let mut k = j;
            while s.get(k) == Some(&b':') && s.get(k + 1) == Some(&b':') {
                let (id, e) = ident_at(s, k + 2);
                if id.is_empty() {
                    break;
                }
                segments.push(id);
                k = e;
            }
            refs.push(Reference {
                line: line_of(i),
                segments,
            });
            i = k;
        } else {
            i = j;
        }
    }
    refs
}

fn load_sources(src: &Path) -> Vec<SourceFile> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mut module: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(String::from)
                .collect();
            let last = module.last().cloned().unwrap_or_default();
            if matches!(last.as_str(), "mod" | "lib" | "main") {
                module.pop();
            }
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            SourceFile {
                refs: references(&code_only(&text)),
                rel: format!("src/{rel}"),
                module,
            }
        })
        .collect()
}

/// The file a module path lands in: the longest prefix that is a module of the crate.
fn resolve<'a>(modules: &'a BTreeMap<Vec<String>, String>, path: &[String]) -> Option<&'a String> {
    (1..=path.len()).rev().find_map(|n| modules.get(&path[..n]))
}

/// Import edges between files: file → (target file → first line importing it).
fn edges(files: &[SourceFile]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .filter(|f| !f.module.is_empty())
        .map(|f| (f.module.clone(), f.rel.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for f in files.iter().filter(|f| !is_test_file(&f.rel)) {
        // `self` is the file's own module, `super` its parent, for `x.rs` and `x/mod.rs` alike.
        let here: Vec<String> = f.module.clone();
        let mut out: BTreeMap<String, usize> = BTreeMap::new();
        for r in &f.refs {
            let mut segs = r.segments.clone();
            let base: Vec<String> = match segs.first().map(String::as_str) {
                Some("crate") => {
                    segs.remove(0);
                    Vec::new()
                }
                Some("self") => {
                    segs.remove(0);
                    here.clone()
                }
                Some("super") => {
                    let mut b = here.clone();
                    while segs.first().map(String::as_str) == Some("super") {
                        segs.remove(0);
                        b.pop();
                    }
                    b
                }
                // a child module named without `self::` (2018 paths), e.g. `use decode::decode;`
                Some(first) => {
                    let mut child = here.clone();
                    child.push(first.to_string());
                    if modules.contains_key(&child) {
                        here.clone()
                    } else {
                        continue;
                    }
                }
                None => continue,
            };
            let mut full = base;
            full.extend(segs);
            if let Some(target) = resolve(&modules, &full)
                && *target != f.rel
                && !is_test_file(target)
            {
                out.entry(target.clone()).or_insert(r.line);
            }
        }
        graph.insert(f.rel.clone(), out);
    }
    graph
}

/// Strongly connected components with more than one file (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeMap<String, usize>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.g.get(v) {
            for w in ws.keys() {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(lw));
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(iw));
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v.as_str());
        }
    }
    t.out
}

/// The codemap rows of ARCHITECTURE.md: (path as written, layer, line).
fn codemap() -> Vec<(String, u32, usize)> {
    let text = fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut rows = Vec::new();
    let mut in_map = false;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("## ") {
            in_map = line.trim() == "## Codemap";
            continue;
        }
        if !in_map || !line.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let (Some(paths), Some(layer)) = (cells.first(), cells.get(1)) else {
            continue;
        };
        let Ok(layer) = layer.parse::<u32>() else {
            continue;
        };
        for p in paths.split('`').skip(1).step_by(2) {
            for p in p.split(", ") {
                rows.push((p.trim().to_string(), layer, n + 1));
            }
        }
    }
    rows
}

/// The layer of a file: the codemap row with the longest path that is the file or a folder of it.
fn layer_of(map: &[(String, u32, usize)], rel: &str) -> Option<u32> {
    map.iter()
        .filter(|(p, _, _)| rel == p || (p.ends_with('/') && rel.starts_with(p.as_str())))
        .max_by_key(|(p, _, _)| p.len())
        .map(|(_, l, _)| *l)
}

#[test]
fn no_import_cycles_between_files() {
    let files = load_sources(&repo().join("src"));
    let graph = edges(&files);
    let found = cycles(&graph);
    let mut msg = String::new();
    for comp in &found {
        msg.push_str(&format!("import cycle between {} files:\n", comp.len()));
        for a in comp {
            for (b, line) in &graph[a] {
                if comp.contains(b) {
                    msg.push_str(&format!("  {a}:{line}: imports {b}\n"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "{msg}  fix: move the shared item down to a file both can import (see ARCHITECTURE.md, Invariants)"
    );
}

#[test]
fn no_import_from_a_lower_layer_to_a_higher_one() {
    let map = codemap();
    let files = load_sources(&repo().join("src"));
    let graph = edges(&files);
    let mut problems = Vec::new();
    for (from, targets) in &graph {
        let Some(lf) = layer_of(&map, from) else {
            problems.push(format!(
                "{from}:1: no layer: add it to ARCHITECTURE.md's codemap"
            ));
            continue;
        };
        for (to, line) in targets {
            let Some(lt) = layer_of(&map, to) else {
                continue;
            };
            if lt > lf {
                problems.push(format!(
                    "{from}:{line}: layer {lf} imports {to} (layer {lt})"
                ));
            }
        }
    }
    assert!(
        graph.len() > 50,
        "only {} files read from src/",
        graph.len()
    );
    assert_eq!(layer_of(&map, "src/model.rs"), Some(1));
    assert_eq!(
        layer_of(&map, "src/providers/openai_chat/stream.rs"),
        Some(3)
    );
    assert!(
        problems.is_empty(),
        "{}\n  fix: a lower layer never imports a higher one; move the item down, or pass it in",
        problems.join("\n")
    );
}

#[test]
fn codemap_names_every_part_of_src() {
    let map = codemap();
    assert!(
        !map.is_empty(),
        "ARCHITECTURE.md: no `## Codemap` table with a layer column"
    );
    let listed: BTreeSet<&str> = map.iter().map(|(p, _, _)| p.as_str()).collect();
    let src = repo().join("src");
    let mut missing = Vec::new();
    let mut dirs = Vec::new();
    for e in fs::read_dir(&src).unwrap().filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let is_dir = e.path().is_dir();
        let rel = if is_dir {
            format!("src/{name}/")
        } else {
            format!("src/{name}")
        };
        if is_dir {
            dirs.push(e.path());
        }
        // `x/` beside `x.rs` holds x.rs's own children (its tests): x.rs's row covers it.
        let covered = is_dir && src.join(format!("{name}.rs")).exists();
        if !covered && !listed.contains(rel.as_str()) {
            missing.push(rel);
        }
    }
    // Nested folders (other than tests and snapshots) must be covered by a row too.
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).unwrap().filter_map(Result::ok) {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && name != "tests" && name != "snapshots" {
                let rel = format!("{}/", p.strip_prefix(repo()).unwrap().to_string_lossy());
                let covered = d.join(format!("{name}.rs")).exists();
                if !covered && !listed.contains(rel.as_str()) {
                    missing.push(rel);
                }
                dirs.push(p);
            }
        }
    }
    for (p, _, line) in &map {
        if !repo().join(p.trim_end_matches('/')).exists() {
            missing.push(format!(
                "ARCHITECTURE.md:{line}: `{p}` is listed but does not exist"
            ));
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md:1: the codemap does not match src/:\n  {}\n  fix: add a row (path, layer, what it owns) to the codemap, or remove the stale one",
        missing.join("\n  ")
    );
}

#[test]
fn the_reader_sees_what_the_compiler_sees() {
    // Self-check of the reader on the shapes the crate uses.
    let code = code_only(
        "use crate::a::{b::{self, C}, d as e};\n// use crate::zzz;\nlet s = \"crate::q::r\";\nfn f() { crate::x::y(); super::z::w(); }\n#[cfg(test)]\nmod tests { use crate::t; }\n",
    );
    let got: Vec<String> = references(&code)
        .iter()
        .map(|r| format!("{}:{}", r.line, r.segments.join("::")))
        .collect();
    assert_eq!(
        got,
        [
            "1:crate::a::b",
            "1:crate::a::b::C",
            "1:crate::a::d",
            "4:crate::x::y",
            "4:super::z::w"
        ]
    );
}
