//! The official Python SDKs, default settings but the base URL, get tool calls from the
//! simulator (`tooltape simulate`'s server): `google-genai` on every path it uses by default;
//! `openai` (Chat Completions, Responses) and `anthropic` under every tool_choice family, buffered
//! and streamed; named scenarios picked by model suffix and header.

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
        r = client.models.generate_content(model="gemini-3.8-flash", contents="What is the weather in Paris?", config=cfg)
        buffered = [{"name": c.name, "args": c.args} for c in (r.function_calls or [])]
        streamed = []
        for chunk in client.models.generate_content_stream(model="gemini-3.8-flash", contents="What is the weather in Paris?", config=cfg):
            streamed += [{"name": c.name, "args": c.args} for c in (chunk.function_calls or [])]
        out[f"{version}/{mode}"] = {"buffered": buffered, "stream": streamed}
client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=base))
cfg = types.GenerateContentConfig(tools=[tool])
r = client.models.generate_content(model="gemini-3.8-flash~parallel", contents="What is the weather in Paris?", config=cfg)
out["parallel"] = [{"name": c.name, "args": c.args} for c in (r.function_calls or [])]
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
    // A named scenario by model suffix: with one tool, `parallel` calls it twice.
    let twice = json!([{"name": "get_weather", "args": {"city": "example"}}, {"name": "get_weather", "args": {"city": "example"}}]);
    assert_eq!(v["parallel"], twice, "{v}");
    assert_eq!(v.as_object().map(serde_json::Map::len), Some(7), "{v}");
}

/// `openai`: Chat Completions and Responses, buffered and streamed, under every tool_choice
/// family (auto, none, required, a named function, an allowed list); then two parallel calls
/// picked by the model-name suffix `~parallel`.
const OPENAI_SCRIPT: &str = r#"
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1] + "/v1", api_key="test-key")
params = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
chat_tools = [{"type": "function", "function": {"name": n, "description": "d", "parameters": params}} for n in ["get_weather", "get_time"]]
resp_tools = [{"type": "function", "name": n, "description": "d", "parameters": params} for n in ["get_weather", "get_time"]]
chat_choices = {"auto": "auto", "none": "none", "required": "required",
    "function": {"type": "function", "function": {"name": "get_time"}},
    "allowed": {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "get_time"}}]}}}
resp_choices = {"auto": "auto", "none": "none", "required": "required",
    "function": {"type": "function", "name": "get_time"},
    "allowed": {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]}}
msgs = [{"role": "user", "content": "What is the weather in Paris?"}]
def chat(model, choice, stream):
    if not stream:
        m = client.chat.completions.create(model=model, messages=msgs, tools=chat_tools, tool_choice=choice).choices[0].message
        return [{"name": c.function.name, "args": json.loads(c.function.arguments)} for c in (m.tool_calls or [])]
    calls = {}
    for chunk in client.chat.completions.create(model=model, messages=msgs, tools=chat_tools, tool_choice=choice, stream=True):
        for d in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            c = calls.setdefault(d.index, {"name": "", "args": ""})
            c["name"] += (d.function.name or "") if d.function else ""
            c["args"] += (d.function.arguments or "") if d.function else ""
    return [{"name": c["name"], "args": json.loads(c["args"])} for _, c in sorted(calls.items())]
def responses(model, choice, stream):
    if not stream:
        out = client.responses.create(model=model, input="What is the weather in Paris?", tools=resp_tools, tool_choice=choice).output
    else:
        out = []
        for ev in client.responses.create(model=model, input="What is the weather in Paris?", tools=resp_tools, tool_choice=choice, stream=True):
            if ev.type == "response.completed":
                out = ev.response.output
    return [{"name": o.name, "args": json.loads(o.arguments)} for o in out if o.type == "function_call"]
res = {}
for family in chat_choices:
    for stream in [False, True]:
        mode = "stream" if stream else "buffered"
        res[f"chat/{family}/{mode}"] = chat("gpt-4.1-mini", chat_choices[family], stream)
        res[f"responses/{family}/{mode}"] = responses("gpt-4.1-mini", resp_choices[family], stream)
res["chat/parallel"] = chat("gpt-4.1-mini~parallel", "auto", True)
res["responses/parallel"] = responses("gpt-4.1-mini~parallel", "auto", False)
print(json.dumps(res))
"#;

/// `anthropic`: Messages, buffered and streamed (the SDK's own stream accumulator), under every
/// tool_choice family (auto, any, a named tool, none); then parallel calls by the scenario header.
const ANTHROPIC_SCRIPT: &str = r#"
import json, sys
import anthropic
client = anthropic.Anthropic(base_url=sys.argv[1], api_key="test-key")
schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
tools = [{"name": n, "description": "d", "input_schema": schema} for n in ["get_weather", "get_time"]]
choices = {"auto": {"type": "auto"}, "any": {"type": "any"}, "tool": {"type": "tool", "name": "get_time"}, "none": {"type": "none"}}
msgs = [{"role": "user", "content": "What is the weather in Paris?"}]
def run(choice, stream, **extra):
    args = dict(model="claude-haiku-4-5", max_tokens=1024, tools=tools, tool_choice=choice, messages=msgs, **extra)
    if stream:
        with client.messages.stream(**args) as s:
            m = s.get_final_message()
    else:
        m = client.messages.create(**args)
    return [{"name": b.name, "args": b.input} for b in m.content if b.type == "tool_use"]
res = {}
for family, choice in choices.items():
    res[f"{family}/buffered"] = run(choice, False)
    res[f"{family}/stream"] = run(choice, True)
res["parallel"] = run({"type": "auto"}, True, extra_headers={"x-tooltape-scenario": "parallel"})
print(json.dumps(res))
"#;

fn one(name: &str) -> serde_json::Value {
    json!([{"name": name, "args": {"city": "example"}}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_sdk_gets_tool_calls_under_every_tool_choice() {
    let Some(python) = crate::python::python_with("openai") else {
        return;
    };
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let v = crate::python::run_json(python, OPENAI_SCRIPT, vec![sim.base_url()]).await;
    for api in ["chat", "responses"] {
        for (family, want) in [
            ("auto", one("get_weather")),
            ("none", json!([])),
            ("required", one("get_weather")),
            ("function", one("get_time")),
            ("allowed", one("get_time")),
        ] {
            for mode in ["buffered", "stream"] {
                assert_eq!(
                    v[format!("{api}/{family}/{mode}")],
                    want,
                    "{api} {family} {mode}: {v}"
                );
            }
        }
        let both = json!([{"name": "get_weather", "args": {"city": "example"}}, {"name": "get_time", "args": {"city": "example"}}]);
        assert_eq!(v[format!("{api}/parallel")], both, "{api} ~parallel: {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_anthropic_sdk_gets_tool_calls_under_every_tool_choice() {
    let Some(python) = crate::python::python_with("anthropic") else {
        return;
    };
    let sim = Simulator::start(SimConfig::default()).await.unwrap();
    let v = crate::python::run_json(python, ANTHROPIC_SCRIPT, vec![sim.base_url()]).await;
    for (family, want) in [
        ("auto", one("get_weather")),
        ("any", one("get_weather")),
        ("tool", one("get_time")),
        ("none", json!([])),
    ] {
        for mode in ["buffered", "stream"] {
            assert_eq!(v[format!("{family}/{mode}")], want, "{family} {mode}: {v}");
        }
    }
    let both = json!([{"name": "get_weather", "args": {"city": "example"}}, {"name": "get_time", "args": {"city": "example"}}]);
    assert_eq!(v["parallel"], both, "{v}");
}

/// docs/simulate.md's scenario table is the simulator's, row for row.
#[test]
fn the_documented_scenarios_are_the_simulators() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/simulate.md")).unwrap();
    let region = doc
        .split("<!-- scenarios:begin -->")
        .nth(1)
        .and_then(|r| r.split("<!-- scenarios:end -->").next())
        .expect("docs/simulate.md:1: no <!-- scenarios:begin --> … end region");
    let rows: Vec<String> = region
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(str::to_string)
        .collect();
    let want: Vec<String> = tooltape::simulate::named_scenarios()
        .iter()
        .map(|(n, what)| format!("| `{n}` | {what} |"))
        .collect();
    assert_eq!(
        rows, want,
        "docs/simulate.md: the scenario table differs from src/simulate/named.rs; fix the table"
    );
}
