//! `tooltape mcp` against a real MCP server: the pinned `@modelcontextprotocol/server-everything`
//! from npm, installed once into `~/.cache/tooltape/mcp/` (outside the repository; skipped with
//! the reason when npm or node is missing, failed then under CI), its tools listed and judged per
//! target, offline, over stdio and over Streamable HTTP; its tools written as cases pass every
//! simulated trial. A hostile server (endless pages, a 2 MB schema) meets the limits. Plus the
//! exit codes: a required target's refusal is 1, a server that dies or stays silent is 2.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::scratch::{Scratch, bin};

/// The pinned package and version (npm, MIT).
const PACKAGE: &str = "@modelcontextprotocol/server-everything";
const VERSION: &str = "2026.8.31";

const TARGETS: [&str; 8] = [
    "openai-chat",
    "openai-chat-strict",
    "openai-responses",
    "openai-responses-strict",
    "anthropic",
    "anthropic-strict",
    "gemini",
    "text-protocol",
];

/// The server's entry point, installing the pinned package on first use; `None` (the caller
/// skips, the reason printed) when node or npm is not there, outside CI (`crate::needs`: under
/// CI, where `.ci/run` has Node.js 20 and npm, it fails).
#[track_caller]
fn server_everything() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let home = home.expect("HOME set (the server is installed into ~/.cache/tooltape/mcp)");
    let dir = home.join(format!(".cache/tooltape/mcp/server-everything-{VERSION}"));
    let entry = dir.join(format!("node_modules/{PACKAGE}/dist/index.js"));
    let how = "install Node.js and npm to run the MCP tests";
    crate::needs::program("node", how)?;
    if entry.is_file() {
        return Some(entry);
    }
    crate::needs::program("npm", how)?;
    // Tests run at once (and, under nextest, in processes of their own): each installs into a
    // folder of its own and renames it into place, so none runs a half-written install (two
    // npm installs in one folder left a package without its files). A rename that loses the
    // race finds the winner's install in place.
    let parent = dir.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    let own = tempfile::Builder::new()
        .prefix(".server-everything-")
        .tempdir_in(parent)
        .unwrap();
    let manifest = format!(
        r#"{{"name":"tooltape-mcp-everything","private":true,"dependencies":{{"{PACKAGE}":"{VERSION}"}}}}"#
    );
    std::fs::write(own.path().join("package.json"), manifest).unwrap();
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent"])
        .current_dir(own.path())
        .output()
        .unwrap();
    let built = own
        .path()
        .join(format!("node_modules/{PACKAGE}/dist/index.js"));
    assert!(
        out.status.success() && built.is_file(),
        "npm install {PACKAGE}@{VERSION} in {} failed:\n{}",
        own.path().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // A folder without the entry point is a broken install (an earlier run's, cut short).
    if dir.exists() && !entry.is_file() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if std::fs::rename(own.path(), &dir).is_ok() {
        // Renamed: nothing left for the guard to remove.
        let _ = own.keep();
    }
    assert!(entry.is_file(), "{} has no {PACKAGE}", dir.display());
    Some(entry)
}

fn mcp(args: &[&str]) -> Output {
    Command::new(bin()).arg("mcp").args(args).output().unwrap()
}

#[test]
fn every_tool_of_server_everything_has_a_verdict_per_target() {
    let Some(entry) = server_everything() else {
        return;
    };
    let entry = entry.to_str().unwrap();
    let out = mcp(&["--format", "json", "--", "node", entry]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["server"]["name"], "mcp-servers/everything");
    assert_eq!(doc["targets"], serde_json::json!(TARGETS));
    let tools = doc["tools"].as_array().unwrap();
    assert!(tools.len() >= 10, "{} tools", tools.len());
    for tool in tools {
        for target in TARGETS {
            let v = tool["verdicts"][target]["verdict"]
                .as_str()
                .unwrap_or_default();
            assert!(
                ["as-written", "lossless", "lossy", "refused"].contains(&v),
                "{} → {target}: {v:?}",
                tool["name"]
            );
        }
        // Non-strict OpenAI and the text protocol take every one of its tools as written.
        assert_eq!(tool["verdicts"]["openai-chat"]["verdict"], "as-written");
        assert_eq!(tool["verdicts"]["text-protocol"]["verdict"], "as-written");
    }
    // `format: uri` is outside OpenAI's strict subset and `default` is refused there: the strict
    // transform drops both (into the description) and the verdict names them; Gemini's
    // `parameters` moves the format into the description too.
    let gzip = tools
        .iter()
        .find(|t| t["name"] == "gzip-file-as-resource")
        .unwrap();
    let strict = &gzip["verdicts"]["openai-responses-strict"];
    assert_eq!(strict["verdict"], "lossy", "{strict}");
    let lost = strict["lost"].to_string();
    assert!(
        lost.contains("format (dropped; first at /properties/data)") && lost.contains("default"),
        "{strict}"
    );
    assert_eq!(gzip["verdicts"]["gemini"]["verdict"], "lossy");

    // Anthropic's strict subset has no numeric bounds: `get-resource-links` is refused there.
    let required = mcp(&["--require", "anthropic-strict", "--", "node", entry]);
    assert_eq!(required.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&required.stderr).contains("get-resource-links"));
    let required = mcp(&["--require", "openai-responses-strict", "--", "node", entry]);
    assert_eq!(required.status.code(), Some(0));
}

#[test]
fn the_cases_written_from_server_everything_pass_every_simulated_trial() {
    let Some(entry) = server_everything() else {
        return;
    };
    let root = Scratch::new("mcp-cases");
    let cases = root.join("mine");
    let dir = cases.to_str().unwrap();
    let out = mcp(&["--cases", dir, "--", "node", entry.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(cases.join("mcp_echo.toml").is_file());
    assert!(cases.join("tools/echo.json").is_file());
    // Written again, unchanged: nothing differs, nothing refused.
    let again = mcp(&["--cases", dir, "--", "node", entry.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0));
    let run = |command: &str| {
        let mut args = vec!["--root", root.to_str().unwrap(), "--cases", dir, command];
        if command == "record" {
            args.push("--simulate");
        }
        args.push("mcp_");
        // Recording into the test's own scratch folder: CI's refusal to write files is about
        // the repository, as the recording tests' runs are.
        Command::new(bin())
            .args(&args)
            .env_remove("CI")
            .output()
            .unwrap()
    };
    let recorded = run("record");
    assert_eq!(
        recorded.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let replayed = run("replay");
    let text = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{text}");
    assert!(text.contains(" passed, 0 failed"), "{text}");
}

#[test]
fn the_same_tools_come_over_streamable_http() {
    let Some(entry) = server_everything() else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new("node")
        .arg(&entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server says when it listens (on stderr).
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening") {
        line.clear();
        if std::io::BufRead::read_line(&mut stderr, &mut line).unwrap_or(0) == 0 {
            break;
        }
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = mcp(&["--url", &url, "--format", "json"]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let over_http: Value = serde_json::from_slice(&out.stdout).unwrap();
    let over_stdio = mcp(&["--format", "json", "--", "node", entry.to_str().unwrap()]);
    let over_stdio: Value = serde_json::from_slice(&over_stdio.stdout).unwrap();
    assert_eq!(over_http["tools"], over_stdio["tools"]);
    // Nobody listens there any more: exit 2.
    let gone = mcp(&["--url", &url, "--timeout", "5"]);
    assert_eq!(gone.status.code(), Some(2));
}

/// An MCP server on stdio that never stops paginating, and whose first tool's schema is 2 MB.
const HOSTILE: &str = r#"
import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "hostile", "version": "1"}}
    elif m["method"] == "tools/list":
        c = int((m.get("params") or {}).get("cursor") or 0)
        d = "x" * (2000000 if c == 0 else 10)
        r = {"tools": [{"name": "t%d" % c, "inputSchema": {"type": "object",
             "properties": {"x": {"type": "string", "description": d}}}}], "nextCursor": str(c + 1)}
    else:
        r = {}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;

#[test]
fn a_hostile_server_is_cut_at_the_page_limit_and_its_huge_schema_not_judged() {
    let Some(python) = crate::python::python_with("json") else {
        return;
    };
    let out = mcp(&["--format", "json", "--", &python, "-c", HOSTILE]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["truncated"], "stopped after 100 tools/list pages");
    assert_eq!(doc["tools"].as_array().unwrap().len(), 100);
    let huge = &doc["tools"][0]["verdicts"]["openai-chat"];
    assert_eq!(huge["verdict"], "refused");
    assert!(
        huge["reason"]
            .as_str()
            .unwrap()
            .contains("over tooltape's limit"),
        "{huge}"
    );
    assert_eq!(
        doc["tools"][1]["verdicts"]["openai-chat"]["verdict"],
        "as-written"
    );
}

#[test]
fn a_server_that_dies_exits_2_with_its_stderr() {
    let out = mcp(&[
        "--",
        "sh",
        "-c",
        "echo 'cannot open the database' >&2; exit 3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot open the database"), "{stderr}");
    let missing = mcp(&["--", "tooltape-no-such-mcp-server"]);
    assert_eq!(missing.status.code(), Some(2));
    let unknown = mcp(&["--require", "bedrock", "--", "true"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("--require bedrock: not a target"));
}

#[test]
fn a_server_that_never_answers_exits_2_at_the_deadline() {
    let out = mcp(&["--timeout", "1", "--", "sleep", "30"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not answer within 1 s"));
}
