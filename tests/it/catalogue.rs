//! The catalogue of bad inputs (`tests/catalogue.toml`): one row per hostile or broken input,
//! each run by the built `tooltape` binary on a scratch copy of a small project (the `weather`
//! case, its tool, the provider table, its cassettes and snapshots), checked for its exit status
//! and message. Adding a row never touches Rust.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::scratch::{Scratch, bin, repo};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Catalogue {
    row: Vec<Row>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    name: String,
    group: String,
    #[serde(default)]
    setup: Vec<Step>,
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    exit: i32,
    /// Must appear in the output (stderr, then stdout): the message's first line.
    message: String,
    /// Must not appear anywhere in the output.
    #[serde(default)]
    absent: Vec<String>,
    /// Files (relative to the project) that must be byte-identical after the run.
    #[serde(default)]
    unchanged: Vec<String>,
    /// Files that must not exist after the run.
    #[serde(default)]
    gone: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    op: String,
    path: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    pointer: String,
    #[serde(default)]
    value: Option<toml::Value>,
    #[serde(default = "one")]
    repeat: usize,
    #[serde(default)]
    size: usize,
}

fn one() -> usize {
    1
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A small project in a scratch folder: the weather case with everything it owns.
fn project(n: usize) -> Scratch {
    let dir = Scratch::new(&format!("catalogue-{n}"));
    let src = repo();
    std::fs::create_dir_all(dir.join("cases/tools")).unwrap();
    for f in [
        "cases/providers.toml",
        "cases/weather.toml",
        "cases/tools/get_weather.json",
    ] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    for p in [
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "text-protocol",
    ] {
        let from = src.join("cassettes").join(p).join("weather");
        if from.is_dir() {
            copy_dir(&from, &dir.join("cassettes").join(p).join("weather"));
        }
    }
    std::fs::create_dir_all(dir.join("tests/snapshots")).unwrap();
    for e in std::fs::read_dir(src.join("tests/snapshots")).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("weather__") {
            std::fs::copy(e.path(), dir.join("tests/snapshots").join(e.file_name())).unwrap();
        }
    }
    dir
}

fn toml_to_json(v: &toml::Value) -> Value {
    serde_json::to_value(v).unwrap()
}

fn gzip_bomb_yaml(inflated: usize) -> String {
    use base64::Engine;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    let mut left = inflated;
    while left > 0 {
        let n = left.min(zeros.len());
        enc.write_all(&zeros[..n]).unwrap();
        left -= n;
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(enc.finish().unwrap());
    format!(
        "interactions:\n- request:\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n    body: '{{\"model\": \"gpt-4o\"}}'\n    headers: {{}}\n  response:\n    status: {{code: 200, message: OK}}\n    headers:\n      content-encoding: [gzip]\n    body:\n      string: !!binary |\n        {b64}\nversion: 1\n"
    )
}

fn alias_bomb_yaml() -> String {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
    let mut prev = "a";
    for n in names {
        s.push_str(&format!(
            "{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
        prev = n;
    }
    s.push_str("interactions: [*i]\n");
    s
}

fn apply(root: &Path, s: &Step) {
    let path = root.join(&s.path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    let text = s.text.replace("{root}", &root.display().to_string());
    match s.op.as_str() {
        "write" => std::fs::write(&path, text.repeat(s.repeat)).unwrap(),
        "append" => {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(text.as_bytes()).unwrap();
        }
        "replace" => {
            let before = std::fs::read_to_string(&path).unwrap();
            assert!(
                before.contains(&s.from),
                "{}: no `{}` to replace",
                s.path,
                s.from
            );
            std::fs::write(&path, before.replacen(&s.from, &s.to, 1)).unwrap();
        }
        "json_set" => {
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let value = toml_to_json(s.value.as_ref().expect("json_set needs a value"));
            match v.pointer_mut(&s.pointer) {
                Some(slot) => *slot = value,
                None => {
                    // A new key in an existing object.
                    let (parent, key) = s.pointer.rsplit_once('/').expect("a JSON pointer");
                    let obj = v.pointer_mut(parent).and_then(Value::as_object_mut);
                    obj.expect("the pointer's parent is an object")
                        .insert(key.into(), value);
                }
            }
            std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        }
        "bytes" => {
            let bytes: Vec<u8> = (0..text.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
                .collect();
            std::fs::write(&path, bytes).unwrap();
        }
        "remove" => {
            if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
        "mkdir" => std::fs::create_dir_all(&path).unwrap(),
        "symlink" => {
            let _ = std::fs::remove_file(&path);
            std::os::unix::fs::symlink(&text, &path).unwrap();
        }
        "fifo" => {
            let _ = std::fs::remove_file(&path);
            let ok = Command::new("mkfifo").arg(&path).status().unwrap();
            assert!(ok.success());
        }
        "gzip_bomb" => std::fs::write(&path, gzip_bomb_yaml(s.size)).unwrap(),
        "alias_bomb" => std::fs::write(&path, alias_bomb_yaml()).unwrap(),
        other => panic!("unknown op `{other}`"),
    }
}

struct Ran {
    code: Option<i32>,
    out: String,
    secs: f64,
}

fn run(root: &Path, row: &Row) -> Ran {
    let args: Vec<String> = row
        .args
        .iter()
        .map(|a| a.replace("{root}", &root.display().to_string()))
        .collect();
    let mut cmd = Command::new(bin());
    cmd.arg("--root")
        .arg(root)
        .args(&args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("CI")
        .env_remove("TOOLTAPE_MAX_FILE_BYTES")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GEMINI_API_KEY");
    for (k, v) in &row.env {
        cmd.env(k, v.replace("{root}", &root.display().to_string()));
    }
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut s).ok();
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut s).ok();
        s
    });
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (o, e) = (out_t.join().unwrap(), err_t.join().unwrap());
    Ran {
        code,
        out: format!(
            "{}\n{}",
            String::from_utf8_lossy(&e),
            String::from_utf8_lossy(&o)
        ),
        secs: started.elapsed().as_secs_f64(),
    }
}

/// A row's exit code and seconds, or what went wrong.
type RowResult = Result<(Option<i32>, f64), String>;

fn check_row(n: usize, row: &Row) -> RowResult {
    let root = project(n);
    for s in &row.setup {
        apply(&root, s);
    }
    let before: Vec<Option<Vec<u8>>> = row
        .unchanged
        .iter()
        .map(|f| std::fs::read(root.join(f)).ok())
        .collect();
    let ran = run(&root, row);
    let mut problems = Vec::new();
    if ran.code != Some(row.exit) {
        problems.push(format!("exit {:?}, expected {}", ran.code, row.exit));
    }
    if !ran.out.contains(&row.message) {
        problems.push(format!("no `{}` in the output", row.message));
    }
    for a in &row.absent {
        if ran.out.contains(a) {
            problems.push(format!("`{a}` in the output"));
        }
    }
    for (f, b) in row.unchanged.iter().zip(before) {
        if std::fs::read(root.join(f)).ok() != b {
            problems.push(format!("{f} changed"));
        }
    }
    for f in &row.gone {
        if root.join(f).exists() {
            problems.push(format!("{f} still exists"));
        }
    }
    if problems.is_empty() {
        Ok((ran.code, ran.secs))
    } else {
        let shown: String = ran.out.lines().take(12).collect::<Vec<_>>().join("\n    ");
        Err(format!("{}\n  output:\n    {shown}", problems.join("; ")))
    }
}

#[test]
fn every_bad_input_fails_loudly_with_its_message() {
    let path = repo().join("tests/catalogue.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let cat: Catalogue =
        toml::from_str(&text).unwrap_or_else(|e| panic!("tests/catalogue.toml: {e}"));
    assert!(cat.row.len() >= 60, "the catalogue needs at least 60 rows");
    let filter = std::env::var("CATALOGUE_FILTER").ok();
    let rows: Vec<(usize, &Row)> = cat
        .row
        .iter()
        .enumerate()
        .filter(|(_, r)| filter.as_deref().is_none_or(|f| r.name.contains(f)))
        .collect();
    // Two workers: each row is a separate process on its own scratch project.
    let results: Vec<(usize, RowResult)> = std::thread::scope(|s| {
        let halves: Vec<Vec<(usize, &Row)>> = vec![
            rows.iter().copied().filter(|(i, _)| i % 2 == 0).collect(),
            rows.iter().copied().filter(|(i, _)| i % 2 == 1).collect(),
        ];
        let handles: Vec<_> = halves
            .into_iter()
            .map(|h| {
                s.spawn(move || {
                    h.into_iter()
                        .map(|(i, r)| {
                            let got = std::panic::catch_unwind(|| check_row(i, r))
                                .unwrap_or_else(|_| Err("the row's setup panicked".into()));
                            (i, got)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all
    });
    let mut failures = Vec::new();
    println!(
        "{:<4} {:<10} {:<58} {:>4} {:>6}  result",
        "#", "group", "row", "exit", "secs"
    );
    for (i, r) in &results {
        let row = &cat.row[*i];
        match r {
            Ok((code, secs)) => println!(
                "{:<4} {:<10} {:<58} {:>4} {:>6.2}  ok",
                i + 1,
                row.group,
                row.name,
                code.map_or("-".into(), |c| c.to_string()),
                secs
            ),
            Err(e) => {
                println!(
                    "{:<4} {:<10} {:<58} {:>4} {:>6}  FAIL",
                    i + 1,
                    row.group,
                    row.name,
                    "?",
                    ""
                );
                failures.push(format!("tests/catalogue.toml: row `{}`: {e}", row.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
