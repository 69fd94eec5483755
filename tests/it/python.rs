//! Support: the Python interpreter that runs the official SDK scripts and the driver loops, and
//! the tests of the packaged driver helpers. `TOOLTAPE_PYTHON` set (as `.ci/run` does, to its
//! pinned installs) names the interpreter; unset, `python3` is tried. A missing module fails the
//! test under `TOOLTAPE_PYTHON` or CI (`crate::needs`) and skips it with a message elsewhere.

/// The interpreter that imports `module`, or `None` (the caller skips) when `python3` lacks it
/// outside CI. Panics when `TOOLTAPE_PYTHON` is set or under CI and the interpreter lacks it.
#[track_caller]
pub(crate) fn python_with(module: &str) -> Option<String> {
    let required = std::env::var("TOOLTAPE_PYTHON").ok();
    let python = required.clone().unwrap_or_else(|| "python3".into());
    let has = std::process::Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    match (has, required) {
        (true, _) => Some(python),
        (false, Some(p)) => panic!(
            "TOOLTAPE_PYTHON={p}: `import {module}` fails; install it there (see .ci/run) or unset TOOLTAPE_PYTHON"
        ),
        (false, None) => {
            crate::needs::missing(
                &format!("the Python module `{module}` in `{python}`"),
                "set TOOLTAPE_PYTHON to an interpreter with it (.ci/run's venv has the SDKs)",
            );
            None
        }
    }
}

/// Runs `script` with `args` under `python` off the runtime's threads; its stdout as JSON.
pub(crate) async fn run_json(
    python: String,
    script: &'static str,
    args: Vec<String>,
) -> serde_json::Value {
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(&python)
            .arg("-c")
            .arg(script)
            .args(&args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK script failed:\n{stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// maturin, as `make wheel` installs it (`TOOLTAPE_MATURIN` names another); the wheel test is
/// ignored unless asked for, so its absence fails it.
fn maturin() -> std::path::PathBuf {
    if let Some(m) = std::env::var_os("TOOLTAPE_MATURIN") {
        return m.into();
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")))
        .expect("HOME or XDG_CACHE_HOME set (maturin is looked for in the cache)");
    let m = cache.join("tooltape/maturin-1.16.0/bin/maturin");
    assert!(
        m.is_file(),
        "no maturin at {}: `make wheel` installs it (or set TOOLTAPE_MATURIN)",
        m.display()
    );
    m
}

/// The wheel as `make wheel` builds it (pyproject.toml; here the dev profile, in a target folder
/// of its own beside the tests' so the binary they run is never rebuilt under them), installed
/// into a fresh venv: `tooltape` is on its PATH and the driver helper imports as
/// `tooltape_driver`.
#[test]
#[ignore = "needs maturin (`make wheel` installs it, or set TOOLTAPE_MATURIN) and compiles tooltape once more in a target folder of its own (~10 min the first time): opt-in, not in CI; run it with `cargo test --test it -- --ignored the_wheel`"]
fn the_wheel_installs_the_binary_and_the_driver_helper() {
    let maturin = maturin();
    let scratch = crate::scratch::Scratch::new("wheel");
    let bin = std::path::Path::new(crate::scratch::bin());
    let target = bin
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap()
        .join("wheel-test");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let run = |cmd: &mut std::process::Command| {
        let o = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{cmd:?}:\n{text}");
        text
    };
    let built = run(std::process::Command::new(&maturin)
        .args(["build", "--out"])
        .arg(scratch.join("wheels"))
        .arg("-m")
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", target));
    assert!(built.contains("Built wheel"), "{built}");
    let wheel = std::fs::read_dir(scratch.join("wheels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .unwrap();
    let venv = scratch.join("venv");
    run(std::process::Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv));
    run(std::process::Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&wheel));
    let version = run(std::process::Command::new(venv.join("bin/tooltape")).arg("--version"));
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");
    let script = "import tooltape, tooltape_driver\nassert callable(tooltape_driver.serve) and tooltape_driver.Unsupported\nprint(tooltape_driver.__file__ == tooltape.driver_helper())";
    let same = run(std::process::Command::new(venv.join("bin/python")).args(["-c", script]));
    assert_eq!(same.trim(), "True");
}

/// The Node.js driver helper is an npm package of tooltape's version: `npm pack --dry-run`
/// packs it with its one module. Without npm only `package.json` is checked, and the test says
/// it skipped the packing; under CI, which has npm, a missing npm fails it.
#[test]
fn the_node_helper_is_an_npm_package() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/node");
    let text = std::fs::read_to_string(folder.join("package.json")).unwrap();
    let package: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(package["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(package["name"], "tooltape-driver");
    let Some(npm) = crate::needs::program("npm", "install Node.js 20 with npm to pack the helper")
    else {
        return;
    };
    let o = std::process::Command::new(npm)
        .args(["pack", "--dry-run", "--json"])
        .current_dir(&folder)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let packed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<&str> = packed[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"tooltape_driver.mjs"), "{files:?}");
}
