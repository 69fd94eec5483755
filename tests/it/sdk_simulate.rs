//! The official Python SDKs, default settings but the base URL, get tool calls from the
//! simulator (`tooltape simulate`'s server): `google-genai` on every path it uses by default.

use serde_json::json;
use tooltape::{SimConfig, Simulator};

/// `google-genai`: its default API version (`v1` once a base URL is set) and `v1beta`,
/// buffered and streamed (`alt=sse`), under each function-calling mode.
const GENAI_SCRIPT: &str = r#"
import json, sys
from google import genai
from google.genai import types
base = sys.argv[1]
tool = types.Tool(function_declarations=[types.FunctionDeclaration(name="get_weather",
    description="Current weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})])
out = {}
for version in ["default", "v1beta"]:
    opts = types.HttpOptions(base_url=base) if version == "default" else types.HttpOptions(base_url=base, api_version=version)
    client = genai.Client(api_key="test-key", http_options=opts)
    for mode in ["AUTO", "ANY", "NONE"]:
        cfg = types.GenerateContentConfig(tools=[tool], tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode=mode)))
        r = client.models.generate_content(model="gemini-2.5-flash", contents="What is the weather in Paris?", config=cfg)
        buffered = [{"name": c.name, "args": c.args} for c in (r.function_calls or [])]
        streamed = []
        for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="What is the weather in Paris?", config=cfg):
            streamed += [{"name": c.name, "args": c.args} for c in (chunk.function_calls or [])]
        out[f"{version}/{mode}"] = {"buffered": buffered, "stream": streamed}
print(json.dumps(out))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_google_genai_sdk_gets_tool_calls_with_default_settings() {
    let Some(python) = crate::python::python_with("google.genai") else {
        return;
    };
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let v = crate::python::run_json(python, GENAI_SCRIPT, vec![sim.base_url()]).await;
    let called = json!([{"name": "get_weather", "args": {"city": "example"}}]);
    for version in ["default", "v1beta"] {
        for (mode, want) in [("AUTO", &called), ("ANY", &called), ("NONE", &json!([]))] {
            let got = &v[format!("{version}/{mode}")];
            assert_eq!(&got["buffered"], want, "{version} {mode} buffered: {v}");
            assert_eq!(&got["stream"], want, "{version} {mode} streamed: {v}");
        }
    }
    assert_eq!(v.as_object().map(serde_json::Map::len), Some(6), "{v}");
}
