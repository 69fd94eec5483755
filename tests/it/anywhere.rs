//! Run from anywhere: from a folder holding only the `tooltape` binary (no repository, no
//! `cases/`), a team writes a gateway profile with `init gateway`, runs its gateway (here
//! `tooltape proxy`, configured from a file to a fixed upstream address) and tests it over the
//! whole built-in corpus with `gateway --upstream-listen --format junit`: green, exit 0; one
//! wrong route gives findings and exit 1. The JUnit XML is read back by an XML parser (and by
//! Python's `junitparser` when present).

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::scratch::{Scratch, bin};

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    l.local_addr().unwrap().port()
}

/// The folder: the binary copied in, nothing else.
fn bare_folder(tag: &str) -> Scratch {
    let dir = Scratch::new(tag);
    std::fs::copy(bin(), dir.join("tooltape")).unwrap();
    // A child another test forked while the copy was open for writing holds that descriptor
    // until it execs: running the copy fails with ETXTBSY meanwhile. Wait until it runs.
    let t0 = Instant::now();
    loop {
        match Command::new(dir.join("tooltape")).arg("--version").output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                assert!(t0.elapsed() < Duration::from_secs(10), "{e}");
                std::thread::sleep(Duration::from_millis(20));
            }
            other => {
                assert!(other.unwrap().status.success());
                break;
            }
        }
    }
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(dir.join("tooltape"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .env_remove("CI")
        .output()
        .unwrap()
}

/// `tooltape proxy --config proxy.toml`, ready (its port accepts) or panicking with its output.
struct Proxy(Child);

impl Proxy {
    fn start(dir: &Path, port: u16) -> Proxy {
        let child = Command::new(dir.join("tooltape"))
            .args(["proxy", "--config", "proxy.toml"])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut proxy = Proxy(child);
        let t0 = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(proxy.0.try_wait().unwrap().is_none(), "the proxy exited");
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the proxy never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        proxy
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The proxy's config: the skeleton's model names routed to the fixed upstream address.
fn proxy_config(listen: u16, upstream: u16) -> String {
    let mut s = format!("listen = \"127.0.0.1:{listen}\"\n");
    for (model, provider) in [
        ("gpt-4.1-mini", "openai-chat"),
        ("gpt-5-mini", "openai-responses"),
        ("claude-haiku-4-5", "anthropic"),
        ("gemini-3.8-flash", "gemini"),
        ("tt-text", "text-protocol"),
    ] {
        s.push_str(&format!(
            "[[route]]\nmodel = \"{model}\"\nprovider = \"{provider}\"\nbase_url = \"http://127.0.0.1:{upstream}\"\nkey = \"sk-any\"\n"
        ));
    }
    s
}

/// (tests, failures, errors, skipped) as the suite says, checked against its test cases; and
/// the test cases' classnames.
fn read_junit(xml: &str) -> ((usize, usize, usize, usize), BTreeSet<String>) {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    let suite = suites[0];
    let n = |node: roxmltree::Node<'_, '_>, a: &str| -> usize {
        node.attribute(a)
            .unwrap_or_else(|| panic!("no {a}"))
            .parse()
            .unwrap()
    };
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let with = |tag: &str| {
        cases
            .iter()
            .filter(|c| c.children().any(|x| x.has_tag_name(tag)))
            .count()
    };
    let counts = (cases.len(), with("failure"), with("error"), with("skipped"));
    for node in [root, suite] {
        let said = (
            n(node, "tests"),
            n(node, "failures"),
            n(node, "errors"),
            n(node, "skipped"),
        );
        assert_eq!(said, counts, "the counts on <{}>", node.tag_name().name());
    }
    for c in &cases {
        assert!(c.attribute("name").is_some_and(|s| !s.is_empty()));
        let _: f64 = c.attribute("time").unwrap().parse().unwrap();
        if let Some(s) = c.children().find(|x| x.has_tag_name("skipped")) {
            assert!(
                s.attribute("message").is_some_and(|m| !m.is_empty()),
                "a skip says why"
            );
        }
    }
    let classes = cases
        .iter()
        .map(|c| c.attribute("classname").unwrap().to_string())
        .collect();
    (counts, classes)
}

/// Python's `junitparser` agrees on the counts (skipped when it is not installed, required
/// under `TOOLTAPE_PYTHON` or CI).
fn junitparser_counts(path: &Path) -> Option<(usize, usize, usize, usize)> {
    let python = crate::python::python_with("junitparser")?;
    let script = "import sys, junitparser\nx = junitparser.JUnitXml.fromfile(sys.argv[1])\nprint(x.tests, x.failures, x.errors, x.skipped)";
    let o = Command::new(python)
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Vec<usize> = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    Some((v[0], v[1], v[2], v[3]))
}

#[test]
fn a_gateway_configured_from_a_file_is_tested_from_an_empty_folder() {
    let dir = bare_folder("anywhere-gateway");
    let (listen, upstream) = (free_port(), free_port());
    let up = format!("127.0.0.1:{upstream}");
    let url = format!("http://127.0.0.1:{listen}");

    let o = run(
        &dir,
        &["init", "gateway", "mine.toml", "--upstream-listen", &up],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains(&format!("anthropic         http://{up}\n")),
        "{printed}"
    );
    let mut profile = std::fs::read_to_string(dir.join("mine.toml")).unwrap();
    profile.push_str(
        "\n[[routes]]\ninbound = \"chat\"\nupstream = \"text-protocol\"\nmodel = \"tt-text\"\n",
    );
    std::fs::write(dir.join("mine.toml"), &profile).unwrap();
    std::fs::write(dir.join("proxy.toml"), proxy_config(listen, upstream)).unwrap();
    let _proxy = Proxy::start(&dir, listen);

    let args = [
        "gateway",
        "mine.toml",
        "--url",
        &url,
        "--upstream-listen",
        &up,
        "--format",
        "junit",
    ];
    let o = run(&dir, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let xml = String::from_utf8(o.stdout).unwrap();
    let (counts, classes) = read_junit(&xml);
    assert_eq!((counts.1, counts.2), (0, 0), "green: {err}");
    assert!(err.contains(&format!("{} trials in", counts.0)), "{err}");
    // The whole built-in corpus ran: every trial of every case a client format can send (the
    // text protocol's own cases have no client format) on the profile's routes.
    let loaded =
        tooltape::gateway::load_gateway(&dir, dir.join("mine.toml").to_str().unwrap()).unwrap();
    let corpus = tooltape::engine::cases_of(&tooltape::discover(&dir));
    let expected = tooltape::engine::trials(&corpus, &loaded.routes(), None);
    assert_eq!(counts.0, expected.len());
    let cases: BTreeSet<String> = expected
        .iter()
        .map(|t| format!("mine.{}", t.case.name))
        .collect();
    assert_eq!(classes, cases);
    assert!(cases.len() > 50, "{} cases", cases.len());
    std::fs::write(dir.join("report.xml"), &xml).unwrap();
    if let Some(py) = junitparser_counts(&dir.join("report.xml")) {
        assert_eq!(py, counts);
    }
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !dir.join("cases").exists(),
        "nothing but what the team wrote: {entries:?}"
    );

    // One deliberately wrong route: Anthropic's model name sent to the Gemini route.
    let wrong = profile.replace(
        "model = \"claude-haiku-4-5\"",
        "model = \"gemini-3.8-flash\"",
    );
    assert_ne!(wrong, profile);
    std::fs::write(dir.join("mine.toml"), wrong).unwrap();
    let o = run(&dir, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let xml = String::from_utf8(o.stdout).unwrap();
    let ((_, failures, errors, _), _) = read_junit(&xml);
    assert!(
        failures > 0 && errors == 0,
        "{failures} failures, {errors} errors"
    );
    assert!(
        xml.contains("sent to gemini instead of anthropic"),
        "the finding is in the report"
    );

    // Nothing listening at --url: a broken run, exit 2.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let o = run(&dir, &["gateway", "mine.toml", "weather", "--url", &dead]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn cases_export_writes_the_corpus_and_keeps_edits_without_force() {
    let dir = bare_folder("anywhere-export");
    let o = run(&dir, &["cases", "export", "cases"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.join("cases/weather.toml").is_file() && dir.join("cases/tools").is_dir());
    std::fs::write(dir.join("cases/weather.toml"), "# ours\n").unwrap();
    let o = run(&dir, &["cases", "export", "cases"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cases/weather.toml") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("cases/weather.toml")).unwrap(),
        "# ours\n"
    );
    let o = run(&dir, &["cases", "export", "cases", "--force"]);
    assert_eq!(o.status.code(), Some(0));
    // A team's own folder beside the built-in corpus: its case is discovered with ours.
    std::fs::create_dir_all(dir.join("mine/tools")).unwrap();
    std::fs::copy(dir.join("cases/weather.toml"), dir.join("mine/ours.toml")).unwrap();
    std::fs::remove_dir_all(dir.join("cases")).unwrap();
    let o = run(&dir, &["--cases", "mine", "status", "ours::"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ours::anthropic::"), "{out}");
    assert!(out.contains("missing"), "{out}");
}

/// `init client` writes a profile that runs as written (tooltape's reference driver), from a
/// folder holding only the binary, and `client --format junit` reports it.
#[test]
fn init_client_writes_a_profile_that_runs_with_junit() {
    let dir = bare_folder("anywhere-client");
    let o = run(&dir, &["init", "client", "ours"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.join("clients/ours.toml").is_file());
    let o = run(&dir, &["init", "client", "ours"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an existing profile is not replaced"
    );
    let o = run(
        &dir,
        &[
            "client",
            "ours",
            "weather::openai-chat::",
            "--format",
            "junit",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let xml = String::from_utf8(o.stdout).unwrap();
    assert!(
        xml.contains(r#"<testsuites name="tooltape client ours""#),
        "{xml}"
    );
    let ((tests, failures, errors, _), classes) = read_junit(&xml);
    assert!(
        tests >= 2 && failures == 0 && errors == 0,
        "{tests} {failures} {errors}"
    );
    assert_eq!(classes.into_iter().collect::<Vec<_>>(), ["ours.weather"]);
}

/// `run`, which must exit 0 (else the panic shows its stderr).
fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let o = run(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    o
}

/// `tooltape client NAME` / `gateway NAME`'s profiles are built in: from a folder holding only
/// the binary, `--list` names them with their versions, and the official OpenAI SDK's profile
/// installs into the cache (as from the repository) and passes `weather` over its routes. Then
/// a library team's own checkout (docs/clients/README.md, "Your own library's checkout"):
/// `--install-dir DIR` runs the shipped profile's driver with the library installed in DIR (here
/// a venv whose python records that it ran, then runs the pinned SDK's), installs nothing, and
/// the document's version names DIR. One test, so one test thread, not two, waits for the
/// pinned install on a cold cache; the whole suite runs in `.ci/run` (`tooltape client openai`).
#[test]
fn the_built_in_client_profiles_run_from_an_empty_folder_and_against_a_development_copy() {
    let dir = bare_folder("anywhere-builtin");
    let o = run_ok(&dir, &["client", "--list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let openai = tooltape::system::builtin("clients", "openai").unwrap();
    let version = openai
        .lines()
        .find(|l| l.starts_with("version = "))
        .unwrap();
    let version = version.trim_start_matches("version = ").trim_matches('"');
    assert!(
        out.lines()
            .any(|l| l.starts_with("openai ") && l.contains(version) && l.ends_with("built in")),
        "{out}"
    );
    for name in tooltape::system::builtin_names("clients") {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name}: {out}"
        );
    }
    let o = run_ok(&dir, &["gateway", "--list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("litellm ") && l.contains("1.") && l.ends_with("built in")),
        "{out}"
    );

    let o = run_ok(
        &dir,
        &["client", "openai", "weather::openai-", "--format", "json"],
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["target"], "openai");
    assert_eq!(doc["version"], version);
    let trials = doc["trials"].as_array().unwrap();
    // client::openai::weather::ROUTE::CHOICE::MODE
    let routes: BTreeSet<&str> = trials
        .iter()
        .map(|t| t["name"].as_str().unwrap().split("::").nth(3).unwrap())
        .collect();
    assert!(
        trials.iter().all(|t| t["cell"]["status"] == "pass"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        routes.len() >= 2 && trials.len() >= 4 * routes.len(),
        "{} trials over {routes:?}",
        trials.len()
    );
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !entries.iter().any(|e| e == "clients" || e == "gateways"),
        "nothing written beside the binary: {entries:?}"
    );
    development_copy(&dir, version);
}

/// `--install-dir dev-venv` against the pinned install the run above made.
fn development_copy(dir: &Path, version: &str) {
    let install = tooltape::system::install_cache().join(format!("client-openai-{version}"));
    assert!(install.join(tooltape::system::COMPLETE).is_file());
    let pinned = install.join("bin/python");
    let dev = dir.join("dev-venv");
    std::fs::create_dir_all(dev.join("bin")).unwrap();
    let marker = dir.join("dev-python-ran");
    let wrapper = format!(
        "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
        marker.display(),
        pinned.display()
    );
    std::fs::write(dev.join("bin/python"), wrapper).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dev.join("bin/python"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let args = [
        "client",
        "openai",
        "weather::openai-chat::",
        "--install-dir",
        "dev-venv",
        "--format",
        "json",
    ];
    let o = run_ok(dir, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(marker.is_file(), "the driver ran with DIR/bin/python");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let version = doc["version"].as_str().unwrap();
    assert!(
        version.starts_with("installed in ") && version.ends_with("dev-venv"),
        "{version}"
    );
    assert!(!err.contains("installed openai into"), "{err}");
    let o = run(
        dir,
        &[
            "client",
            "openai",
            "weather::",
            "--install-dir",
            "no-such-dir",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such-dir"));
}

/// A project file of a built-in profile's name replaces it (`--list` says so, the run uses it),
/// and a local profile reaches the built-in files through `{{shipped}}`: here the reference
/// driver's profile (no install), whose local copy starts only where `{{shipped}}` holds the
/// written-out Python helper.
#[test]
fn a_local_profile_replaces_the_built_in_one() {
    let dir = bare_folder("anywhere-override");
    let builtin = tooltape::system::builtin("clients", "tooltape").unwrap();
    let driver = r#"command = ["{{tooltape}}", "client", "drive"]"#;
    assert!(builtin.contains(driver), "{builtin}");
    let ours = builtin
        .replace(
            driver,
            r#"command = ["sh", "-c", "test -f \"$0\" && exec \"$1\" client drive", "{{shipped}}/clients/python/tooltape_driver.py", "{{tooltape}}"]"#,
        )
        .replacen("description = \"", "description = \"ours: ", 1);
    std::fs::create_dir_all(dir.join("clients")).unwrap();
    std::fs::write(dir.join("clients/tooltape.toml"), &ours).unwrap();
    let o = run(&dir, &["client", "--list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("tooltape ") && l.ends_with("(replaces the built-in one)")),
        "{out}"
    );
    let o = run_ok(&dir, &["client", "tooltape", "weather::", "--format", "md"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ours: tooltape's reference driver"),
        "the local profile ran: {out}"
    );
    assert!(
        out.contains("10 passed") || out.contains(" passed"),
        "{out}"
    );
    // Where `{{shipped}}` names no written-out file, the local driver does not start.
    let broken = ours.replace("tooltape_driver.py", "no_such_helper.py");
    std::fs::write(dir.join("clients/tooltape.toml"), broken).unwrap();
    let o = run(&dir, &["client", "tooltape", "weather::openai-chat::"]);
    assert_ne!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// `init client --language python|node` writes a profile and a driver skeleton that uses
/// tooltape's driver helper (`tooltape_driver`, `tooltape-driver`), and it runs as written from
/// a folder holding only the binary: the Chat route passes, the others are not expressible.
#[test]
fn init_client_language_writes_a_driver_that_runs_with_the_helper() {
    let dir = bare_folder("anywhere-init-driver");
    for (language, file) in [("python", "driver.py"), ("node", "driver.mjs")] {
        let name = format!("ours-{language}");
        run_ok(&dir, &["init", "client", &name, "--language", language]);
        let driver = std::fs::read_to_string(dir.join("clients").join(&name).join(file)).unwrap();
        assert!(
            driver.contains("import tooltape_driver") || driver.contains("tooltape-driver"),
            "{driver}"
        );
        let o = run_ok(&dir, &["client", &name, "weather::", "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let cells: Vec<&str> = doc["trials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["cell"]["status"].as_str().unwrap())
            .collect();
        let passed = cells.iter().filter(|c| **c == "pass").count();
        assert!(passed >= 2, "{language}: {cells:?}");
        assert!(
            cells
                .iter()
                .all(|c| matches!(*c, "pass" | "not-applicable")),
            "{language}: {cells:?}"
        );
        let o = run(&dir, &["init", "client", &name, "--language", language]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "an existing profile is not replaced"
        );
    }
}
