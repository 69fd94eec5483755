//! Server profiles: routes named by their settings, the model file found by its pattern, and
//! the errors a profile gets, each at its `path:line:col`.

use super::load_server;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "tooltape-server-profile-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("servers")).unwrap();
    dir
}

const PROFILE: &str = r#"description = "a server"
version = "1.0"
body = { temperature = 0 }

[model]
file = "lib/*/site-packages/pkg/*.gguf"
package = "pkg==1.0"

[[routes]]
api = "chat"
model = "m"

[[routes]]
api = "chat"
model = "m"
name = "chat-parallel"
body = { parallel_tool_calls = true }

[[routes]]
api = "messages"
model = "m"
"#;

#[test]
fn routes_are_named_by_their_settings_and_carry_them() {
    let root = scratch("routes");
    std::fs::write(root.join("servers/s.toml"), PROFILE).unwrap();
    let p = load_server(&root, "s").unwrap();
    let names: Vec<String> = p.routes().iter().map(|r| r.name()).collect();
    assert_eq!(names, ["chat", "chat-parallel", "messages"]);
    assert!(p.routes().iter().all(|r| r.inbound == r.upstream));
    let body = p.body_for("chat-parallel");
    assert_eq!(
        serde_json::Value::Object(body),
        serde_json::json!({"temperature": 0, "parallel_tool_calls": true})
    );
    assert_eq!(
        serde_json::Value::Object(p.body_for("chat")),
        serde_json::json!({"temperature": 0})
    );
    assert!(p.install_dir().ends_with("server-s-1.0"));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_model_file_is_the_one_its_pattern_matches() {
    let root = scratch("model");
    std::fs::write(root.join("servers/s.toml"), PROFILE).unwrap();
    let p = load_server(&root, "s").unwrap();
    let dir = root.join("install");
    let err = p.model_file(&dir).unwrap_err();
    assert!(
        err.contains("no model file matches") && err.contains("pkg==1.0"),
        "{err}"
    );
    let pkg = dir.join("lib/python3.11/site-packages/pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("tiny.Q4.gguf"), "GGUF").unwrap();
    assert_eq!(p.model_file(&dir).unwrap(), Some(pkg.join("tiny.Q4.gguf")));
    std::fs::write(pkg.join("other.gguf"), "GGUF").unwrap();
    let err = p.model_file(&dir).unwrap_err();
    assert!(err.starts_with("2 files match"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_model_may_be_a_folder() {
    let root = scratch("model-dir");
    let text = PROFILE.replace("lib/*/site-packages/pkg/*.gguf", "model");
    std::fs::write(root.join("servers/s.toml"), text).unwrap();
    let p = load_server(&root, "s").unwrap();
    let dir = root.join("install");
    let err = p.model_file(&dir).unwrap_err();
    assert!(err.contains("no model file matches `model`"), "{err}");
    std::fs::create_dir_all(dir.join("model")).unwrap();
    std::fs::write(dir.join("model/config.json"), "{}").unwrap();
    assert_eq!(p.model_file(&dir).unwrap(), Some(dir.join("model")));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_bad_profile_is_refused_at_its_line() {
    let root = scratch("bad");
    let cases = [
        (
            PROFILE.replace("api = \"messages\"", "api = \"generate-content\""),
            "unknown api `generate-content`",
            19,
        ),
        (
            PROFILE.replace("name = \"chat-parallel\"\n", ""),
            "two routes are named `chat`",
            13,
        ),
        (
            PROFILE.replace("version = \"1.0\"", "version = \"1.0\"\nflavour = 2"),
            "unknown field `flavour`",
            3,
        ),
    ];
    for (text, want, line) in cases {
        std::fs::write(root.join("servers/s.toml"), &text).unwrap();
        let err = load_server(&root, "s").unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
        assert!(err.contains(&format!("s.toml:{line}:")), "{err}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn every_shipped_profile_loads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("servers"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.iter().any(|n| n == "vllm"), "{names:?}");
    for name in names {
        let p = load_server(root, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            p.profile.install.is_some() && p.profile.start.is_some(),
            "{name}"
        );
    }
}
