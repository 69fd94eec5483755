//! Support: the Python interpreter that runs the official SDK scripts. `TOOLTAPE_PYTHON` set
//! (as `.ci/run` does, to its pinned installs) makes the SDK a requirement; unset, `python3` is
//! tried and a test without the SDK is skipped with a message.

/// The interpreter that imports `module`, or `None` (the caller skips) when `TOOLTAPE_PYTHON` is
/// unset and `python3` lacks it. Panics when `TOOLTAPE_PYTHON` is set and lacks it.
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
            eprintln!(
                "skipped: `{python} -c 'import {module}'` fails; set TOOLTAPE_PYTHON to an interpreter with it (see .ci/run)"
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
