//! Helpers for the recording and import tests: a small temporary project and the built binary.

use std::path::PathBuf;

/// The built `tooltape` binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tooltape")
}

/// The repository root (for `cases/providers.toml` and tool files).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub const WEATHER: &str = r#"description = "Weather lookup"
tools = ["get_weather"]
providers = ["openai-chat", "anthropic"]
choices = ["auto", "required"]

[[messages]]
role = "user"
content = "What is the weather in Paris right now?"

[simulate]
calls = [{ name = "get_weather", arguments = { city = "Paris" } }]
"#;

pub const FORECAST: &str = r#"description = "Forecast lookup"
tools = ["get_weather"]
providers = ["openai-responses", "gemini"]
choices = ["auto"]

[[messages]]
role = "user"
content = "Will it rain in Lyon tomorrow?"
"#;

/// A fresh project under the system temp folder: providers.toml, two tools, two small cases
/// (`weather`: 8 trials on openai-chat and anthropic; `forecast`: 4 on openai-responses and gemini).
pub fn project(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("tooltape-recording-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cases/tools")).unwrap();
    std::fs::copy(
        repo().join("cases/providers.toml"),
        dir.join("cases/providers.toml"),
    )
    .unwrap();
    for tool in ["get_weather", "get_time"] {
        let file = format!("cases/tools/{tool}.json");
        std::fs::copy(repo().join(&file), dir.join(&file)).unwrap();
    }
    std::fs::write(dir.join("cases/weather.toml"), WEATHER).unwrap();
    std::fs::write(dir.join("cases/forecast.toml"), FORECAST).unwrap();
    dir
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
