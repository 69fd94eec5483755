//! The recording and import tests' small project (two cases, two tools) in a scratch folder, and
//! a recursive file listing.

use std::path::{Path, PathBuf};

use crate::scratch::{Scratch, repo};

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

/// A fresh project in a scratch folder `tooltape-recording-NAME-…`: providers.toml, two tools,
/// two small cases (`weather`: 8 trials on openai-chat and anthropic; `forecast`: 4 on
/// openai-responses and gemini).
pub fn project(name: &str) -> Scratch {
    let dir = Scratch::new(&format!("recording-{name}"));
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
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
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
